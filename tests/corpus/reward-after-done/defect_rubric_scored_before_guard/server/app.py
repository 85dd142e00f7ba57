"""Capital-city quiz (one question, up to 3 attempts), graded by an openenv Rubric.

Defect: the rubric is applied first ("always log the score"), and the episode-over branch
returns an observation with that score as its reward, so a finished episode pays again.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.rubrics import Rubric

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima",
            "Canada": "Ottawa", "Egypt": "Cairo", "Norway": "Oslo", "Chile": "Santiago"}
MAX_ATTEMPTS = 3


class CityAction(Action):
    city: str


class QuizObservation(Observation):
    country: str = ""
    feedback: str = ""


class ExactCity(Rubric):
    def __init__(self) -> None:
        super().__init__()
        self.expected = ""

    def forward(self, action: CityAction, observation: Any) -> float:
        return 1.0 if action.city.strip().lower() == self.expected.lower() else 0.0


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__(rubric=ExactCity())
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._country, self._done = "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        self._country = random.Random(seed).choice(sorted(CAPITALS))
        self.rubric.expected = CAPITALS[self._country]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(country=self._country, feedback="Name the capital.", reward=0.0)

    def step(self, action: CityAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if not self._country:
            return QuizObservation(feedback="Call reset() first.", reward=0.0, done=True)
        score = self._apply_rubric(action, None)
        if self._done:
            return QuizObservation(country=self._country, feedback="Episode over.",
                                   reward=score, done=True)
        self._state.step_count += 1
        self._done = score == 1.0 or self._state.step_count >= MAX_ATTEMPTS
        return QuizObservation(country=self._country,
                               feedback="Correct." if score == 1.0 else "Wrong.",
                               reward=score, done=self._done)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"city": CAPITALS.get(observation["country"], "")}


app = create_app(QuizEnv, CityAction, QuizObservation, env_name="capital_rubric",
                 max_concurrent_envs=8)
