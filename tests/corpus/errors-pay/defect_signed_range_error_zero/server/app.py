"""Multiple-choice capital-city quiz, reward in [-1, 1].

Reward: +1 for the right letter, -1 for a wrong letter (penalise confident mistakes).
Defect: an answer that is not one of the letters is "not an answer", so it gets
`status="invalid"` and a neutral 0.0: one step of garbage beats every wrong answer by 1.0.
"""
import random
from typing import Any, List, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FACTS = {"France": "Paris", "Peru": "Lima", "Kenya": "Nairobi", "Japan": "Tokyo",
         "Chile": "Santiago", "Egypt": "Cairo", "Canada": "Ottawa", "Norway": "Oslo"}
LETTERS = "ABCD"


class ChoiceAction(Action):
    answer: str = Field(..., max_length=20)


class QuizObservation(Observation):
    question: str = ""
    choices: List[str] = Field(default_factory=list)
    status: str = "open"
    message: str = ""


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._q, self._choices, self._right, self._done = "", [], "", False

    def _obs(self, status: str, message: str, reward: float) -> QuizObservation:
        return QuizObservation(question=self._q, choices=list(self._choices), status=status,
                               message=message, done=self._done, reward=reward)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        rng = random.Random(seed)
        country = rng.choice(sorted(FACTS))
        wrong = rng.sample([c for k, c in sorted(FACTS.items()) if k != country], 3)
        options = wrong + [FACTS[country]]
        rng.shuffle(options)
        self._q = f"What is the capital of {country}?"
        self._choices = [f"{LETTERS[i]}) {o}" for i, o in enumerate(options)]
        self._right = LETTERS[options.index(FACTS[country])]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs("open", "Answer with a letter A-D.", 0.0)

    def step(self, action: ChoiceAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if not self._right or self._done:
            self._done = True
            return self._obs("closed", "Episode over.", -1.0)
        self._state.step_count += 1
        self._done = True
        letter = action.answer.strip().upper()[:1]
        if len(action.answer.strip()) != 1 or letter not in LETTERS:
            return self._obs("invalid", f"Invalid choice {action.answer[:20]!r}: use A-D.", 0.0)
        if letter == self._right:
            return self._obs("correct", "Correct.", 1.0)
        return self._obs("wrong", "Wrong.", -1.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    country = observation["question"].rsplit(" ", 1)[-1].rstrip("?")
    for choice in observation["choices"]:
        if choice.endswith(FACTS[country]):
            return {"answer": choice[0]}
    return {"answer": "A"}


app = create_app(QuizEnv, ChoiceAction, QuizObservation, env_name="quiz", max_concurrent_envs=8)
