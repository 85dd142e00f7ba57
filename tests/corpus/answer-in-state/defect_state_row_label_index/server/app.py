"""Multiple-choice science quiz; one attempt, answer with a letter A-D.
Defect: the State keeps the raw dataset row, whose `label` is the index of the right choice."""
import random
from typing import Any, Dict, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

DATA = [
    {"question": "Which planet is closest to the Sun?", "choices": ["Venus", "Mercury", "Mars", "Earth"], "label": 1},
    {"question": "What gas do plants absorb?", "choices": ["Oxygen", "Nitrogen", "Helium", "Carbon dioxide"], "label": 3},
    {"question": "What is H2O?", "choices": ["Water", "Salt", "Hydrogen", "Ozone"], "label": 0},
    {"question": "Which organ pumps blood?", "choices": ["Liver", "Lung", "Heart", "Kidney"], "label": 2},
    {"question": "What force keeps us on the ground?", "choices": ["Magnetism", "Friction", "Gravity", "Tension"], "label": 2},
]
KEY = {d["question"]: d["choices"][d["label"]] for d in DATA}


class ChoiceAction(Action):
    answer: str = Field(..., max_length=20, description="A, B, C or D")


class QuizObservation(Observation):
    question: str = ""
    choices: List[str] = Field(default_factory=list)
    feedback: str = ""


class QuizState(State):
    example: Dict[str, Any] = Field(default_factory=dict)


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = QuizState(episode_id=str(uuid4()))
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        row = dict(random.Random(seed).choice(DATA))
        self._state = QuizState(episode_id=episode_id or str(uuid4()), step_count=0, example=row)
        self._done = False
        return QuizObservation(question=row["question"],
                               choices=[f"{'ABCD'[i]}) {c}" for i, c in enumerate(row["choices"])], reward=0.0)

    def step(self, action: ChoiceAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._done or not self._state.example:
            return QuizObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        letter = action.answer.strip().upper()[:1]
        ok = letter == "ABCD"[self._state.example["label"]]
        return QuizObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> QuizState:
        return self._state


def policy(observation: dict) -> dict:
    right = KEY[observation["question"]]
    return {"answer": next(c[0] for c in observation["choices"] if c[3:] == right)}


app = create_app(QuizEnv, ChoiceAction, QuizObservation, env_name="quiz", max_concurrent_envs=8)
