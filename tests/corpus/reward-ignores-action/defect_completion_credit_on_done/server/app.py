"""Three true/false questions in a row; the episode ends after the third answer.

Defect: the reward is `1.0 if done else 0.0` ("completion reward"), and done comes from the
question counter, not from the answers: each step's reward is fixed by the step index.
The correct-answer count is only reported in the feedback text.
"""
import random
from typing import Any, List, Optional, Tuple
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FACTS: List[Tuple[str, bool]] = [
    ("Water boils at 100 C at sea level.", True), ("The sun orbits the earth.", False),
    ("Spiders have eight legs.", True), ("Bats are birds.", False),
    ("Sound travels faster than light.", False), ("Mercury is a metal.", True),
    ("Penguins live at the north pole.", False), ("A triangle has three sides.", True)]
N_QUESTIONS = 3


class TFAction(Action):
    answer: bool


class TFObservation(Observation):
    statement: str = ""
    feedback: str = ""


class TrueFalseEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._qs: List[Tuple[str, bool]] = []
        self._right, self._done = 0, False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> TFObservation:
        self._qs = random.Random(seed).sample(FACTS, N_QUESTIONS)
        self._right, self._done = 0, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return TFObservation(statement=self._qs[0][0], feedback="True or false?", reward=0.0)

    def step(self, action: TFAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> TFObservation:
        if self._done or not self._qs:
            return TFObservation(feedback="Episode over.", reward=0.0, done=True)
        i = self._state.step_count
        self._state.step_count += 1
        self._right += int(action.answer == self._qs[i][1])
        self._done = self._state.step_count >= N_QUESTIONS
        reward = 1.0 if self._done else 0.0
        nxt = "" if self._done else self._qs[i + 1][0]
        return TFObservation(statement=nxt, feedback=f"{self._right}/{i + 1} right so far.",
                             reward=reward, done=self._done)

    @property
    def state(self) -> State:
        return self._state


_TRUTH = dict(FACTS)


def policy(observation: dict) -> dict:
    return {"answer": _TRUTH.get(observation["statement"], True)}


app = create_app(TrueFalseEnv, TFAction, TFObservation, env_name="tf_completion",
                 max_concurrent_envs=8)
