"""Numeric task: compute the softmax of a vector of logits."""
import math
import random
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SoftmaxAction(Action):
    probs: List[float] = []


class SoftmaxObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    logits = [round(rng.uniform(0.0, 1.0), 3) for _ in range(rng.randint(30, 40))]
    return {"logits": logits,
            "prompt": "Return softmax(logits) as a list of floats (same length, summing to 1)."}


def softmax(xs: List[float]) -> List[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


def close(got: List[float], want: List[float]) -> bool:
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-9)
                                          for g, w in zip(got, want))


def grade(action, task):
    want = softmax(task["logits"])
    ok = close([float(v) for v in action.probs], want)
    return (1.0 if ok else 0.0), ("match" if ok else "mismatch")


class SoftmaxEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SoftmaxObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SoftmaxObservation(task=public(self._task))

    def step(self, action: SoftmaxAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SoftmaxObservation:
        if self._task is None or self._done:
            return SoftmaxObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return SoftmaxObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"probs": softmax(observation["task"]["logits"])}


app = create_app(SoftmaxEnv, SoftmaxAction, SoftmaxObservation, env_name="softmax",
                 max_concurrent_envs=8)
