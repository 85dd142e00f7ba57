"""Capital-city quiz; one attempt. Exact match, but of normalised strings.
Near-miss: normalise() makes spacing, case, a lead-in, quotes, final punctuation and Unicode form harmless."""
import random
import re
import unicodedata
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = {"Italy": "Rome", "Germany": "Berlin", "Japan": "Tokyo", "Egypt": "Cairo", "Canada": "Ottawa",
            "Australia": "Canberra", "Spain": "Madrid", "Iceland": "Reykjavík", "Colombia": "Bogotá"}
LEAD_IN = re.compile(r"^(?:(?:so|thus|therefore),?\s+)?(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[:=]?\s*", re.I)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).strip()
    text = LEAD_IN.sub("", text)
    text = text.strip().strip("\"'`*").rstrip(".!?;").strip()
    return " ".join(text.split()).casefold()


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QuizObservation(Observation):
    question: str = ""
    feedback: str = ""


class CapitalEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._expected: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        country = random.Random(seed).choice(sorted(CAPITALS))
        self._expected = CAPITALS[country]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(question=f"What is the capital of {country}?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._expected is None:
            return QuizObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        ok = normalise(action.answer) == normalise(self._expected)
        self._expected = None
        return QuizObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": CAPITALS[observation["question"][len("What is the capital of "):-1]]}


app = create_app(CapitalEnv, AnswerAction, QuizObservation, env_name="capitals", max_concurrent_envs=8)
