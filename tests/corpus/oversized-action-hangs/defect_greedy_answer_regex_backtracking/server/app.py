"""Solve a two-step word problem and end with 'Final answer: N'; 1.0 if N is right, else 0.0."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

# greedy .* so that the LAST "Final answer:" of the completion counts (models restate it)
ANSWER_RE = re.compile(r"(?s).*Final answer:\s*(-?\d+)")


class CompletionAction(Action):
    completion: str


class ProblemObservation(Observation):
    problem: str = ""
    feedback: str = ""


class WordProblemEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._answer, self._done = None, True

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> ProblemObservation:
        rng = random.Random(seed)
        a, b, c = rng.randint(3, 9), rng.randint(10, 40), rng.randint(1, 20)
        self._answer, self._done = a * b - c, False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        problem = (f"A shop sells {a} boxes of {b} pencils and then {c} pencils are lost. "
                   f"How many pencils are left? End with 'Final answer: N'.")
        return ProblemObservation(problem=problem, reward=0.0)

    def step(self, action: CompletionAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> ProblemObservation:
        if self._answer is None or self._done:
            return ProblemObservation(done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        m = ANSWER_RE.search(action.completion)
        if m is None:
            return ProblemObservation(done=True, reward=0.0, feedback="No 'Final answer:' found.")
        ok = int(m.group(1)) == self._answer
        return ProblemObservation(done=True, reward=1.0 if ok else 0.0,
                                  feedback="Correct." if ok else "Incorrect.")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    a, b, c = map(int, re.findall(r"\d+", observation["problem"])[:3])
    return {"completion": f"{a} times {b} minus {c} gives Final answer: {a * b - c}"}


app = create_app(WordProblemEnv, CompletionAction, ProblemObservation, env_name="word_problem",
                 max_concurrent_envs=8)
