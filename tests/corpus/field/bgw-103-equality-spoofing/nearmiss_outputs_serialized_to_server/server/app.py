"""Code task: merge_intervals(xs). The child only receives the inputs and prints the results as JSON; the server
decodes them into plain lists and compares them with the expected intervals itself."""
import json, os, random, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `merge_intervals(xs: list[list[int]]) -> list[list[int]]`: merge overlapping or touching closed "
          "intervals [a, b] and return them sorted by start. Submit the code in `code`.")
RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
out = []
for xs in json.loads(sys.argv[1]):
    try:
        out.append(ns['merge_intervals']([list(p) for p in xs]))
    except Exception:
        out.append(None)
print(json.dumps(out, default=lambda o: None))
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
        out = run([sys.executable, "-c", RUNNER, json.dumps([xs for xs, _ in self._cases])], stdin=action.code)
        try:
            got = json.loads(out.strip().splitlines()[-1])
            assert isinstance(got, list) and len(got) == len(self._cases)
            reward = sum(g == w for g, (_, w) in zip(got, self._cases)) / len(self._cases)
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


app = create_app(MergeEnv, CodeAction, CodeObservation, env_name="merge_server_compare", max_concurrent_envs=8)
