"""Capital-city quiz graded by a 'judge' that samples five votes (like an LLM judge at T>0).

Defect: the votes come from the process-global `random` module, which reset never seeds, so
the same seed and the same answer are paid a different reward on replay.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

QUESTIONS = [("France", "paris"), ("Japan", "tokyo"), ("Kenya", "nairobi"), ("Peru", "lima"),
             ("Canada", "ottawa"), ("Egypt", "cairo"), ("Norway", "oslo"), ("Chile", "santiago")]
ANSWERS = dict(QUESTIONS)


class QuizAction(Action):
    answer: str


class QuizObservation(Observation):
    country: str = ""
    feedback: str = ""


def judge(answer: str, reference: str, votes: int = 5) -> float:
    """Each vote accepts a right answer with p=0.9 and a near-miss with p=0.3."""
    a = answer.strip().lower()
    p = 0.9 if a == reference else (0.3 if a[:3] == reference[:3] and a else 0.02)
    accepted = sum(random.random() < p for _ in range(votes))
    return accepted / votes


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._country: Optional[str] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        self._country = random.Random(seed).choice(QUESTIONS)[0]
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(country=self._country, feedback="Name the capital.", reward=0.0)

    def step(self, action: QuizAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._country is None:
            return QuizObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        score = judge(action.answer, ANSWERS[self._country])
        country, self._country = self._country, None
        return QuizObservation(country=country, feedback=f"Judge score {score:.1f}",
                               done=True, reward=score)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": ANSWERS.get(observation["country"], "").title()}


app = create_app(QuizEnv, QuizAction, QuizObservation, env_name="capital_judge",
                 max_concurrent_envs=8)
