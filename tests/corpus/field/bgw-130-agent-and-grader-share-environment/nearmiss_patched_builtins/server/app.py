"""Implement my_sort(xs); the submission runs in a subprocess."""
import json
import random
import subprocess
import sys
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class SortAction(Action):
    code: str = ""


class SortObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

HARNESS = """
import json, sys
cases = json.loads(sys.argv[1])
print(json.dumps({"outputs": [my_sort(list(xs)) for xs in cases]}))
"""


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    cases = [[rng.randint(-99, 99) for _ in range(rng.randint(5, 12))] for _ in range(4)]
    return {"prompt": "Implement my_sort(xs) -> a new list with the items of xs in ascending order.",
            "_cases": cases}


def run_submission(code: str, cases) -> Optional[Dict[str, Any]]:
    # the agent code runs in a fresh interpreter that only prints its outputs
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code + "\n" + HARNESS, json.dumps(cases)],
                          capture_output=True, text=True, timeout=10)
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return None


def grade(action, task):
    try:
        result = run_submission(action.code, task["_cases"])
    except subprocess.TimeoutExpired:
        return 0.0, "timeout"
    # the subprocess only reports outputs; expected values are computed here, in the grader's process
    outputs = (result or {}).get("outputs")
    ok = isinstance(outputs, list) and outputs == [sorted(xs) for xs in task["_cases"]]
    return (1.0 if ok else 0.0), ("pass" if ok else "fail")


class SortEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> SortObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return SortObservation(task=public(self._task))

    def step(self, action: SortAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> SortObservation:
        if self._task is None or self._done:
            return SortObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return SortObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

SOLUTION = """def my_sort(xs):
    out = []
    for x in xs:
        i = 0
        while i < len(out) and out[i] <= x:
            i += 1
        out.insert(i, x)
    return out
"""


def policy(observation: dict) -> dict:
    return {"code": SOLUTION}


app = create_app(SortEnv, SortAction, SortObservation, env_name="my_sort",
                 max_concurrent_envs=8)
