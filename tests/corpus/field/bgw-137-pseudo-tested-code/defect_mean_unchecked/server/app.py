"""Implement mean and variance; graded by hidden tests."""
import math
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


class StatsAction(Action):
    code: str = ""


class StatsObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

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
    rng = random.Random(seed)
    data = [[rng.randint(1, 50) for _ in range(rng.randint(4, 9))] for _ in range(3)]
    return {"prompt": "Implement mean(xs) and variance(xs) (population variance) in Python; "
                      "the grader calls both on hidden lists.", "_data": data}


def ref_mean(xs):
    return sum(xs) / len(xs)


def ref_variance(xs):
    m = ref_mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


def close(a: Any, b: float) -> bool:
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def run_tests(results: List[Dict[str, Any]], data) -> bool:
    for xs, (m, v) in zip(data, zip(results[0::2], results[1::2])):
        if "error" in m:  # smoke test: mean must run on the data
            return False
        if not close(v.get("value"), ref_variance(xs)):
            return False
    return True


def grade(action, task):
    calls = []
    for xs in task["_data"]:
        calls += [["mean", [xs]], ["variance", [xs]]]
    results = call_submission(action.code, calls)
    ok = results is not None and run_tests(results, task["_data"])
    return (1.0 if ok else 0.0), ("pass" if ok else "fail")


class StatsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> StatsObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return StatsObservation(task=public(self._task))

    def step(self, action: StatsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> StatsObservation:
        if self._task is None or self._done:
            return StatsObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return StatsObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

SOLUTION = """def mean(xs):
    return sum(xs) / len(xs)


def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)
"""


def policy(observation: dict) -> dict:
    return {"code": SOLUTION}


app = create_app(StatsEnv, StatsAction, StatsObservation, env_name="mean_variance",
                 max_concurrent_envs=8)
