"""Convert the number to Roman numerals (4 attempts); 1.0 for the exact numeral.

Defect: rewards are memoised in a module-level dict keyed by (seed, step) so that replays of
a seed "are bit-identical"; the action is not part of the key, so whichever action is graded
first at a seed and step fixes that reward for every session and every later action.
"""
import random
from typing import Any, Dict, Optional, Tuple
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_ATTEMPTS = 4
_REWARD_MEMO: Dict[Tuple[Optional[int], int], float] = {}
_NUMERALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
             (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n: int) -> str:
    out = ""
    for value, sym in _NUMERALS:
        while n >= value:
            out, n = out + sym, n - value
    return out


class RomanAction(Action):
    numeral: str


class RomanObservation(Observation):
    number: int = 0
    feedback: str = ""


class RomanEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._seed: Optional[int] = None
        self._number, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> RomanObservation:
        self._seed = seed
        self._number = random.Random(seed).randint(40, 3999)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return RomanObservation(number=self._number, feedback="Write it in Roman numerals.",
                                reward=0.0)

    def step(self, action: RomanAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> RomanObservation:
        if self._done or not self._number:
            return RomanObservation(number=self._number, feedback="Episode over.", reward=0.0,
                                    done=True)
        self._state.step_count += 1
        key = (self._seed, self._state.step_count)
        if key not in _REWARD_MEMO:
            _REWARD_MEMO[key] = 1.0 if action.numeral.strip().upper() == to_roman(self._number) else 0.0
        reward = _REWARD_MEMO[key]
        self._done = reward == 1.0 or self._state.step_count >= MAX_ATTEMPTS
        return RomanObservation(number=self._number, feedback="Correct." if reward else "No.",
                                reward=reward, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"numeral": to_roman(int(observation["number"]))}


app = create_app(RomanEnv, RomanAction, RomanObservation, env_name="roman_memo",
                 max_concurrent_envs=8)
