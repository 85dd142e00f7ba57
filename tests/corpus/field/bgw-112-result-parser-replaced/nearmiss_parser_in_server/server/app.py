"""to_roman(n). run_tests.py (in the workspace) records the outputs in results.json; the parser that compares
them with the expected values and computes the pass fraction is a function of the server itself."""
import json, os, random, signal, subprocess, sys, tempfile
from typing import Any, List, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = "Write `to_roman(n: int) -> str` (1 <= n <= 3999, standard subtractive numerals). Submit it in `code`."
RUN_TESTS = """import json, sys
from solution import to_roman
out = []
for n in json.load(open('inputs.json')):
    try:
        out.append(to_roman(n))
    except Exception as e:
        out.append('error: %r' % e)
json.dump(out, open('results.json', 'w'))
"""
VALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
        (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def roman(n: int) -> str:
    s = ""
    for v, r in VALS:
        while n >= v:
            s, n = s + r, n - v
    return s


def parse_results(ws: str, want: List[str]) -> float:
    try:
        with open(os.path.join(ws, "results.json")) as f:
            got = json.load(f)
    except Exception:
        return 0.0
    if not isinstance(got, list):
        return 0.0
    return sum(isinstance(g, str) and g == w for g, w in zip(got, want)) / len(want)


def run(cmd, cwd, stdin="", timeout=5.0):
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
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


class RomanEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._inputs: Optional[List[int]] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._inputs = [rng.randint(1, 3999) for _ in range(10)] + [4, 9, 40, 90, 400, 900, 3999]
        rng.shuffle(self._inputs)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._inputs is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        with tempfile.TemporaryDirectory(prefix="roman-ws-") as ws:
            for name, text in (("solution.py", action.code), ("run_tests.py", RUN_TESTS),
                               ("inputs.json", json.dumps(self._inputs))):
                with open(os.path.join(ws, name), "w") as f:
                    f.write(text)
            run([sys.executable, "run_tests.py"], ws)
            reward = parse_results(ws, [roman(n) for n in self._inputs])
        return CodeObservation(prompt=PROMPT, feedback=f"pass fraction {reward:.2f}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": f"VALS = {VALS!r}\n\ndef to_roman(n):\n    s = ''\n    for v, r in VALS:\n"
                    "        while n >= v:\n            s, n = s + r, n - v\n    return s\n"}


app = create_app(RomanEnv, CodeAction, CodeObservation, env_name="roman_parser_in_server", max_concurrent_envs=8)
