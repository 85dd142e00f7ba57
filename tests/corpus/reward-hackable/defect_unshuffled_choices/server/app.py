"""Multiple-choice arithmetic.

Defect: `rng.shuffle(options[1:])` shuffles a temporary copy, so the correct option (put first
when the list is built) stays at index 0 in every episode: always answering 0 wins.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class MCAction(Action):
    choice: int = Field(..., ge=0, le=3, description="Index of the chosen option.")


class MCObservation(Observation):
    question: str = ""
    options: List[int] = Field(default_factory=list)
    feedback: str = ""


class MultipleChoiceEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._question = ""
        self._options: List[int] = []
        self._answer: Optional[int] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MCObservation:
        rng = random.Random(seed)
        a, b = rng.randint(3, 19), rng.randint(3, 19)
        self._answer = a * b
        distractors = rng.sample([a * b + d for d in (-a, -b, -1, 1, a, b) if d], 3)
        self._options = [self._answer] + distractors
        rng.shuffle(self._options[1:])  # meant: shuffle everything but keep the list object
        self._question = f"What is {a} x {b}?"
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return MCObservation(question=self._question, options=self._options)

    def step(self, action: MCAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MCObservation:
        if self._answer is None or self._done:
            return MCObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        correct = self._options[action.choice] == self._answer
        return MCObservation(question=self._question, options=self._options,
                             feedback="Correct." if correct else "Incorrect.",
                             done=True, reward=1.0 if correct else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b = (int(t) for t in observation["question"][8:-1].split(" x "))
    return {"choice": observation["options"].index(a * b)}


app = create_app(MultipleChoiceEnv, MCAction, MCObservation, env_name="mc_unshuffled",
                 max_concurrent_envs=8)
