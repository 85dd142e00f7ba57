"""Write-a-predicate tasks (is_prime, is_leap) checked against a fixed list of hidden tests."""
import json
import random
import subprocess
import sys
from typing import List
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class PredicateAction(Action):
    code: str = ""


class PredicateObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

TASKS = [
    ("is_prime", "Write is_prime(n: int) -> bool (True iff n is a prime number)."),
    ("is_leap", "Write is_leap(year: int) -> bool for the Gregorian calendar."),
]
TESTS = {
    "is_prime": [(2, True), (3, True), (5, True), (7, True), (11, True), (13, True), (4, False), (8, False), (10, False)],
    "is_leap": [(2024, True), (2020, True), (1996, True), (2023, False), (2019, False), (2001, False)],
}

RUNNER = """
import json, sys
_results = []
for _name, _args in json.loads(sys.argv[1]):
    try:
        _results.append({"value": globals()[_name](*_args)})
    except Exception as _exc:
        _results.append({"error": type(_exc).__name__})
print("\\n@@RESULTS@@" + json.dumps(_results))
"""


def call_submission(code: str, calls: List[list]) -> Optional[List[Dict[str, Any]]]:
    """Run the agent's code in a separate interpreter; return one {value}|{error} per call, or None."""
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", code + "\n" + RUNNER, json.dumps(calls)],
                              capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return None
    at = proc.stdout.rfind("@@RESULTS@@")
    if at < 0:
        return None
    try:
        results = json.loads(proc.stdout[at + len("@@RESULTS@@"):].splitlines()[0])
    except (json.JSONDecodeError, IndexError):
        return None
    return results if isinstance(results, list) and len(results) == len(calls) else None


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    fn, text = TASKS[(seed or 0) % len(TASKS)]
    return {"function": fn, "prompt": text + " Submit Python source."}


def grade(action, task):
    fn = task["function"]
    tests = TESTS[fn]
    results = call_submission(action.code, [[fn, [x]] for x, _ in tests])
    ok = results is not None and all(r.get("value") is want for r, (_, want) in zip(results, tests))
    return (1.0 if ok else 0.0), ("all tests pass" if ok else "a test failed")


class PredicateEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PredicateObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PredicateObservation(task=public(self._task))

    def step(self, action: PredicateAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PredicateObservation:
        if self._task is None or self._done:
            return PredicateObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return PredicateObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

SOLUTIONS = {
    "is_prime": "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n",
    "is_leap": "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
}


def policy(observation: dict) -> dict:
    return {"code": SOLUTIONS[observation["task"]["function"]]}


app = create_app(PredicateEnv, PredicateAction, PredicateObservation, env_name="predicates",
                 max_concurrent_envs=8)
