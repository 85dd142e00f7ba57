"""Three-stage arithmetic chain: compute a*b, then +c, then mod m (one stage per step).
Reward: 0.2 for a right intermediate stage, 1.0 for the right final result, 0 when wrong
(a wrong stage ends the episode).

Near-miss: most of the oracle's steps pay 0.2, far below hi, but its last step pays 1.0.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class StageAction(Action):
    value: int


class ChainObservation(Observation):
    a: int = 0
    b: int = 0
    c: int = 0
    m: int = 1
    stage: int = 0
    previous: int = 0
    feedback: str = ""


class ChainEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._p = {"a": 0, "b": 0, "c": 0, "m": 1}
        self._stage, self._prev, self._done, self._ready = 0, 0, False, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ChainObservation:
        rng = random.Random(seed)
        self._p = {"a": rng.randint(3, 30), "b": rng.randint(3, 30), "c": rng.randint(1, 99),
                   "m": rng.randint(7, 17)}
        self._stage, self._prev, self._done, self._ready = 0, 0, False, True
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Stage 1: a*b.", 0.0)

    def _obs(self, text: str, reward: float) -> ChainObservation:
        return ChainObservation(stage=self._stage, previous=self._prev, feedback=text,
                                reward=reward, done=self._done, **self._p)

    def _expected(self) -> int:
        p = self._p
        return [p["a"] * p["b"], self._prev + p["c"], self._prev % p["m"]][self._stage]

    def step(self, action: StageAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ChainObservation:
        if self._done or not self._ready:
            self._done = True
            return self._obs("Episode over.", 0.0)
        self._state.step_count += 1
        if action.value != self._expected():
            self._done = True
            return self._obs("Wrong.", 0.0)
        self._prev, self._stage = action.value, self._stage + 1
        self._done = self._stage == 3
        return self._obs("Done!" if self._done else f"Stage {self._stage + 1}.",
                         1.0 if self._done else 0.2)

    @property
    def state(self) -> State:
        return self._state


def policy(o: dict) -> dict:
    return {"value": [o["a"] * o["b"], o["previous"] + o["c"], o["previous"] % o["m"]][o["stage"]]}


app = create_app(ChainEnv, StageAction, ChainObservation, env_name="chain_final_only",
                 max_concurrent_envs=8)
