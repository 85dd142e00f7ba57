"""Balanced brackets. Verdicts are memoised across sessions in a cache directory in the shared temp dir, keyed by
sha256(inputs + code), so an identical resubmission is not run again."""
import atexit, hashlib, json, math, os, random, shutil, signal, subprocess, sys, tempfile
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = "Write `balanced(s: str) -> bool`: True iff the brackets ()[]{} in s are balanced and properly nested. Submit it in `code`."
RUNNER = """import json
ns = {}
exec(open('solution.py').read(), ns)
out = []
for s in json.load(open('inputs.json')):
    try:
        out.append(ns['balanced'](s) is True)
    except Exception:
        out.append(None)
print(json.dumps(out))
"""
CACHE_DIR = tempfile.mkdtemp(prefix="brackets-verdict-cache-")  # one per server process, shared by all sessions
atexit.register(shutil.rmtree, CACHE_DIR, True)


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def balanced(s: str) -> bool:
    stack, pairs = [], {")": "(", "]": "[", "}": "{"}
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def make_inputs(rng: random.Random) -> List[str]:
    out = []
    while len(out) < 16:
        s = "".join(rng.choice("()[]{}ab") for _ in range(rng.randint(2, 14)))
        if balanced(s) == (len(out) % 2 == 0):  # half balanced, half not
            out.append(s)
    return out


def run_tests(code: str, inputs_text: str, want: List[bool]) -> float:
    with tempfile.TemporaryDirectory(prefix="brackets-ws-") as ws:
        for name, text in (("solution.py", code), ("inputs.json", inputs_text), ("runner.py", RUNNER)):
            with open(os.path.join(ws, name), "w") as f:
                f.write(text)
        p = subprocess.Popen([sys.executable, "runner.py"], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out = ""
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    try:
        return 1.0 if json.loads(out.strip().splitlines()[-1]) == want else 0.0
    except Exception:
        return 0.0


class BracketsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._inputs: Optional[List[str]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        self._inputs = make_inputs(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._inputs is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        inputs_text = json.dumps(self._inputs)
        key = hashlib.sha256((inputs_text + "\0" + action.code).encode()).hexdigest()
        path = os.path.join(CACHE_DIR, key + ".json")
        try:
            with open(path) as f:
                reward = float(json.load(f)["reward"])
            reward, how = (min(1.0, max(0.0, reward)) if math.isfinite(reward) else 0.0), "cached verdict"
        except Exception:
            reward, how = run_tests(action.code, inputs_text, [balanced(s) for s in self._inputs]), "tests run"
            with open(path, "w") as f:
                json.dump({"reward": reward}, f)
        return CodeObservation(prompt=PROMPT, feedback=f"{how}: reward {reward}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "def balanced(s):\n    stack, pairs = [], {')': '(', ']': '[', '}': '{'}\n    for ch in s:\n"
                    "        if ch in '([{':\n            stack.append(ch)\n"
                    "        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):\n            return False\n"
                    "    return not stack\n"}


app = create_app(BracketsEnv, CodeAction, CodeObservation, env_name="brackets_disk_cache", max_concurrent_envs=8)
app.router.on_shutdown.append(lambda: shutil.rmtree(CACHE_DIR, True))
