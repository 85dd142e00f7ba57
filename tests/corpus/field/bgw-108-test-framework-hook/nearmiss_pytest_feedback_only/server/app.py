"""Code task: parse_duration(text), submitted as .py files in a scratch workspace. The reward comes from an
isolated child that only prints parse_duration's outputs, compared in the server; pytest is then run in the
workspace (conftest.py and all) for the feedback text only."""
import json, os, random, re, signal, subprocess, sys, tempfile
from typing import Any, Dict, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `parse_duration(text: str) -> int` in solution.py: text is like '1h30m15s', '45m', '2h5s' (units "
          "h, m, s in that order, each optional but at least one present); return the total seconds. Submit "
          "`files` mapping file names to contents (solution.py plus any helper modules you want). The server adds "
          "test_solution.py and runs pytest in that directory.")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}\.py$")
RUNNER = """
import json, sys
texts = json.loads(sys.argv[2])
sys.path.insert(0, sys.argv[1])
out = []
try:
    from solution import parse_duration
except BaseException:
    parse_duration = None
for t in texts:
    try:
        r = parse_duration(t)
        out.append(r if type(r) is int else None)
    except BaseException:
        out.append(None)
print(json.dumps(out))
"""


class FilesAction(Action):
    files: Dict[str, str] = {}


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def run(cmd, cwd, env, timeout=30.0):
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out = ""
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return out


def make_cases(rng):
    cases = []
    for _ in range(8):
        h, m, s = rng.choice([0, rng.randint(1, 30)]), rng.choice([0, rng.randint(1, 59)]), rng.randint(0, 59)
        text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s or not (h or m) else "")
        cases.append((text, 3600 * h + 60 * m + s))
    return cases


class DurationEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._cases = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        self._cases = make_cases(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: FilesAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        files = {k: v for k, v in (action.files or {}).items() if NAME.match(k) and isinstance(v, str)}
        tests = "from solution import parse_duration\n\n" + "".join(
            f"def test_{i}():\n    assert parse_duration({t!r}) == {w!r}\n\n" for i, (t, w) in enumerate(self._cases))
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTEST_ADDOPTS", None)
        with tempfile.TemporaryDirectory(prefix="duration-ws-") as ws:
            for name, text in list(files.items())[:8]:
                with open(os.path.join(ws, name), "w") as f:
                    f.write(text)
            out = run([sys.executable, "-I", "-c", RUNNER, ws, json.dumps([t for t, _ in self._cases])], ws, env, 10.0)
            for name, text in (("test_solution.py", tests), ("pytest.ini", "[pytest]\n")):
                with open(os.path.join(ws, name), "w") as f:
                    f.write(text)
            report = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_solution.py"], ws, env)
        try:
            got = json.loads(out.strip().splitlines()[-1])
            assert isinstance(got, list) and len(got) == len(self._cases)
            ok = sum(g == w for g, (_, w) in zip(got, self._cases)) == len(self._cases)
        except Exception:
            ok = False
        summary = report.strip().splitlines()[-1] if report.strip() else ""
        return CodeObservation(prompt=PROMPT, feedback=f"pytest: {summary[-160:]}; graded outputs ok={ok}",
                               done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"files": {"solution.py": "import re\n\ndef parse_duration(text):\n"
                      "    m = re.fullmatch(r'(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?', text)\n"
                      "    h, mi, s = (int(g or 0) for g in m.groups())\n    return 3600 * h + 60 * mi + s\n"}}


app = create_app(DurationEnv, FilesAction, CodeObservation, env_name="duration_server_grades", max_concurrent_envs=8)
