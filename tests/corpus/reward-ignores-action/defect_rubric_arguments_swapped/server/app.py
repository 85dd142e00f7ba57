"""Copy the sentence exactly, with its punctuation (3 attempts).

Defect: the Rubric's forward takes (action, observation) but step() calls it with the
arguments swapped; both objects have a `text` field, so it compares the shown sentence
with itself and every action earns 1.0.
"""
import random
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.rubrics import Rubric

SENTENCES = ["The quick brown fox jumps.", "Rain falls, rivers rise.", "Keep calm; carry on!",
             "Two plus two is four.", "Owls hunt at night.", "Bread needs yeast, salt & time."]
MAX_ATTEMPTS = 3


class TextAction(Action):
    text: str


class CopyObservation(Observation):
    text: str = ""
    feedback: str = ""


class ExactCopy(Rubric):
    def __init__(self) -> None:
        super().__init__()
        self.target = ""

    def forward(self, action: Any, observation: Any) -> float:
        return 1.0 if action.text == self.target else 0.0


class CopyEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__(rubric=ExactCopy())
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CopyObservation:
        self.rubric.target = random.Random(seed).choice(SENTENCES)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CopyObservation(text=self.rubric.target, feedback="Copy it exactly.", reward=0.0)

    def step(self, action: TextAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CopyObservation:
        if self._done or not self.rubric.target:
            return CopyObservation(feedback="Episode over.", reward=0.0, done=True)
        self._state.step_count += 1
        obs = CopyObservation(text=self.rubric.target)
        score = self.rubric(obs, action)
        self._done = score == 1.0 or self._state.step_count >= MAX_ATTEMPTS
        obs.feedback, obs.reward, obs.done = ("Exact." if score else "Not exact."), score, self._done
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"text": observation["text"]}


app = create_app(CopyEnv, TextAction, CopyObservation, env_name="copy_swapped",
                 max_concurrent_envs=8)
