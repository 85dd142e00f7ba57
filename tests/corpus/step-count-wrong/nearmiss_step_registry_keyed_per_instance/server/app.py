"""Find the hidden letter (a..z) with earlier/later hints, 5 guesses.

Near-miss: step counts live in a module-level, lock-protected registry dict that every session
shares (it also feeds a debug log of live sessions), which looks like the shared-counter bug,
but the key is a uuid token minted in each instance's __init__, so each session reads and
writes only its own entry: 0 after reset, +1 per step, whatever the other sessions do.
"""
import logging
import random
import string
import threading
from typing import Any, Dict, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

LETTERS = string.ascii_lowercase
MAX_GUESSES = 5
log = logging.getLogger("letters")

_REGISTRY_LOCK = threading.Lock()
_STEP_REGISTRY: Dict[str, int] = {}  # instance token -> steps in its current episode


class LetterAction(Action):
    letter: str = Field(..., pattern=r"^[a-z]$")


class LetterObservation(Observation):
    low: str = "a"
    high: str = "z"
    guesses_left: int = MAX_GUESSES
    feedback: str = ""


class LetterEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._token = uuid4().hex
        self._episode_id = str(uuid4())
        self._target: Optional[str] = None
        self._low, self._high, self._used, self._done = 0, 25, 0, True
        with _REGISTRY_LOCK:
            _STEP_REGISTRY[self._token] = 0

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> LetterObservation:
        self._target = random.Random(seed).choice(LETTERS)
        self._low, self._high, self._used, self._done = 0, 25, 0, False
        self._episode_id = episode_id or str(uuid4())
        with _REGISTRY_LOCK:
            _STEP_REGISTRY[self._token] = 0
            log.debug("%d live sessions", len(_STEP_REGISTRY))
        return self._obs("Guess a letter from a to z.", 0.0)

    def step(self, action: LetterAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> LetterObservation:
        if self._target is None or self._done:
            return LetterObservation(feedback="Episode is over; call reset().", done=True,
                                     reward=0.0)
        with _REGISTRY_LOCK:
            _STEP_REGISTRY[self._token] = _STEP_REGISTRY.get(self._token, 0) + 1
        self._used += 1
        g = LETTERS.index(action.letter)
        t = LETTERS.index(self._target)
        if g == t:
            self._low = self._high = g
            self._done = True
            return self._obs("Correct!", 1.0)
        if g < t:
            self._low, text = max(self._low, g + 1), "Later in the alphabet."
        else:
            self._high, text = min(self._high, g - 1), "Earlier in the alphabet."
        self._done = self._used >= MAX_GUESSES
        return self._obs(text + (" Out of guesses." if self._done else ""), 0.0)

    def _obs(self, text: str, reward: float) -> LetterObservation:
        return LetterObservation(low=LETTERS[self._low], high=LETTERS[self._high],
                                 guesses_left=MAX_GUESSES - self._used, feedback=text,
                                 done=self._done, reward=reward)

    def close(self) -> None:
        with _REGISTRY_LOCK:
            _STEP_REGISTRY.pop(self._token, None)

    @property
    def state(self) -> State:
        with _REGISTRY_LOCK:
            steps = _STEP_REGISTRY.get(self._token, 0)
        return State(episode_id=self._episode_id, step_count=steps)


def policy(observation: dict) -> dict:
    lo = LETTERS.index(observation.get("low", "a"))
    hi = LETTERS.index(observation.get("high", "z"))
    return {"letter": LETTERS[(lo + hi) // 2]}


app = create_app(LetterEnv, LetterAction, LetterObservation, env_name="letters_token_registry",
                 max_concurrent_envs=8)
