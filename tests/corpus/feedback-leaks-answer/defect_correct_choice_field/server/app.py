"""Multiple-choice vocabulary quiz, two attempts.

Reward: 1.0 for the right letter, 0.0 otherwise. Defect: `correct_choice` (for the UI to
highlight the right option) is filled in after a wrong answer while an attempt remains.
"""
import random
import re
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

VOCAB = {"arid": "very dry", "brisk": "quick and energetic", "candid": "frank and honest",
         "docile": "easy to control", "frugal": "careful with money", "lucid": "clear",
         "morose": "gloomy", "opaque": "not transparent"}
MAX_STEPS = 2


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class QAObservation(Observation):
    question: str = ""
    feedback: str = ""
    choices: List[str] = Field(default_factory=list)
    correct_choice: str = ""
    attempts_left: int = MAX_STEPS


class QAEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._answer, self._done = "", "", False
        self._choices: List[str] = []

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QAObservation:
        rng = random.Random(seed)
        word, meaning = rng.choice(sorted(VOCAB.items()))
        options = rng.sample([m for m in VOCAB.values() if m != meaning], 3) + [meaning]
        rng.shuffle(options)
        self._choices = [f"{'ABCD'[i]}) {o}" for i, o in enumerate(options)]
        self._q, self._answer = f"What does '{word}' mean?", "ABCD"[options.index(meaning)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QAObservation(question=self._q, choices=list(self._choices), reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QAObservation:
        if not self._answer or self._done:
            return QAObservation(question=self._q, choices=list(self._choices), feedback="Episode over.", done=True,
                                 reward=0.0, attempts_left=0)
        self._state.step_count += 1
        given = action.answer.strip()
        ok = given == self._answer
        self._done = ok or self._state.step_count >= MAX_STEPS
        obs = QAObservation(question=self._q, choices=list(self._choices), done=self._done, reward=1.0 if ok else 0.0,
                            attempts_left=MAX_STEPS - self._state.step_count)
        if ok:
            obs.feedback = "Correct."
        else:
            obs.feedback = "Wrong."
            obs.correct_choice = self._answer
        return obs

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    word = observation["question"].split("'")[1]
    for choice in observation["choices"]:
        if choice.endswith(VOCAB[word]):
            return {"answer": choice[0]}
    return {"answer": "A"}


app = create_app(QAEnv, AnswerAction, QAObservation, env_name="qa", max_concurrent_envs=8)
