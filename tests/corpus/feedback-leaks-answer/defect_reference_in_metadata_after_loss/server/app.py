"""One-attempt trivia: the year an event happened.

Reward: 1.0 for the right year, 0.0 otherwise. Defect: on a wrong answer the terminal
observation's metadata carries {"reference": year} "for the logs"; the same seed asks the
same question next episode.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

EVENTS = {"the first Moon landing": "1969", "the fall of the Berlin Wall": "1989",
          "the sinking of the Titanic": "1912", "the end of World War II": "1945",
          "the first flight of the Wright brothers": "1903", "the launch of Sputnik": "1957"}
MAX_STEPS = 1


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""
    attempts_left: int = MAX_STEPS


class QAEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._answer, self._done = "", "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        rng = random.Random(seed)
        event, self._answer = rng.choice(sorted(EVENTS.items()))
        self._q = f"In which year did this happen: {event}?"
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=self._q, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if not self._answer or self._done:
            return QAObservation(question=self._q, feedback="Episode over.", done=True,
                                 reward=0.0, attempts_left=0)
        self._state.step_count += 1
        given = action.answer.strip()
        ok = given == self._answer
        self._done = ok or self._state.step_count >= MAX_STEPS
        obs = QAObservation(question=self._q, done=self._done, reward=1.0 if ok else 0.0,
                            attempts_left=MAX_STEPS - self._state.step_count)
        if ok:
            obs.feedback = "Correct."
        else:
            obs.feedback = "Wrong."
            obs.metadata = {"reference": self._answer, "given": given[:50]}
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    event = observation["question"].split(": ", 1)[1].rstrip("?")
    return {"answer": EVENTS[event]}


app = create_app(QAEnv, AnswerAction, QAObservation, env_name="qa", max_concurrent_envs=8)
