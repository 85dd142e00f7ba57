"""Convert a title to a snake_case identifier, three attempts.

Reward: 1.0 for the exact identifier, 0.0 otherwise. A wrong attempt is told how many
characters are in the right place and the expected length; never the expected string.
"""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["alpha", "river", "stone", "cloud", "ember", "frost", "maple", "orbit", "pixel", "quartz"]
MAX_STEPS = 3


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
        words = rng.sample(WORDS, 3)
        self._q = "Convert to a snake_case identifier: " + " ".join(w.title() for w in words) + "!"
        self._answer = "_".join(words)
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
            same = sum(x == y for x, y in zip(self._answer, given))
            obs.feedback = (f"{given[:80]!r}: {same} characters in place; the identifier has "
                            f"{len(self._answer)} characters.")
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    title = observation["question"].split(": ", 1)[1].rstrip("!")
    return {"answer": "_".join(w.lower() for w in title.split())}


app = create_app(QAEnv, AnswerAction, QAObservation, env_name="qa", max_concurrent_envs=8)
