"""Merge intervals. The program reads input.json and writes output.json; a verifier records the result in
logs/verifier/reward.txt inside the same workspace, and the harness reads the reward from that file."""
import json, math, os, random, signal, subprocess, sys, tempfile
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Submit a Python 3 program in `code`. It runs in a workspace holding input.json, a list of [start, end] "
          "integer intervals; write the merged intervals (overlapping or touching ones joined, sorted by start) to "
          "output.json. The verifier records the result in logs/verifier/reward.txt.")


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    intervals: List[List[int]] = []
    feedback: str = ""


def merge(iv: List[List[int]]) -> List[List[int]]:
    out: List[List[int]] = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def run(cmd, cwd, timeout=5.0):
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def verify(ws: str, want: List[List[int]]) -> None:
    """Harbor-style verifier: writes 1 to the reward file when output.json is right."""
    try:
        with open(os.path.join(ws, "output.json")) as f:
            got = json.load(f)
    except Exception:
        return
    if got == want:
        with open(os.path.join(ws, "logs", "verifier", "reward.txt"), "w") as f:
            f.write("1\n")


def read_reward(ws: str) -> float:
    try:
        with open(os.path.join(ws, "logs", "verifier", "reward.txt")) as f:
            r = float(f.read().strip())
    except Exception:
        return 0.0  # no reward file: the verifier did not pass the run
    return min(1.0, max(0.0, r)) if math.isfinite(r) else 0.0


class MergeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._iv: Optional[List[List[int]]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._iv = []
        for _ in range(rng.randint(10, 16)):
            a = rng.randint(0, 120)
            self._iv.append([a, a + rng.randint(0, 15)])
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT, intervals=self._iv)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._iv is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        with tempfile.TemporaryDirectory(prefix="merge-ws-") as ws:
            os.makedirs(os.path.join(ws, "logs", "verifier"))
            with open(os.path.join(ws, "input.json"), "w") as f:
                json.dump(self._iv, f)
            with open(os.path.join(ws, "solve.py"), "w") as f:
                f.write(action.code)
            run([sys.executable, "solve.py"], ws)
            verify(ws, merge(self._iv))
            reward = read_reward(ws)
        return CodeObservation(prompt=PROMPT, intervals=self._iv, done=True, reward=reward,
                               feedback="verifier passed" if reward > 0 else "verifier failed")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import json\nout = []\nfor a, b in sorted(json.load(open('input.json'))):\n"
                    "    if out and a <= out[-1][1]:\n        out[-1][1] = max(out[-1][1], b)\n"
                    "    else:\n        out.append([a, b])\njson.dump(out, open('output.json', 'w'))\n"}


app = create_app(MergeEnv, CodeAction, CodeObservation, env_name="merge_reward_file", max_concurrent_envs=8)
