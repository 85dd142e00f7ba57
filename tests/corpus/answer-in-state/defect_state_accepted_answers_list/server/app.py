"""Who-wrote-it trivia with alias matching; one attempt.
Defect: the State keeps the list of accepted aliases of the right answer."""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

BOOKS = {"Hamlet": ["William Shakespeare", "Shakespeare"],
         "Don Quixote": ["Miguel de Cervantes", "Cervantes"],
         "War and Peace": ["Leo Tolstoy", "Tolstoy", "Lev Tolstoy"],
         "Pride and Prejudice": ["Jane Austen", "Austen"],
         "The Odyssey": ["Homer"],
         "Faust": ["Johann Wolfgang von Goethe", "Goethe"]}


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class TriviaObservation(Observation):
    question: str = ""
    feedback: str = ""


class TriviaState(State):
    title: str = ""
    accepted_answers: List[str] = Field(default_factory=list)


class AuthorEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = TriviaState(episode_id=str(uuid4()))
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TriviaObservation:
        title = random.Random(seed).choice(sorted(BOOKS))
        self._state = TriviaState(episode_id=episode_id or str(uuid4()), step_count=0, title=title,
                                  accepted_answers=list(BOOKS[title]))
        self._done = False
        return TriviaObservation(question=f"Who wrote '{title}'?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TriviaObservation:
        if self._done or not self._state.accepted_answers:
            return TriviaObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        given = " ".join(action.answer.lower().split())
        ok = any(given == a.lower() for a in self._state.accepted_answers)
        return TriviaObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> TriviaState:
        return self._state


def policy(observation: dict) -> dict:
    return {"answer": BOOKS[observation["question"].split("'")[1]][0]}


app = create_app(AuthorEnv, AnswerAction, TriviaObservation, env_name="authors", max_concurrent_envs=8)
