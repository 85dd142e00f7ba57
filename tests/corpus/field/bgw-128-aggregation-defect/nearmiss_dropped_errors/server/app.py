"""Five arithmetic questions answered in one JSON list; score is the share answered correctly."""
import json
import random
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class QuizAction(Action):
    answers_json: str = "[]"


class QuizObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    qs, ans = [], []
    for _ in range(5):
        a, b, c = rng.randint(100, 999), rng.randint(100, 999), rng.randint(2, 9)
        qs.append(f"{a} * {c} + {b}")
        ans.append(a * c + b)
    return {"questions": qs, "prompt": "Answer all five. Reply with a JSON list of five integers.",
            "_answers": ans}


def score(answers: List[Any], expected: List[int]) -> float:
    correct = attempted = 0
    for got, want in zip(answers, expected):
        try:
            value = int(got)
        except (TypeError, ValueError):
            continue  # unparseable item: counts as wrong
        correct += value == want
    return correct / len(expected)  # every question is in the denominator, missing ones included


def grade(action, task):
    try:
        answers = json.loads(action.answers_json)
    except json.JSONDecodeError:
        return 0.0, "invalid JSON"
    if not isinstance(answers, list):
        return 0.0, "expected a list"
    r = score(answers, task["_answers"])
    return r, f"score {r:.2f}"


class QuizEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> QuizObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return QuizObservation(task=public(self._task))

    def step(self, action: QuizAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> QuizObservation:
        if self._task is None or self._done:
            return QuizObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return QuizObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    out = []
    for q in observation["task"]["questions"]:
        ac, b = q.split(" + ")
        a, c = ac.split(" * ")
        out.append(int(a) * int(c) + int(b))
    return {"answers_json": json.dumps(out)}


app = create_app(QuizEnv, QuizAction, QuizObservation, env_name="arith_batch",
                 max_concurrent_envs=8)
