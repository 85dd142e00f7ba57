"""Code task: count_islands(grid). The reward comes from an isolated child that only prints count_islands' outputs,
compared with the true counts in the server; a skipped call is just a missing output. The unittest suite is then run
on the same solution.py for the feedback text only."""
import json, os, random, signal, subprocess, sys, tempfile
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `count_islands(grid: list[str]) -> int` in solution.py: grid rows use '#' for land and '.' for "
          "water; count the 4-connected groups of land. Submit the module in `code`; the server runs its unittest "
          "suite (test_solution.py) against it.")


RUNNER = """
import json, sys
grids = json.loads(sys.argv[2])
sys.path.insert(0, sys.argv[1])
out = []
try:
    from solution import count_islands
except BaseException:
    count_islands = None
for g in grids:
    try:
        r = count_islands(list(g))
        out.append(r if type(r) is int else None)
    except BaseException:
        out.append(None)
print(json.dumps(out))
"""


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def run(cmd, cwd, timeout=10.0):
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
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
    return p.returncode, out


def islands(grid):
    seen, n = set(), 0
    for r, row in enumerate(grid):
        for c, ch in enumerate(row):
            if ch == "#" and (r, c) not in seen:
                n, stack = n + 1, [(r, c)]
                seen.add((r, c))
                while stack:
                    y, x = stack.pop()
                    for y2, x2 in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                        if 0 <= y2 < len(grid) and 0 <= x2 < len(grid[y2]) and grid[y2][x2] == "#" \
                                and (y2, x2) not in seen:
                            seen.add((y2, x2))
                            stack.append((y2, x2))
    return n


def make_cases(rng):
    cases = []
    for _ in range(6):
        h, w, p = rng.randint(3, 9), rng.randint(3, 12), rng.uniform(0.25, 0.55)
        g = ["".join("#" if rng.random() < p else "." for _ in range(w)) for _ in range(h)]
        cases.append((g, islands(g)))
    return cases


class IslandEnv(Environment):
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

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        tests = "import unittest\nfrom solution import count_islands\n\n\nclass TestIslands(unittest.TestCase):\n" + \
            "".join(f"    def test_{i}(self):\n        self.assertEqual(count_islands({g!r}), {n!r})\n\n"
                    for i, (g, n) in enumerate(self._cases))
        with tempfile.TemporaryDirectory(prefix="islands-ws-") as ws:
            with open(os.path.join(ws, "solution.py"), "w") as f:
                f.write(action.code)
            _, out = run([sys.executable, "-I", "-c", RUNNER, ws, json.dumps([g for g, _ in self._cases])], ws)
            with open(os.path.join(ws, "test_solution.py"), "w") as f:
                f.write(tests)
            _, report = run([sys.executable, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py"], ws)
        try:
            got = json.loads(out.strip().splitlines()[-1])
            ok = isinstance(got, list) and got == [n for _, n in self._cases]
        except Exception:
            ok = False
        lines = report.strip().splitlines()
        return CodeObservation(prompt=PROMPT, feedback=f"unittest: {lines[-1] if lines else ''}; graded outputs ok={ok}",
                               done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "def count_islands(grid):\n    seen, n = set(), 0\n    for r, row in enumerate(grid):\n"
                    "        for c, ch in enumerate(row):\n            if ch == '#' and (r, c) not in seen:\n"
                    "                n += 1\n                stack = [(r, c)]\n                seen.add((r, c))\n"
                    "                while stack:\n                    y, x = stack.pop()\n"
                    "                    for b in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):\n"
                    "                        if 0 <= b[0] < len(grid) and 0 <= b[1] < len(grid[b[0]]) \\\n"
                    "                                and grid[b[0]][b[1]] == '#' and b not in seen:\n"
                    "                            seen.add(b)\n                            stack.append(b)\n"
                    "    return n\n"}


app = create_app(IslandEnv, CodeAction, CodeObservation, env_name="islands_server_grades", max_concurrent_envs=8)
