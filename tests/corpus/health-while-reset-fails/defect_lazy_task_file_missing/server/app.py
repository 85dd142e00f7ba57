"""Guess the number (1..100) with higher/lower hints, 7 guesses.

Defect: the task bank is loaded lazily on the first reset from data/tasks.jsonl, which is not shipped.
"""
import json
import random
from pathlib import Path
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 7
TASK_FILE = Path(__file__).resolve().parent.parent / "data" / "tasks.jsonl"
_TASKS: Optional[List[int]] = None


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=100)


class GuessObservation(Observation):
    low: int = 1
    high: int = 100
    feedback: str = ""


def load_tasks() -> List[int]:
    global _TASKS
    if _TASKS is None:
        with TASK_FILE.open() as f:
            _TASKS = [json.loads(line)["target"] for line in f if line.strip()]
    return _TASKS


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._target: Optional[int] = None
        self._low, self._high, self._done = 1, 100, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        self._target = random.Random(seed).choice(load_tasks())
        self._low, self._high, self._done = 1, 100, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(feedback="Guess a number from 1 to 100.")

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        g = action.guess
        if g == self._target:
            self._done = True
            return self._obs("Correct!", 1.0)
        if g < self._target:
            self._low, text = max(self._low, g + 1), "Higher."
        else:
            self._high, text = min(self._high, g - 1), "Lower."
        self._done = self._state.step_count >= MAX_GUESSES
        return self._obs(text + (" Out of guesses." if self._done else ""), 0.0)

    def _obs(self, text: str, reward: Optional[float]) -> GuessObservation:
        return GuessObservation(low=self._low, high=self._high, feedback=text,
                                done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_lazy_missing",
                 max_concurrent_envs=8)
