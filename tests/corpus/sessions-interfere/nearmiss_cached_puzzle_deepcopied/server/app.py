"""Sort six tiles by swapping two positions at a time, 8 swaps.

Near-miss: puzzles are memoised per seed with functools.lru_cache and the cached value is a
mutable dict (the same shape as the classic shared-cache bug), but reset() takes
copy.deepcopy of it and every step mutates only the session's own copy. All sessions also
share module-level statistics (cache lookups, swaps served) behind a lock; they are only
logged, never put in an observation, the reward or the state.
"""
import copy
import functools
import logging
import random
import threading
from typing import Any, Dict, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

N = 6
MAX_SWAPS = 8
log = logging.getLogger("tiles")

_STATS_LOCK = threading.Lock()
_STATS = {"resets": 0, "swaps": 0}


@functools.lru_cache(maxsize=256)
def puzzle_for(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    tiles = rng.sample(range(10, 100), N)
    while tiles == sorted(tiles):
        rng.shuffle(tiles)
    return {"tiles": tiles, "goal": sorted(tiles), "history": []}


class SwapAction(Action):
    i: int = Field(..., ge=0, lt=N)
    j: int = Field(..., ge=0, lt=N)


class TilesObservation(Observation):
    tiles: List[int] = Field(default_factory=list)
    swaps_left: int = MAX_SWAPS
    feedback: str = ""


class TilesEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._puzzle: Optional[Dict[str, Any]] = None
        self._done = True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TilesObservation:
        self._puzzle = copy.deepcopy(puzzle_for(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        with _STATS_LOCK:
            _STATS["resets"] += 1
            log.debug("tiles stats %s cache %s", _STATS, puzzle_for.cache_info())
        return self._obs("Sort the tiles in ascending order.", 0.0)

    def step(self, action: SwapAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TilesObservation:
        if self._puzzle is None or self._done:
            return TilesObservation(feedback="Episode is over; call reset().", done=True,
                                    reward=0.0)
        self._state.step_count += 1
        with _STATS_LOCK:
            _STATS["swaps"] += 1
        tiles = self._puzzle["tiles"]
        tiles[action.i], tiles[action.j] = tiles[action.j], tiles[action.i]
        self._puzzle["history"].append((action.i, action.j))
        if tiles == self._puzzle["goal"]:
            self._done = True
            return self._obs("Sorted!", 1.0)
        self._done = len(self._puzzle["history"]) >= MAX_SWAPS
        return self._obs("Out of swaps." if self._done else "Keep going.", 0.0)

    def _obs(self, text: str, reward: float) -> TilesObservation:
        return TilesObservation(tiles=list(self._puzzle["tiles"]),
                                swaps_left=MAX_SWAPS - len(self._puzzle["history"]),
                                feedback=text, done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    tiles = list(observation.get("tiles") or [0] * N)
    goal = sorted(tiles)
    for i in range(len(tiles)):
        if tiles[i] != goal[i]:
            return {"i": i, "j": tiles.index(goal[i])}
    return {"i": 0, "j": 0}


app = create_app(TilesEnv, SwapAction, TilesObservation, env_name="tiles_cached_deepcopy",
                 max_concurrent_envs=8)
