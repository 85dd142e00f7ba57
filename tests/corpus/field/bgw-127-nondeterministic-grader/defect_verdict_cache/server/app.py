"""Write is_prime; each seed selects one of three hidden test sets; verdicts are cached."""
import hashlib
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


class PrimeAction(Action):
    code: str = ""


class PrimeObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

TEST_SETS = [
    [(2, True), (3, True), (4, False), (7, True), (11, True), (10, False)],
    [(9, False), (13, True), (17, True), (6, False), (2, True), (1, False)],
    [(15, False), (23, True), (29, True), (8, False), (25, False), (5, True)],
]
_verdicts: Dict[str, bool] = {}  # grading is the slow part: remember verdicts for identical code

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
    return {"function": "is_prime", "prompt": "Write is_prime(n: int) -> bool. Submit Python source.",
            "_tests": TEST_SETS[(seed or 0) % len(TEST_SETS)]}


def run_tests(code: str, tests) -> bool:
    results = call_submission(code, [["is_prime", [x]] for x, _ in tests])
    return results is not None and all(r.get("value") is want for r, (_, want) in zip(results, tests))


def grade(action, task):
    key = hashlib.sha256(action.code.encode()).hexdigest()
    if key not in _verdicts:
        _verdicts[key] = run_tests(action.code, task["_tests"])
    ok = _verdicts[key]
    return (1.0 if ok else 0.0), ("pass" if ok else "fail")


class PrimeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> PrimeObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return PrimeObservation(task=public(self._task))

    def step(self, action: PrimeAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> PrimeObservation:
        if self._task is None or self._done:
            return PrimeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return PrimeObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"code": "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n"}


app = create_app(PrimeEnv, PrimeAction, PrimeObservation, env_name="prime_cached",
                 max_concurrent_envs=8)
