"""A quiz of 8 capital-city questions; the final step pays the fraction right, in [0, 1].

Every observation reports the per-question scores so far (a little learning curve).
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima",
            "Norway": "Oslo", "Egypt": "Cairo", "Canada": "Ottawa", "Chile": "Santiago",
            "Spain": "Madrid", "Italy": "Rome", "Greece": "Athens", "Poland": "Warsaw"}
N_QUESTIONS = 8


class AnswerAction(Action):
    answer: str


class QuizObservation(Observation):
    question: str = ""
    scores: List[float] = []


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._countries, self._scores, self._done = [], [], True

    def _question(self) -> str:
        if self._done:
            return ""
        return f"What is the capital of {self._countries[len(self._scores)]}?"

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        self._countries = random.Random(seed).sample(sorted(CAPITALS), N_QUESTIONS)
        self._scores, self._done = [], False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(question=self._question(), scores=[], reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._done:
            return QuizObservation(scores=list(self._scores), done=True, reward=0.0)
        self._state.step_count += 1
        country = self._countries[len(self._scores)]
        self._scores.append(1.0 if action.answer.strip().lower() == CAPITALS[country].lower()
                            else 0.0)
        self._done = len(self._scores) >= N_QUESTIONS
        reward = sum(self._scores) / N_QUESTIONS if self._done else 0.0
        return QuizObservation(question=self._question(), scores=list(self._scores),
                               done=self._done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"].rsplit(" ", 1)[-1].rstrip("?")
    return {"answer": CAPITALS.get(country, "")}


app = create_app(QuizEnv, AnswerAction, QuizObservation, env_name="capital_quiz",
                 max_concurrent_envs=8)
