"""Spell the hidden word one letter per step, from its definition; after the last letter the
whole word is scored: 1.0 if it is right, else the share of right letters times 0.4.

Near-miss: every intermediate step pays 0.0 whatever the letter (a delayed reward), but the
final reward is computed from all the letters sent.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = {"apple": "a red or green fruit", "chair": "you sit on it", "river": "flowing water",
         "cloud": "white thing in the sky", "bread": "baked from flour", "tiger": "striped cat"}


class LetterAction(Action):
    letter: str


class SpellObservation(Observation):
    definition: str = ""
    length: int = 0
    spelled: str = ""


class SpellEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word, self._spelled, self._done = "", "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SpellObservation:
        self._word = random.Random(seed).choice(sorted(WORDS))
        self._spelled, self._done = "", False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs(0.0)

    def _obs(self, reward: float) -> SpellObservation:
        return SpellObservation(definition=WORDS.get(self._word, ""), length=len(self._word),
                                spelled=self._spelled, reward=reward, done=self._done)

    def step(self, action: LetterAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SpellObservation:
        if self._done or not self._word:
            self._done = True
            return self._obs(0.0)
        self._state.step_count += 1
        self._spelled += (action.letter.strip().lower() or "?")[0]
        if len(self._spelled) < len(self._word):
            return self._obs(0.0)
        self._done = True
        if self._spelled == self._word:
            return self._obs(1.0)
        share = sum(a == b for a, b in zip(self._spelled, self._word)) / len(self._word)
        return self._obs(round(0.4 * share, 4))

    @property
    def state(self) -> State:
        return self._state


_BY_DEF = {d: w for w, d in WORDS.items()}


def policy(observation: dict) -> dict:
    word = _BY_DEF[observation["definition"]]
    return {"letter": word[len(observation["spelled"])]}


app = create_app(SpellEnv, LetterAction, SpellObservation, env_name="spell_delayed",
                 max_concurrent_envs=8)
