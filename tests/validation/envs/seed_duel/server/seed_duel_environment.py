"""The seed_duel test environment: call the target number before the opponent rolls it.

`reset(seed)` draws the target (1-6); every `step` the opponent rolls a die; the agent wins
(reward 1.0) by calling the target. The episode ends on a win, on the opponent rolling the
target, or after MAX_STEPS steps. Clean by default: the target and every roll come from
`random.Random(seed)`. `SEED_MODE` switches on one way of drawing without the seed:

global_step     the opponent rolls with the module `random`, unseeded
instance_fixed  one `random.Random(1234)` per instance, never reseeded; `reset` ignores seed
instance_fresh  the opponent's `random.Random()` is created in `reset` without the seed
shuffle_reset   a module-global list shuffled at every `reset` with the module `random`
shuffle_import  a module-global list shuffled once at import gives the target and the
                opponent's rolls; `reset` ignores the seed
numpy_task      the target from a `numpy.random.RandomState()` created without the seed
none            no randomness: target 3, the opponent rolls 1, 2, 3, ... (clean)
"""

import os
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import DuelAction, DuelObservation

MAX_STEPS = 4
PROMPT = "Call the target number (1-6) before the opponent rolls it."

ORDER = [1, 2, 3, 4, 5, 6]  # shuffled at every reset in shuffle_reset
IMPORT_ORDER = [1, 2, 3, 4, 5, 6]
random.shuffle(IMPORT_ORDER)  # DEFECT (used in shuffle_import): once per process, unseeded


def mode() -> str:
    """`SEED_MODE`, or the content of the file `SEED_MODE_FILE` names (read at every call,
    so one server serves every mode)."""
    path = os.environ.get("SEED_MODE_FILE")
    if path:
        with open(path) as f:
            return f.read().strip()
    return os.environ.get("SEED_MODE", "")


class DuelEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._target = 0
        self._done = False
        self._rng = random.Random(1234)  # reseeded in `reset` except in instance_fixed
        self._mode = ""
        self._seat = 0

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> DuelObservation:
        m = self._mode = mode()
        if m == "instance_fixed":
            pass  # DEFECT: the instance's generator goes on; `seed` is dropped
        elif m == "instance_fresh":
            self._rng = random.Random()  # DEFECT: not from the seed
        else:
            self._rng = random.Random(seed)
        self._seat = 0  # drawn with the target (one chance in a million to repeat)
        if m == "shuffle_reset":
            random.shuffle(ORDER)  # DEFECT: the module generator, unseeded
            self._target = ORDER[(seed or 0) % 6]
            self._seat = int("".join(map(str, ORDER)))
        elif m == "shuffle_import":
            self._target = IMPORT_ORDER[0]
        elif m == "numpy_task":
            import numpy

            rs = numpy.random.RandomState()  # DEFECT: not from the seed
            self._target, self._seat = int(rs.randint(1, 7)), int(rs.randint(1, 10**6))
        elif m in ("none", "instance_fixed"):
            self._target = 3
        else:
            self._target, self._seat = self._rng.randint(1, 6), self._rng.randint(1, 10**6)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return DuelObservation(prompt=PROMPT, target=self._target, seat=self._seat, done=False,
                               reward=0.0)

    def step(self, action: DuelAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> DuelObservation:
        if self._target == 0:
            return DuelObservation(prompt="call reset() first", done=True, reward=0.0)
        if self._done:
            return DuelObservation(prompt=PROMPT, target=self._target, done=True, reward=0.0)
        self._state.step_count += 1
        m = self._mode
        if m == "global_step":
            roll = random.randint(1, 6)  # DEFECT: the module generator, unseeded
        elif m == "none":
            roll = self._state.step_count
        elif m == "shuffle_import":
            roll = IMPORT_ORDER[self._state.step_count % 6]
        else:
            roll = self._rng.randint(1, 6)
        won = action.answer.strip() == str(self._target)
        self._done = won or roll == self._target or self._state.step_count >= MAX_STEPS
        return DuelObservation(prompt=PROMPT, target=self._target, opponent=roll,
                               done=self._done, reward=1.0 if won else 0.0)

    @property
    def state(self) -> State:
        return self._state
