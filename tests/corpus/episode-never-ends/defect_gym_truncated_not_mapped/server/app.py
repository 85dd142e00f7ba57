"""Guess the number, ported from a gymnasium env: a core game with a 7-step TimeLimit, wrapped.

Defect: the wrapper sets done=terminated and drops `truncated`, so an episode that hits the
time limit without finding the number is never reported done (the core keeps answering).
"""
import random
from typing import Any, Dict, Optional, Tuple
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class GuessGame:
    """gymnasium-like: step -> (obs, reward, terminated, truncated, info)."""

    max_episode_steps = 7

    def reset(self, seed: Optional[int]) -> Dict[str, int]:
        self.target, self.low, self.high, self.t = random.Random(seed).randint(1, 100), 1, 100, 0
        return {"low": 1, "high": 100}

    def step(self, g: int) -> Tuple[Dict[str, int], float, bool, bool, Dict[str, str]]:
        self.t += 1
        if g == self.target:
            return {"low": g, "high": g}, 1.0, True, False, {"msg": "Correct!"}
        if g < self.target:
            self.low, msg = max(self.low, g + 1), "Higher."
        else:
            self.high, msg = min(self.high, g - 1), "Lower."
        truncated = self.t >= self.max_episode_steps
        return {"low": self.low, "high": self.high}, 0.0, False, truncated, {"msg": msg}


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=100)


class GuessObservation(Observation):
    low: int = 1
    high: int = 100
    feedback: str = ""


class GuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._game = GuessGame()
        self._game.reset(None)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        obs = self._game.reset(seed)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GuessObservation(**obs, feedback="Guess a number from 1 to 100.", reward=0.0)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        self._state.step_count += 1
        obs, reward, terminated, truncated, info = self._game.step(action.guess)
        return GuessObservation(**obs, feedback=info["msg"], done=terminated, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"guess": (observation["low"] + observation["high"]) // 2}


app = create_app(GuessEnv, GuessAction, GuessObservation, env_name="guess_gym_port",
                 max_concurrent_envs=8)
