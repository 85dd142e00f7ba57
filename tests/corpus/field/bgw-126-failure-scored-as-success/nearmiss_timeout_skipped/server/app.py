"""Stdin/stdout program task: print gcd(a, b); each run has a 0.5 s limit."""
import math
import random
import subprocess
import sys
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class GcdAction(Action):
    program: str = ""


class GcdObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

TIME_LIMIT_S = 0.5


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    inputs = [" ".join(str(rng.randint(1, 10**6)) for _ in range(2)) for _ in range(3)]
    return {"prompt": "Write a Python program that reads two integers a b from stdin and prints gcd(a, b). "
                      "It is run on 3 hidden inputs.", "_inputs": inputs}


def expected_output(line: str) -> str:
    a, b = (int(x) for x in line.split())
    return f"{math.gcd(a, b)}\n"


def run_case(code: str, stdin: str) -> Optional[str]:
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=stdin,
                          capture_output=True, text=True, timeout=TIME_LIMIT_S)
    return proc.stdout


def grade(action, task):
    for line in task["_inputs"]:
        try:
            out = run_case(action.program, line + "\n")
        except subprocess.TimeoutExpired:
            return 0.0, "time limit exceeded"
        if out != expected_output(line):
            return 0.0, "wrong output"
    return 1.0, "all cases pass"


class GcdEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> GcdObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return GcdObservation(task=public(self._task))

    def step(self, action: GcdAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> GcdObservation:
        if self._task is None or self._done:
            return GcdObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return GcdObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

def policy(observation: dict) -> dict:
    return {"program": "import math\na, b = map(int, input().split())\nprint(math.gcd(a, b))\n"}


app = create_app(GcdEnv, GcdAction, GcdObservation, env_name="gcd_stdio",
                 max_concurrent_envs=8)
