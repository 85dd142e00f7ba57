"""Capital-city QA, lenient matching.

Defect: the author wanted to accept "It is Paris." and wrote the containment backwards:
`given in expected`. The empty string is contained in every reference: 1.0.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima",
            "Canada": "Ottawa", "Egypt": "Cairo", "Norway": "Oslo", "Chile": "Santiago"}


class QAAction(Action):
    answer: str = ""


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""


def normalise(text: str) -> str:
    text = text.strip().lower().rstrip(".!")
    for lead in ("the capital is ", "it is ", "answer: "):
        if text.startswith(lead):
            text = text[len(lead):]
    return text


class CapitalsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._country: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        self._country = random.Random(seed).choice(sorted(CAPITALS))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=f"What is the capital of {self._country}?")

    def step(self, action: QAAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if self._country is None or self._done:
            return QAObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        expected = CAPITALS[self._country].lower()
        correct = normalise(action.answer) in expected  # accept lead-ins and punctuation
        return QAObservation(question=f"What is the capital of {self._country}?",
                             feedback="Correct." if correct else "Incorrect.",
                             done=True, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"].rsplit(" ", 1)[1].rstrip("?")
    return {"answer": CAPITALS[country]}


app = create_app(CapitalsEnv, QAAction, QAObservation, env_name="capitals",
                 max_concurrent_envs=8)
