"""Median of an even-length list of integers, with the tie rule stated in the prompt."""
import random
import statistics
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class MedianAction(Action):
    answer: float = 0.0


class MedianObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    xs = rng.sample(range(1, 200), 2 * rng.randint(3, 6))  # even length: the rule for ties matters
    return {"numbers": xs,
            "prompt": "Return the median of the numbers. For an even count, return the LOWER of the two "
                      "middle values (an element of the list, an integer)."}


def expected(xs: List[int]) -> float:
    return statistics.median_low(xs)


def grade(action, task):
    ok = action.answer == expected(task["numbers"])
    return (1.0 if ok else 0.0), ("correct" if ok else "incorrect")


class MedianEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MedianObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return MedianObservation(task=public(self._task))

    def step(self, action: MedianAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MedianObservation:
        if self._task is None or self._done:
            return MedianObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return MedianObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"answer": float(expected(observation["task"]["numbers"]))}


app = create_app(MedianEnv, MedianAction, MedianObservation, env_name="median_rule",
                 max_concurrent_envs=8)
