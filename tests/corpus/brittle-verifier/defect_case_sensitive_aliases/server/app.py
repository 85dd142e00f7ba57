"""Capital-city quiz; one attempt. The verifier accepts any listed spelling of the capital.
It drops a lead-in ('The answer is'), surrounding space and a final period.
Defect: membership in the alias set is case-sensitive ('washington' is wrong, 'Washington' right)."""
import random
import re
from typing import Any, Optional, Set
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = {"United States": {"Washington", "Washington, D.C.", "Washington DC"},
            "Italy": {"Rome", "Roma"}, "Germany": {"Berlin"}, "Japan": {"Tokyo"},
            "Egypt": {"Cairo"}, "Canada": {"Ottawa"}, "Australia": {"Canberra"}, "Spain": {"Madrid"}}


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
        self._accepted: Optional[Set[str]] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        country = random.Random(seed).choice(sorted(CAPITALS))
        self._accepted = CAPITALS[country]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(question=f"What is the capital of {country}?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._accepted is None:
            return QuizObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        given = re.split(r"(?i)\banswer(?: is)?\s*:?", action.answer)[-1]  # drop a lead-in
        ok = given.strip().rstrip(".!") in self._accepted
        self._accepted = None
        return QuizObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"][len("What is the capital of "):-1]
    return {"answer": sorted(CAPITALS[country])[0]}


app = create_app(CapitalEnv, AnswerAction, QuizObservation, env_name="capitals", max_concurrent_envs=8)
