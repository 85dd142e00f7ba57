"""Palindrome extraction answered as a JSON object with several fields."""
import json
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SENTENCES = [
    "anna saw a racecar at noon near the kayak club",
    "the level of the civic center rose by noon",
    "mom and dad took the radar to the refer desk",
    "wow said otto as the rotor spun past the stats",
]


class TaskAction(Action):
    words: list = []
    count: int = 0


class TaskObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def _palindromes(sentence: str) -> list:
    return sorted({w for w in sentence.split() if len(w) > 2 and w == w[::-1]})


def make_task(rng: random.Random) -> dict:
    s = SENTENCES[rng.randrange(len(SENTENCES))]
    prompt = (f"Sentence: {s}\nReturn every word of 3+ letters that is a palindrome: "
              f'{{"words": [...], "count": <number of palindromes>}}')
    return {"obs": {"prompt": prompt}, "gold": _palindromes(s)}


def grade(task: dict, action: TaskAction):
    found = {str(w).strip().lower() for w in action.words}
    gold = set(task["gold"])
    recall = len(found & gold) / len(gold)
    return recall, f"recall {recall:.2f}"


def policy(observation: dict) -> dict:
    s = observation["prompt"].split("\n")[0][len("Sentence: "):]
    p = _palindromes(s)
    return {"words": p, "count": len(p)}


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


app = create_app(TaskEnv, TaskAction, TaskObservation, env_name="defect_palindrome_recall_only",
                 max_concurrent_envs=8)
