"""Find the hidden number (1..64) with higher/lower hints, 7 guesses; async-native env.

Defect: the step counter lives in a module-level threading.local, on the belief that every
session runs in its own worker thread (true for sync environments: the server gives each
session a single-thread executor). But this env overrides reset_async/step_async, which the
server awaits directly on its event loop, and the server reads `state` on the event loop too,
so every session uses the event-loop thread's one counter: a reset in any session zeroes it and
a step in any session bumps it. A session alone counts correctly. Observations, rewards and
`done` use the instance's own guess counter, so only state.step_count is wrong.
"""
import random
import threading
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_GUESSES = 7
_LOCAL = threading.local()  # per-session-thread bookkeeping


class GuessAction(Action):
    guess: int = Field(..., ge=1, le=64)


class GuessObservation(Observation):
    low: int = 1
    high: int = 64
    guesses_left: int = MAX_GUESSES
    feedback: str = ""


class AsyncGuessEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._episode_id = str(uuid4())
        self._target: Optional[int] = None
        self._low, self._high, self._used, self._done = 1, 64, 0, True

    # --- the logic (no I/O, so the async methods run it inline on the event loop) -------------
    def _reset(self, seed: Optional[int], episode_id: Optional[str]) -> GuessObservation:
        self._target = random.Random(seed).randint(1, 64)
        self._low, self._high, self._used, self._done = 1, 64, 0, False
        self._episode_id = episode_id or str(uuid4())
        _LOCAL.steps = 0
        return GuessObservation(feedback="Guess a number from 1 to 64.", reward=0.0)

    def _step(self, action: GuessAction) -> GuessObservation:
        if self._target is None or self._done:
            return GuessObservation(feedback="Episode is over; call reset().", done=True,
                                    reward=0.0)
        _LOCAL.steps = getattr(_LOCAL, "steps", 0) + 1
        self._used += 1
        g = action.guess
        if g == self._target:
            self._done = True
            return GuessObservation(low=g, high=g, guesses_left=MAX_GUESSES - self._used,
                                    feedback="Correct!", done=True, reward=1.0)
        if g < self._target:
            self._low, text = max(self._low, g + 1), "Higher."
        else:
            self._high, text = min(self._high, g - 1), "Lower."
        self._done = self._used >= MAX_GUESSES
        return GuessObservation(low=self._low, high=self._high,
                                guesses_left=MAX_GUESSES - self._used, feedback=text,
                                done=self._done, reward=0.0)

    # --- sync API ---------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GuessObservation:
        return self._reset(seed, episode_id)

    def step(self, action: GuessAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GuessObservation:
        return self._step(action)

    # --- async API (preferred by the WebSocket server) -------------------------------------
    async def reset_async(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
                          **kwargs: Any) -> GuessObservation:
        return self._reset(seed, episode_id)

    async def step_async(self, action: GuessAction, timeout_s: Optional[float] = None,
                         **kwargs: Any) -> GuessObservation:
        return self._step(action)

    @property
    def state(self) -> State:
        return State(episode_id=self._episode_id, step_count=getattr(_LOCAL, "steps", 0))


def policy(observation: dict) -> dict:
    return {"guess": (observation.get("low", 1) + observation.get("high", 64)) // 2}


app = create_app(AsyncGuessEnv, GuessAction, GuessObservation, env_name="guess_async_threadlocal",
                 max_concurrent_envs=8)
