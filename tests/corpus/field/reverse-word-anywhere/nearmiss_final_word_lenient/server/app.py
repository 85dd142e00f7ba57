"""Reverse the word; prose around the answer is tolerated, the final word is graded."""
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

WORDS = ["stressed", "planet", "garden", "bottle", "kitchen", "thunder", "marble", "pencil",
         "orbit", "window", "lantern", "copper"]


def make_task(rng: random.Random) -> dict:
    word = rng.choice(WORDS)
    return {"obs": {"prompt": f"Reverse this word: {word}"}, "gold": word[::-1]}


def _word(observation: dict) -> str:
    return observation["prompt"].rsplit(" ", 1)[1]


def grade(task: dict, action: TaskAction):
    tokens = re.findall(r"[a-z]+", action.reply.lower())
    ok = bool(tokens) and tokens[-1] == task["gold"]
    return (1.0, "Correct.") if ok else (0.0, "Incorrect.")


def policy(observation: dict) -> dict:
    return {"reply": f"The reversed word is {_word(observation)[::-1].upper()}."}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="nearmiss_final_word_lenient",
                 max_concurrent_envs=8)
