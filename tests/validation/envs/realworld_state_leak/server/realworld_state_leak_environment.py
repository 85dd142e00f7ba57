"""The realworld_state_leak test environment: write the clue backwards.

Defect (solution leakage through `state`): the answer is a field of the state
(`GET /state`, the WebSocket `state` message), which an agent can read.

`STATE_LEAK_MODE=format` (like dipg_safety_env, docs/realworld.md): the state field is
`expected_answer` and only `<answer>WORD</answer>` scores, so submitting the bare field does
not score and only the field's name gives the answer away (EK512, not EK509).
"""

import os
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import StateLeakAction, StateLeakObservation

MAX_STEPS = 3
PROMPT = "Write the clue backwards."
WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor")


def _formatted() -> bool:
    return os.environ.get("STATE_LEAK_MODE") == "format"


class StateLeakEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = False

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._target: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> StateLeakObservation:
        self._target = random.Random(seed).choice(WORDS)
        self._done = False
        # DEFECT: the answer is part of the state.
        field = "expected_answer" if _formatted() else "target"
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0,
                            **{field: self._target})
        return self._observe()

    def step(self, action: StateLeakAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> StateLeakObservation:
        if self._target is None:
            return self._observe("call reset() first", done=True)
        if self._done:
            return self._observe("the episode is over", done=True)
        self._state.step_count += 1
        wanted = f"<answer>{self._target}</answer>" if _formatted() else self._target
        correct = action.answer == wanted
        self._done = correct or self._state.step_count >= MAX_STEPS
        return self._observe("correct" if correct else "wrong", self._done,
                             1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state

    def _observe(self, feedback: str = "", done: bool = False, reward: Optional[float] = 0.0,
                 **extra: Any) -> StateLeakObservation:
        clue = self._target[::-1] if self._target else ""
        return StateLeakObservation(
            prompt=PROMPT, clue=clue, feedback=feedback, done=done, reward=reward, **extra)
