"""Multiple-choice arithmetic quiz: four options A-D, the agent answers with the letter."""
import random
import re
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

LETTERS = "ABCD"


class MCAction(Action):
    answer: str = ""


class MCObservation(Observation):
    question: str = ""
    options: Dict[str, int] = {}
    feedback: str = ""


def make_item(seed: Optional[int]):
    rng = random.Random(seed)
    a, b = rng.randint(12, 99), rng.randint(12, 99)
    right = a * b
    wrong = {right + rng.choice([-10, 10]), right + rng.choice([-1, 1]) * a, right + rng.choice([-1, 1]) * b}
    while len(wrong) < 3:
        wrong.add(right + rng.randint(2, 9))
    values = [right] + sorted(wrong)[:3]
    rng.shuffle(values)
    options = dict(zip(LETTERS, values))
    key = LETTERS[values.index(right)]
    return f"What is {a} * {b}? Answer with the letter of the correct option.", options, key


ANSWER_RE = re.compile(r"^\s*(?:the answer is\s*)?\(?([A-D])\)?\.?\s*$", re.IGNORECASE)


def grade(answer: str, key: str) -> bool:
    # models often answer "(B)", "B.", "The answer is B" -- accept exactly one letter in these forms
    m = ANSWER_RE.match(answer)
    return bool(m) and m.group(1).upper() == key


class MCEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._item = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> MCObservation:
        self._item = make_item(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return MCObservation(question=self._item[0], options=self._item[1])

    def step(self, action: MCAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> MCObservation:
        if self._item is None or self._done:
            return MCObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = grade(action.answer, self._item[2])
        return MCObservation(question=self._item[0], options=self._item[1],
                             feedback="Correct." if ok else "Incorrect.", done=True,
                             reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    q = observation["question"].split("?")[0].replace("What is ", "")
    a, b = (int(x) for x in q.split(" * "))
    for letter, value in observation["options"].items():
        if value == a * b:
            return {"answer": letter}
    return {"answer": "A"}


app = create_app(MCEnv, MCAction, MCObservation, env_name="mc_quiz", max_concurrent_envs=8)
