"""Point at the brightest cell of a 16x16 screen; 1.0 if right, else 0.0.

Each reset allocates a fresh 4-frame 256x256 float32 frame stack (1 MB) that replaces the previous
episode's on the instance; a module-level counter only counts resets.
"""
from typing import Any, List, Optional
from uuid import uuid4

import numpy as np

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

RESETS = 0


class PointAction(Action):
    row: int
    col: int


class ScreenObservation(Observation):
    screen: List[List[int]] = []


class ScreenEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._frames: Optional[np.ndarray] = None
        self._done = True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ScreenObservation:
        global RESETS
        RESETS += 1
        rng = np.random.default_rng(seed)
        self._frames = np.zeros((4, 256, 256), dtype=np.float32)  # replaces the old stack
        self._frames[-1] = rng.random((256, 256), dtype=np.float32)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        self._done = False
        return ScreenObservation(screen=self._screen(), reward=0.0)

    def _screen(self) -> List[List[int]]:
        small = self._frames[-1].reshape(16, 16, 16, 16).max(axis=(1, 3))
        return (small * 1000).astype(int).tolist()

    def step(self, action: PointAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ScreenObservation:
        if self._frames is None or self._done:
            return ScreenObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        small = np.array(self._screen())
        r, c = np.unravel_index(int(small.argmax()), small.shape)
        ok = (action.row, action.col) == (int(r), int(c))
        return ScreenObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    s = np.array(observation["screen"])
    r, c = np.unravel_index(int(s.argmax()), s.shape)
    return {"row": int(r), "col": int(c)}


app = create_app(ScreenEnv, PointAction, ScreenObservation, env_name="bright_cell",
                 max_concurrent_envs=8)
