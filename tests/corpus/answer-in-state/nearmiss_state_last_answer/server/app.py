"""Multiplication with up to three attempts; reward 1.0 on the first correct attempt, else 0.
Near-miss: state.last_answer / answer_history hold the AGENT's submissions, not the solution."""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

MAX_STEPS = 3


class AnswerAction(Action):
    answer: str = Field(..., max_length=100)


class MathObservation(Observation):
    question: str = ""
    feedback: str = ""
    attempts_left: int = MAX_STEPS


class MathState(State):
    question: str = ""
    last_answer: Optional[str] = None
    answer_history: List[str] = Field(default_factory=list)
    last_answer_correct: Optional[bool] = None


class MathEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = MathState(episode_id=str(uuid4()))
        self._expected: Optional[int] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MathObservation:
        rng = random.Random(seed)
        a, b = rng.randint(12, 99), rng.randint(12, 99)
        self._expected, self._done = a * b, False
        self._state = MathState(episode_id=episode_id or str(uuid4()), step_count=0, question=f"{a} * {b}")
        return MathObservation(question=f"What is {a} * {b}?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MathObservation:
        if self._done or self._expected is None:
            return MathObservation(feedback="Episode over.", done=True, reward=0.0, attempts_left=0)
        self._state.step_count += 1
        given = action.answer.strip()
        try:
            ok = int(float(given.replace(",", ""))) == self._expected
        except ValueError:
            ok = False
        self._state.last_answer, self._state.last_answer_correct = given, ok
        self._state.answer_history.append(given)
        self._done = ok or self._state.step_count >= MAX_STEPS
        return MathObservation(question=f"What is {self._state.question}?", done=self._done,
                               feedback="Correct." if ok else "Incorrect.", reward=1.0 if ok else 0.0,
                               attempts_left=MAX_STEPS - self._state.step_count)

    @property
    def state(self) -> MathState:
        return self._state


def policy(observation: dict) -> dict:
    a, b = observation["question"][len("What is "):-1].split(" * ")
    return {"answer": str(int(a) * int(b))}


app = create_app(MathEnv, AnswerAction, MathObservation, env_name="math", max_concurrent_envs=8)
