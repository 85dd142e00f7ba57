"""Coin change: write min_coins(amount) for the coin system in COINS (a global the grader provides)."""
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


class CoinsAction(Action):
    code: str = ""


class CoinsObservation(Observation):
    task: Dict[str, Any] = {}
    feedback: str = ""

SYSTEMS = [[1, 3, 4], [1, 7, 10], [1, 5, 6, 9], [1, 6, 10]]

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


def min_coins(coins: List[int], amount: int) -> int:
    best = [0] + [10**9] * amount
    for a in range(1, amount + 1):
        best[a] = min(best[a - c] for c in coins if c <= a) + 1
    return best[amount]


def make_task(seed: Optional[int]) -> Dict[str, Any]:
    rng = random.Random(seed)
    coins = SYSTEMS[rng.randrange(len(SYSTEMS))]
    cases = sorted(rng.sample(range(1, 40), 10))
    return {"coins": coins, "function": "min_coins(amount)",
            "prompt": f"Write min_coins(amount) returning the fewest coins from {coins} summing to amount. "
                      f"The coin list is available as the global COINS.",
            "_cases": cases}


def grade(action, task):
    code = f"COINS = {list(task['coins'])!r}\n" + action.code
    results = call_submission(code, [["min_coins", [a]] for a in task["_cases"]])
    if results is None:
        return 0.0, "the submission did not run"
    passed = sum(r.get("value") == min_coins(task["coins"], a) for r, a in zip(results, task["_cases"]))
    reward = 1.0 if passed == len(task["_cases"]) else 0.0
    return reward, f"{passed}/{len(task['_cases'])} tests passed"


class CoinsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._task: Optional[Dict[str, Any]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CoinsObservation:
        self._task = make_task(seed)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CoinsObservation(task=public(self._task))

    def step(self, action: CoinsAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> CoinsObservation:
        if self._task is None or self._done:
            return CoinsObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        reward, feedback = grade(action, self._task)
        return CoinsObservation(task=public(self._task), feedback=feedback, done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def public(task: Dict[str, Any]) -> Dict[str, Any]:
    """What the agent sees: everything except the grader's private keys."""
    return {k: v for k, v in task.items() if not k.startswith("_")}

SOLUTION = """def min_coins(amount):
    best = [0] + [10**9] * amount
    for a in range(1, amount + 1):
        best[a] = min(best[a - c] for c in COINS if c <= a) + 1
    return best[amount]
"""


def policy(observation: dict) -> dict:
    return {"code": SOLUTION}


app = create_app(CoinsEnv, CoinsAction, CoinsObservation, env_name="coin_change",
                 max_concurrent_envs=8)
