"""The declared_relative test environment (imports relative to its package): write the clue backwards.

Clean: there is one task and no randomness, so every reset is identical across seeds and
within a seed. Ignoring `seed` is right here; it is not a "seed ignored" defect.
"""

from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from ..models import FixedAction, FixedObservation

MAX_STEPS = 3
PROMPT = "Write the clue backwards."
WORD = "openenv"


class FixedEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._target: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> FixedObservation:
        self._target = WORD  # one task: nothing to draw, so `seed` has nothing to do
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._observe()

    def step(self, action: FixedAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> FixedObservation:
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
                 **extra: Any) -> FixedObservation:
        clue = self._target[::-1] if self._target else ""
        return FixedObservation(
            prompt=PROMPT, clue=clue, feedback=feedback, done=done, reward=reward, **extra)
