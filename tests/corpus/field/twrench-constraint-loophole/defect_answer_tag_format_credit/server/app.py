"""Arithmetic word problems graded by a two-part rubric: format (answer in <answer> tags) + correctness."""
import random
import re
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

TEMPLATES = [
    ("A shop has {a} crates with {b} apples in each crate. How many apples are there in total?", lambda a, b: a * b),
    ("A train travels {a} km every hour for {b} hours. How many km does it travel?", lambda a, b: a * b),
    ("Mia had {a} stickers and bought {b} more. How many stickers does she have now?", lambda a, b: a + b),
    ("A library owns {a} books and lends out {b}. How many books remain on the shelves?", lambda a, b: a - b),
]

ANSWER_RE = re.compile(r"<answer>\s*(-?\d+)\s*</answer>")
FORMAT_RE = re.compile(r"<answer>\s*-?\d+")

INSTRUCTIONS = ("Solve the problem. Show your reasoning, then give the final integer inside "
                "<answer></answer> tags. Rubric: 0.3 for the required answer format, 0.7 for the correct value.")


class MathAction(Action):
    reply: str = ""


class MathObservation(Observation):
    problem: str = ""
    instructions: str = INSTRUCTIONS
    feedback: str = ""


class WordProblemEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._problem: Optional[str] = None
        self._answer = 0
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MathObservation:
        rng = random.Random(seed)
        text, fn = TEMPLATES[rng.randrange(len(TEMPLATES))]
        a, b = rng.randint(20, 90), rng.randint(3, 15)
        self._problem, self._answer = text.format(a=a, b=b), fn(a, b)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return MathObservation(problem=self._problem)

    def _grade(self, reply: str) -> float:
        m = ANSWER_RE.search(reply)
        correct = bool(m) and int(m.group(1)) == self._answer
        format_ok = bool(FORMAT_RE.search(reply))
        return round(0.3 * format_ok + 0.7 * correct, 4)

    def step(self, action: MathAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MathObservation:
        if self._problem is None or self._done:
            return MathObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        r = self._grade(action.reply)
        return MathObservation(problem=self._problem, feedback=f"score {r}", done=True, reward=r)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    """The oracle: parses the problem and computes the answer."""
    p = observation["problem"]
    a, b = (int(x) for x in re.findall(r"\d+", p)[:2])
    for text, fn in TEMPLATES:
        if text.format(a=a, b=b) == p:
            return {"reply": f"Working it out step by step. <answer>{fn(a, b)}</answer>"}
    return {"reply": ""}


app = create_app(WordProblemEnv, MathAction, MathObservation, env_name="word_problems",
                 max_concurrent_envs=8)
