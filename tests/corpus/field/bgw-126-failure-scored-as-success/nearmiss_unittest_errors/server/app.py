"""Write-a-function tasks graded by hidden tests; the submission runs in a separate interpreter."""
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


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

SPECS = [
    ("run_length", "Write run_length(s: str) -> list of [char, count] pairs, e.g. 'aab' -> [['a', 2], ['b', 1]].",
     [["aab"], [""], ["zzzzy"], ["abc"], ["xxyyyx"]]),
    ("digit_sum", "Write digit_sum(n: int) -> int, the sum of the decimal digits of |n|.",
     [[0], [9], [1234], [-507], [99999]]),
]


def run_length_ref(s):
    out = []
    for ch in s:
        if out and out[-1][0] == ch:
            out[-1][1] += 1
        else:
            out.append([ch, 1])
    return out


def digit_sum_ref(n):
    return sum(int(c) for c in str(abs(n)))


REFS = {"run_length": run_length_ref, "digit_sum": digit_sum_ref}

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
    fn, text, cases = SPECS[random.Random(seed).randrange(len(SPECS))]
    return {"function": fn, "prompt": text + " Submit Python source defining it.", "_cases": cases}


def grade(action, task):
    fn, cases = task["function"], task["_cases"]
    results = call_submission(action.code, [[fn, args] for args in cases])
    if results is None:
        return 0.0, "the submission did not run"
    failures = errors = 0
    for args, res in zip(cases, results):
        if "error" in res:
            errors += 1  # the test crashed: recorded as an error, like unittest does
        elif res["value"] != REFS[fn](*args):
            failures += 1
    passed = failures == 0 and errors == 0
    return (1.0 if passed else 0.0), f"ran {len(cases)}, failures {failures}, errors {errors}"


class CodeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CodeObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(task=public(self._task))

    def step(self, action: CodeAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CodeObservation:
        if self._task is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return CodeObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

SOLUTIONS = {
    "run_length": "def run_length(s):\n    out = []\n    for ch in s:\n        if out and out[-1][0] == ch:\n            out[-1][1] += 1\n        else:\n            out.append([ch, 1])\n    return out\n",
    "digit_sum": "def digit_sum(n):\n    return sum(int(c) for c in str(abs(n)))\n",
}


def policy(observation: dict) -> dict:
    return {"code": SOLUTIONS[observation["task"]["function"]]}


app = create_app(CodeEnv, CodeAction, CodeObservation, env_name="function_grader",
                 max_concurrent_envs=8)
