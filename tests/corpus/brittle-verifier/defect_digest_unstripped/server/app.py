"""Element-name quiz; one attempt. Answers are stored only as SHA-256 digests of their lower-case form.
Defect: the submitted answer is lower-cased but not stripped before hashing, so ' iron' or 'iron\\n' fails."""
import hashlib
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# symbol -> digest of the element name (the dataset ships only digests)
DIGESTS = {sym: digest(name) for sym, name in [("Fe", "iron"), ("Na", "sodium"), ("K", "potassium"),
                                               ("Pb", "lead"), ("Au", "gold"), ("Ag", "silver"),
                                               ("Sn", "tin"), ("Hg", "mercury")]}
_ORACLE_NAMES = {"Fe": "Iron", "Na": "Sodium", "K": "Potassium", "Pb": "Lead", "Au": "Gold",
                 "Ag": "Silver", "Sn": "Tin", "Hg": "Mercury"}


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QuizObservation(Observation):
    question: str = ""
    symbol: str = ""
    feedback: str = ""


class ElementEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._digest: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        sym = random.Random(seed).choice(sorted(DIGESTS))
        self._digest = DIGESTS[sym]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(question=f"Which element has the chemical symbol {sym}?", symbol=sym, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._digest is None:
            return QuizObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        ok = digest(action.answer.lower()) == self._digest
        self._digest = None
        return QuizObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": _ORACLE_NAMES[observation["symbol"]]}


app = create_app(ElementEnv, AnswerAction, QuizObservation, env_name="elements", max_concurrent_envs=8)
