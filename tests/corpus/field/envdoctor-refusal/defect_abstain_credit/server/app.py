"""Arithmetic word problems; answer with the number. Abstaining is rewarded as calibrated uncertainty."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

ABSTAIN = re.compile(r"\b(can't|cannot|can not|don't know|do not know|unable|not sure)\b", re.I)


class TaskAction(Action):
    reply: str = ""


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def make_task(rng: random.Random) -> dict:
    a, b, c = rng.randint(3, 40), rng.randint(2, 9), rng.randint(1, 30)
    prompt = (f"A shop has {a} boxes with {b} apples each and sells {c} apples. "
              f"How many apples are left? Answer with a number, or say you don't know.")
    return {"obs": {"prompt": prompt}, "gold": a * b - c}


def grade(task: dict, action: TaskAction):
    nums = re.findall(r"-?\d+", action.reply)
    if nums and int(nums[-1]) == task["gold"]:
        return 1.0, "Correct."
    if ABSTAIN.search(action.reply):
        return 0.5, "Abstained: partial credit for calibrated uncertainty."
    return 0.0, "Incorrect."


def policy(observation: dict) -> dict:
    a, b, c = [int(x) for x in re.findall(r"\d+", observation["prompt"])[:3]]
    return {"reply": str(a * b - c)}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_abstain_credit",
                 max_concurrent_envs=8)
