"""The realworld_timing test environment: write the clue backwards.

Clean: every observation carries `elapsed_s` (seconds since reset) and `request_id` (a
fresh uuid), which differ on every run even with a single session; nothing else varies and
sessions are isolated. Not an isolation or determinism defect.
"""

import random
import time
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import TimingAction, TimingObservation

MAX_STEPS = 3
PROMPT = "Write the clue backwards."
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


class TimingEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._target: Optional[str] = None
        self._done = False
        self._started = time.monotonic()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TimingObservation:
        self._target = random.Random(seed).choice(WORDS)
        self._done = False
        self._started = time.monotonic()
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._observe()

    def step(self, action: TimingAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TimingObservation:
        if self._target is None:
            return self._observe("call reset() first", done=True)
        if self._done:
            return self._observe("the episode is over", done=True)
        self._state.step_count += 1
        correct = action.answer == self._target
        self._done = correct or self._state.step_count >= MAX_STEPS
        return self._observe("correct" if correct else "wrong", self._done,
                             1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state

    def _observe(self, feedback: str = "", done: bool = False, reward: Optional[float] = 0.0,
                 **extra: Any) -> TimingObservation:
        clue = self._target[::-1] if self._target else ""
        return TimingObservation(
            prompt=PROMPT, clue=clue, feedback=feedback, done=done, reward=reward,
            elapsed_s=round(time.monotonic() - self._started, 6), request_id=uuid4().hex,
            **extra)
