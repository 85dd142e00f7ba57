"""Code task: merge_intervals(xs). The child runs the submission, then compares each result with the expected
list using `==` inside the same process and prints how many cases matched; that count is the reward."""
import json, os, random, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `merge_intervals(xs: list[list[int]]) -> list[list[int]]`: merge overlapping or touching closed "
          "intervals [a, b] and return them sorted by start. Submit the code in `code`.")
TESTS = """
import json as _json, sys as _sys
_passed = 0
_cases = _json.loads(_sys.argv[1])
for _xs, _want in _cases:
    try:
        if merge_intervals([list(p) for p in _xs]) == _want:
            _passed += 1
    except Exception:
        pass
print(_passed)
"""


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def merge(xs):
    out = []
    for a, b in sorted(xs):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def run(cmd, stdin="", timeout=5.0):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        out = ""
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return out


class MergeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._cases = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._cases = []
        for _ in range(8):
            xs = []
            for _ in range(rng.randint(1, 9)):
                a = rng.randint(0, 60)
                xs.append([a, a + rng.randint(0, 12)])
            self._cases.append((xs, merge(xs)))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        out = run([sys.executable, "-c", action.code + "\n\n" + TESTS, json.dumps(self._cases)])
        try:
            passed = int(out.strip().splitlines()[-1])
            reward = min(max(passed, 0), len(self._cases)) / len(self._cases)
        except Exception:
            reward = 0.0
        return CodeObservation(prompt=PROMPT, feedback=f"pass fraction {reward:.2f}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "def merge_intervals(xs):\n    out = []\n    for a, b in sorted(xs):\n"
                    "        if out and a <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], b)\n"
                    "        else:\n            out.append([a, b])\n    return out\n"}


app = create_app(MergeEnv, CodeAction, CodeObservation, env_name="merge_eq_in_child", max_concurrent_envs=8)
