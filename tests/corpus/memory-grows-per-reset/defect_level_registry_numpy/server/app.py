"""Find the highest point of a procedurally generated 64x64 terrain; 1.0 if right, else 0.0.

Generated levels are registered in a class-level registry by a running level id, so that a level
can be looked up again (replays, curriculum statistics).
"""
import itertools
from typing import Any, Dict, List, Optional
from uuid import uuid4

import numpy as np

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

SIZE = 64


class LevelRegistry:
    levels: Dict[int, np.ndarray] = {}
    _ids = itertools.count()

    @classmethod
    def register(cls, heights: np.ndarray) -> int:
        level_id = next(cls._ids)
        cls.levels[level_id] = heights
        return level_id


class PeakAction(Action):
    row: int
    col: int


class TerrainObservation(Observation):
    # coarse view: the row and column maxima, enough to locate the peak
    row_max: List[int] = []
    col_max: List[int] = []


class TerrainEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._level_id, self._done = None, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TerrainObservation:
        rng = np.random.default_rng(seed)
        heights = rng.permutation(SIZE * SIZE).reshape(SIZE, SIZE).astype(np.int64)
        self._level_id, self._done = LevelRegistry.register(heights), False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TerrainObservation(row_max=heights.max(1).tolist(),
                                  col_max=heights.max(0).tolist(), reward=0.0)

    def step(self, action: PeakAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TerrainObservation:
        if self._level_id is None or self._done:
            return TerrainObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        heights = LevelRegistry.levels[self._level_id]
        r, c = np.unravel_index(int(heights.argmax()), heights.shape)
        ok = (action.row, action.col) == (int(r), int(c))
        return TerrainObservation(done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    rm, cm = observation["row_max"], observation["col_max"]
    return {"row": rm.index(max(rm)), "col": cm.index(max(cm))}


app = create_app(TerrainEnv, PeakAction, TerrainObservation, env_name="terrain_peak",
                 max_concurrent_envs=8)
