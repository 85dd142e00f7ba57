"""Sentiment classification of a product review: positive, negative or neutral."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

REVIEWS = [
    ("Arrived broken and support never answered. Waste of money.", "negative"),
    ("Does what it says. Nothing special, nothing wrong.", "neutral"),
    ("Absolutely love it, best purchase this year!", "positive"),
    ("The strap snapped after two days; very disappointed.", "negative"),
    ("Great sound, comfortable, battery lasts forever.", "positive"),
]


class TaskAction(Action):
    reply: str = ""


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def make_task(rng: random.Random) -> dict:
    text, label = REVIEWS[rng.randrange(len(REVIEWS))]
    return {"obs": {"prompt": f"Review: {text}\nIs the sentiment positive, negative or neutral?"},
            "gold": label}


def grade(task: dict, action: TaskAction):
    ok = task["gold"] in action.reply.lower()
    return (1.0, "Correct.") if ok else (0.0, "Incorrect.")


def policy(observation: dict) -> dict:
    text = observation["prompt"].split("\n")[0][len("Review: "):]
    return {"reply": dict(REVIEWS)[text]}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_sentiment_label_mentions",
                 max_concurrent_envs=8)
