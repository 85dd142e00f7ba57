"""Subtraction Nim against a random opponent: take 1-3 stones, whoever takes the last one wins.

Defect: to avoid building a random.Random per episode, generators come from a module-level
pool keyed by the seed, and reset(seed) reseeds the pooled generator. Alone, a session replays
its episode exactly (same pile, same opponent replies). Two sessions on the same seed (a GRPO
group) get the same generator object: the opponent's replies in one session are drawn from the
stream the other session is also consuming, and the second session's reset rewinds the first
session's opponent. Sessions on different seeds use different generators and never meet.
"""
import random
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_TURNS = 10
PILES = (9, 10, 11, 13, 14, 15, 17, 18, 19)  # never a multiple of 4: the first player can win

_RNG_POOL: Dict[Optional[int], random.Random] = {}


def _rng_for(seed: Optional[int]) -> random.Random:
    rng = _RNG_POOL.get(seed)
    if rng is None:
        rng = _RNG_POOL[seed] = random.Random()
    rng.seed(seed)
    return rng


class TakeAction(Action):
    take: int = Field(..., ge=1, le=3)


class NimObservation(Observation):
    pile: int = 0
    opponent_took: int = 0
    feedback: str = ""


class NimEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._rng: Optional[random.Random] = None
        self._pile, self._turns, self._done = 0, 0, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> NimObservation:
        self._rng = _rng_for(seed)
        self._pile = self._rng.choice(PILES)
        self._turns, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return NimObservation(pile=self._pile, feedback=f"{self._pile} stones. Your move.",
                              reward=0.0)

    def step(self, action: TakeAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> NimObservation:
        if self._rng is None or self._done:
            return NimObservation(feedback="Episode is over; call reset().", done=True,
                                  reward=0.0)
        self._state.step_count += 1
        self._turns += 1
        self._pile -= min(action.take, self._pile)
        if self._pile == 0:
            self._done = True
            return NimObservation(pile=0, feedback="You took the last stone. You win!",
                                  done=True, reward=1.0)
        reply = self._rng.randint(1, min(3, self._pile))
        self._pile -= reply
        if self._pile == 0:
            self._done = True
            return NimObservation(pile=0, opponent_took=reply,
                                  feedback=f"Opponent took {reply}, the last stone. You lose.",
                                  done=True, reward=0.0)
        self._done = self._turns >= MAX_TURNS
        return NimObservation(pile=self._pile, opponent_took=reply,
                              feedback=f"Opponent took {reply}; {self._pile} left.",
                              done=self._done, reward=0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"take": observation.get("pile", 1) % 4 or 1}


app = create_app(NimEnv, TakeAction, NimObservation, env_name="nim_rng_pool",
                 max_concurrent_envs=8)
