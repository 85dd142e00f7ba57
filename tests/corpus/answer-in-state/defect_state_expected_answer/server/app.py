"""Two-operand word problems; one attempt. Defect: the State subclass carries expected_answer."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from pydantic import Field

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

NAMES = ["Ana", "Ben", "Chloe", "Dev", "Emi"]
ITEMS = ["apples", "stamps", "marbles", "books"]


class AnswerAction(Action):
    answer: str = Field(..., max_length=200)


class ProblemObservation(Observation):
    problem: str = ""
    feedback: str = ""


class ProblemState(State):
    problem: str = ""
    expected_answer: str = ""


class WordProblemEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = ProblemState(episode_id=str(uuid4()))
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ProblemObservation:
        rng = random.Random(seed)
        name, item = rng.choice(NAMES), rng.choice(ITEMS)
        a, b, c = rng.randint(20, 90), rng.randint(3, 9), rng.randint(2, 15)
        problem = (f"{name} has {a} {item}, buys {b} boxes of {c} {item} each and gives away "
                   f"{c + b}. How many {item} does {name} have now?")
        self._state = ProblemState(episode_id=episode_id or str(uuid4()), step_count=0,
                                   problem=problem, expected_answer=str(a + b * c - (c + b)))
        self._done = False
        return ProblemObservation(problem=problem, reward=0.0)

    def step(self, action: AnswerAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ProblemObservation:
        if self._done or not self._state.expected_answer:
            return ProblemObservation(feedback="Episode over.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        nums = re.findall(r"-?\d+", action.answer)
        ok = bool(nums) and nums[-1] == self._state.expected_answer
        return ProblemObservation(problem=self._state.problem, feedback="Correct." if ok else "Incorrect.",
                                  done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> ProblemState:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c, d = (int(x) for x in re.findall(r"\d+", observation["problem"]))
    return {"answer": str(a + b * c - d)}


app = create_app(WordProblemEnv, AnswerAction, ProblemObservation, env_name="word_problem",
                 max_concurrent_envs=8)
