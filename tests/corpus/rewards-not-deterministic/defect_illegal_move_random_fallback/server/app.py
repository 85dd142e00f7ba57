"""Nim: take 1..3 stones from the pile, the seeded opponent answers; whoever takes the last wins.

Defect: an illegal move is 'forgiven' by playing a random legal move for the agent, drawn from
the process-global random module, so the same seed and actions can end in a win or a loss.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class TakeAction(Action):
    take: int


class NimObservation(Observation):
    pile: int = 0
    feedback: str = ""


class NimEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._pile, self._done = 0, True
        self._rng = random.Random(0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> NimObservation:
        self._rng = random.Random(seed)
        self._pile = self._rng.choice([n for n in range(10, 21) if n % 4])
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return NimObservation(pile=self._pile, feedback="Take 1, 2 or 3 stones.", reward=0.0)

    def step(self, action: TakeAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> NimObservation:
        if self._done:
            return NimObservation(pile=self._pile, feedback="Game over.", done=True, reward=0.0)
        self._state.step_count += 1
        take, note = action.take, ""
        if not 1 <= take <= min(3, self._pile):
            take = random.randint(1, min(3, self._pile))  # forgive illegal moves
            note = f"Illegal move; played {take} for you. "
        self._pile -= take
        if self._pile == 0:
            self._done = True
            return NimObservation(pile=0, feedback=note + "You took the last stone!", done=True,
                                  reward=1.0)
        reply = self._pile % 4 or self._rng.randint(1, min(3, self._pile))
        self._pile -= reply
        if self._pile == 0:
            self._done = True
            return NimObservation(pile=0, feedback=note + f"Opponent took {reply} and won.",
                                  done=True, reward=0.0)
        return NimObservation(pile=self._pile, feedback=note + f"Opponent took {reply}.",
                              reward=0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"take": observation["pile"] % 4 or 1}


app = create_app(NimEnv, TakeAction, NimObservation, env_name="nim_fallback",
                 max_concurrent_envs=8)
