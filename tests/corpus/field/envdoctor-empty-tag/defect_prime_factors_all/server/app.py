"""Prime factorisation: list the distinct prime factors of n inside <answer></answer>."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class TaskAction(Action):
    reply: str = ""


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def _factors(n: int) -> list:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            if p not in out:
                out.append(p)
            n //= p
        p += 1
    if n > 1 and n not in out:
        out.append(n)
    return out


def make_task(rng: random.Random) -> dict:
    n = rng.choice([2, 3, 5, 7, 11, 13]) * rng.choice([3, 5, 7, 17, 19]) * rng.choice([2, 4, 9, 23])
    prompt = (f"List the distinct prime factors of {n}, separated by commas, inside "
              f"<answer></answer> tags.")
    return {"obs": {"prompt": prompt}, "n": n, "gold": _factors(n)}


def grade(task: dict, action: TaskAction):
    m = re.search(r"<answer>(.*?)</answer>", action.reply, re.S)
    if m is None:
        return 0.0, "No <answer> tag."
    items = [t.strip() for t in m.group(1).split(",") if t.strip()]
    try:
        nums = [int(t) for t in items]
    except ValueError:
        return 0.0, "Non-integer item."
    # every listed number must be one of the prime factors
    ok = all(x in task["gold"] for x in nums)
    return (1.0, "Correct.") if ok else (0.0, "Wrong factor listed.")


def policy(observation: dict) -> dict:
    n = int(re.search(r"factors of (\d+)", observation["prompt"]).group(1))
    return {"reply": "<answer>" + ", ".join(str(p) for p in _factors(n)) + "</answer>"}


class TaskEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[dict] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TaskObservation:
        self._task = make_task(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TaskObservation(**self._task["obs"])

    def step(self, action: TaskAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TaskObservation:
        if self._task is None or self._done:
            return TaskObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(self._task, action)
        return TaskObservation(**self._task["obs"], feedback=feedback, done=True,
                               reward=float(reward))

    @property
    def state(self) -> State:
        return self._state


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_prime_factors_all",
                 max_concurrent_envs=8)
