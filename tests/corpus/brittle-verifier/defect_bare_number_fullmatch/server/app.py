"""Train-timetable word problems; one attempt. The answer must be a number of minutes.
Defect: the answer has to be a bare number (fullmatch), so a lead-in or a final period scores 0;
spaces and equivalent decimal forms are accepted (Decimal comparison)."""
import random
import re
from decimal import Decimal
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


class AnswerAction(Action):
    answer: str = Field(..., max_length=300)


class ProblemObservation(Observation):
    problem: str = ""
    feedback: str = ""


class TimetableEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._expected: Optional[int] = None

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ProblemObservation:
        rng = random.Random(seed)
        dist, speed = rng.choice([60, 90, 120, 150, 180]), rng.choice([30, 45, 60, 90])
        wait = rng.randint(3, 25)
        self._expected = dist * 60 // speed + wait
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ProblemObservation(problem=f"A train covers {dist} km at {speed} km/h and then waits {wait} "
                                          "minutes at a station. How many minutes in total?", reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ProblemObservation:
        if self._expected is None:
            return ProblemObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        text = action.answer.strip()
        ok = bool(NUMBER.fullmatch(text)) and Decimal(text) == self._expected
        self._expected = None
        return ProblemObservation(feedback="Correct." if ok else "Incorrect.", done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    dist, speed, wait = (int(v) for v in re.findall(r"\d+", observation["problem"]))
    return {"answer": str(dist * 60 // speed + wait)}


app = create_app(TimetableEnv, AnswerAction, ProblemObservation, env_name="timetable", max_concurrent_envs=8)
