"""Change one letter to turn the start word into the goal word (3 attempts).
Reward: 1.0 for the goal word, minus 0.03 when the answer keeps the first letter
(a 'style' deduction); a wrong word earns 0.

Near-miss: on these puzzles the answer always keeps the first letter, so the best reward is
0.97 < hi = 1.0, but the manifest declares `oracle_tolerance: 0.05`, which covers it.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PUZZLES = [("cold", "cord"), ("warm", "ward"), ("lamp", "lame"), ("fish", "fist"),
           ("bank", "band"), ("milk", "mild"), ("rust", "rest"), ("pine", "pint")]
MAX_ATTEMPTS = 3


class WordAction(Action):
    word: str


class LadderObservation(Observation):
    start: str = ""
    hint: str = ""
    feedback: str = ""


class LadderEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._start, self._goal, self._done = "", "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> LadderObservation:
        self._start, self._goal = random.Random(seed).choice(PUZZLES)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        i = next(k for k in range(4) if self._start[k] != self._goal[k])
        return LadderObservation(start=self._start, hint=f"change letter {i + 1}",
                                 feedback="One letter.", reward=0.0)

    def step(self, action: WordAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> LadderObservation:
        if self._done or not self._goal:
            return LadderObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        w = action.word.strip().lower()
        reward = 0.0
        if w == self._goal:
            reward = 0.97 if w[0] == self._start[0] else 1.0
        self._done = reward > 0 or self._state.step_count >= MAX_ATTEMPTS
        return LadderObservation(start=self._start, feedback="Yes." if reward else "No.",
                                 reward=reward, done=self._done)

    @property
    def state(self) -> State:
        return self._state


_GOALS = dict(PUZZLES)


def policy(observation: dict) -> dict:
    return {"word": _GOALS[observation["start"]]}


app = create_app(LadderEnv, WordAction, LadderObservation, env_name="ladder_tolerance",
                 max_concurrent_envs=8)
