"""The flood test environment: every `reset` and `step` answers a 10 MB observation.

Otherwise well behaved (seeded, honours `episode_id`, ends after 5 steps): the only defect is
the size of what it sends, which envkit eval stops at (OBSERVATION_TOO_LARGE) and validate must
stop at too (EK432) instead of playing its whole schedule.
"""

from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from models import FloodAction, FloodObservation

MAX_STEPS = 5
PADDING = "x" * (10 * 1000 * 1000)  # 10 MB, built once


class FloodEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> FloodObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return FloodObservation(prompt="Say a word.", padding=PADDING, done=False, reward=0.0)

    def step(self, action: FloodAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> FloodObservation:
        self._state.step_count += 1
        done = self._state.step_count >= MAX_STEPS
        return FloodObservation(prompt="Say a word.", padding=PADDING, done=done, reward=0.0)

    @property
    def state(self) -> State:
        return self._state
