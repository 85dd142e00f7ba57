"""Unscramble a shuffled word; one attempt.
Defect: State(..., solution_word=w): the base State allows extra fields, so it is kept and sent."""
import random
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

WORDS = ["planet", "garden", "silver", "rocket", "window", "bridge", "castle", "forest"]


class AnswerAction(Action):
    answer: str = Field(..., max_length=100)


class ScrambleObservation(Observation):
    letters: str = ""
    feedback: str = ""


class ScrambleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._word, self._done = "", False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ScrambleObservation:
        rng = random.Random(seed)
        self._word = rng.choice(WORDS)
        letters = list(self._word)
        while "".join(letters) == self._word:
            rng.shuffle(letters)
        self._done = False
        # keep the word on the state so the replay viewer can show it
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0, solution_word=self._word)
        return ScrambleObservation(letters="".join(letters), reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ScrambleObservation:
        if self._done or not self._word:
            return ScrambleObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = action.answer.strip().lower() == self._word
        return ScrambleObservation(feedback="Correct." if ok else "Incorrect.", done=True,
                                   reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    letters = sorted(observation["letters"])
    return {"answer": next((w for w in WORDS if sorted(w) == letters), "")}


app = create_app(ScrambleEnv, AnswerAction, ScrambleObservation, env_name="scramble", max_concurrent_envs=8)
