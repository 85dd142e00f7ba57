"""Count the trailing zeros of n! for n between 30 and 600."""
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class ZerosAction(Action):
    answer: int = -1


class ZerosObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def reference(n: int) -> int:
    """Trailing zeros of n!: one per factor 5 in 1..n."""
    return n // 5


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    n = random.Random(seed).randint(30, 600)
    return {"n": n, "prompt": f"How many trailing zeros does {n}! (n factorial) have? Answer with an integer."}


def grade(action, task):
    ok = action.answer == reference(task["n"])
    return (1.0 if ok else 0.0), ("correct" if ok else "incorrect")


class ZerosEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ZerosObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ZerosObservation(task=public(self._task))

    def step(self, action: ZerosAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ZerosObservation:
        if self._task is None or self._done:
            return ZerosObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return ZerosObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"answer": reference(observation["task"]["n"])}


app = create_app(ZerosEnv, ZerosAction, ZerosObservation, env_name="factorial_zeros",
                 max_concurrent_envs=8)
