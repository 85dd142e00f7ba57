"""Hangman over a small word list, 10 guesses.

Defect: the letters guessed so far live in a module-level registry keyed by the seed, meant to
let a client that reconnects with the same seed resume its game. reset() replaces the seed's
entry and step() adds to it, so alone every episode is replayed exactly, but two sessions on
the same seed (a GRPO group) reveal letters and spend lives in one shared game: the second
session's reset wipes the first's progress and both sessions' guesses show up in both
observations. Sessions on different seeds never meet.
"""
import random
from typing import Any, Dict, Optional, Set
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_TURNS = 10
WORDS = (
    "planet", "garden", "silver", "rocket", "window", "bridge", "candle", "forest",
    "marble", "pepper", "jungle", "violin", "castle", "dragon", "sunset", "harbor",
    "lemon", "tiger", "piano", "cloud", "river", "stone", "ghost", "flame",
)

# seed -> letters guessed in that seed's game ("resume after reconnect")
_GAMES: Dict[Optional[int], Set[str]] = {}


class LetterAction(Action):
    letter: str = Field(..., pattern=r"^[a-z]$")


class HangmanObservation(Observation):
    pattern: str = ""
    guessed: str = ""
    wrong: int = 0
    turns_left: int = MAX_TURNS
    feedback: str = ""


class HangmanEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word: Optional[str] = None
        self._seed: Optional[int] = None
        self._turns, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> HangmanObservation:
        self._seed = seed
        self._word = random.Random(seed).choice(WORDS)
        _GAMES[seed] = set()
        self._turns, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("Guess the word, one letter at a time.", 0.0)

    def step(self, action: LetterAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> HangmanObservation:
        if self._word is None or self._done:
            return HangmanObservation(feedback="Episode is over; call reset().", done=True,
                                      reward=0.0)
        self._state.step_count += 1
        self._turns += 1
        guessed = _GAMES.setdefault(self._seed, set())
        letter = action.letter
        if letter in guessed:
            text = f"'{letter}' was already guessed."
        elif letter in self._word:
            text = f"Yes, '{letter}' is in the word."
        else:
            text = f"No '{letter}'."
        guessed.add(letter)
        if all(c in guessed for c in self._word):
            self._done = True
            return self._obs("Solved: " + self._word, 1.0)
        self._done = self._turns >= MAX_TURNS
        return self._obs(text + (" Out of turns." if self._done else ""), 0.0)

    def _obs(self, text: str, reward: float) -> HangmanObservation:
        guessed = _GAMES.get(self._seed, set())
        return HangmanObservation(
            pattern="".join(c if c in guessed else "_" for c in self._word),
            guessed="".join(sorted(guessed)),
            wrong=sum(1 for c in guessed if c not in self._word),
            turns_left=MAX_TURNS - self._turns, feedback=text, done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    pattern, guessed = observation.get("pattern", ""), set(observation.get("guessed", ""))
    cands = [w for w in WORDS if len(w) == len(pattern)
             and all(p == "_" and c not in guessed or p == c for p, c in zip(pattern, w))]
    counts: Dict[str, int] = {}
    for w in cands or WORDS:
        for c in set(w) - guessed:
            counts[c] = counts.get(c, 0) + 1
    if not counts:
        return {"letter": next(c for c in "etaoinshrdlucmfwypvbgkjqxz" if c not in guessed)}
    return {"letter": max(sorted(counts), key=lambda c: counts[c])}


app = create_app(HangmanEnv, LetterAction, HangmanObservation, env_name="hangman_resume_registry",
                 max_concurrent_envs=8)
