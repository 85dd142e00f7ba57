"""Fast prime counting. A harness script imports the solution and prints count_primes(n); the server times the
whole child process with its own monotonic clock and pays for a correct and fast answer."""
import json, math, os, random, signal, subprocess, sys, tempfile, time
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

BUDGET_S = 0.6
PROMPT = (f"Write a fast `count_primes(n: int) -> int` (number of primes <= n). It is timed on one call; a correct "
          f"answer within {BUDGET_S} s (whole run, start-up included) earns 1.0, a correct but slower one 0.2. Submit it in `code`.")
HARNESS = """import json, sys
sys.path.insert(0, '.')
from solution import count_primes
print(json.dumps({'result': count_primes(int(sys.argv[1]))}))
"""


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    n: int = 0
    feedback: str = ""


def sieve_count(n: int) -> int:
    if n < 2:
        return 0
    s = bytearray([1]) * (n + 1)
    s[0] = s[1] = 0
    for i in range(2, math.isqrt(n) + 1):
        if s[i]:
            s[i * i::i] = bytes(len(range(i * i, n + 1, i)))
    return sum(s)


class PrimeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._n: Optional[int] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        self._n = random.Random(seed).randint(700_000, 900_000)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT, n=self._n)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._n is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        out, elapsed = "", math.inf
        with tempfile.TemporaryDirectory(prefix="primes-ws-") as ws:
            for name, text in (("solution.py", action.code), ("harness.py", HARNESS)):
                with open(os.path.join(ws, name), "w") as f:
                    f.write(text)
            t0 = time.monotonic()  # the server's clock, outside the solution's process
            p = subprocess.Popen([sys.executable, "harness.py", str(self._n)], cwd=ws, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, start_new_session=True)
            try:
                out, _ = p.communicate(timeout=15)
                elapsed = time.monotonic() - t0
            except subprocess.TimeoutExpired:
                pass
            finally:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        try:
            rep = json.loads(out.strip().splitlines()[-1])
            correct = type(rep["result"]) is int and rep["result"] == sieve_count(self._n)
        except Exception:
            correct = False
        reward = (1.0 if elapsed <= BUDGET_S else 0.2) if correct else 0.0
        return CodeObservation(prompt=PROMPT, n=self._n, done=True, reward=reward,
                               feedback=f"correct={correct} elapsed={elapsed:.4f}s")

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import math\n\ndef count_primes(n):\n    if n < 2:\n        return 0\n"
                    "    s = bytearray([1]) * (n + 1)\n    s[0] = s[1] = 0\n"
                    "    for i in range(2, math.isqrt(n) + 1):\n        if s[i]:\n"
                    "            s[i * i::i] = bytes(len(range(i * i, n + 1, i)))\n    return sum(s)\n"}


app = create_app(PrimeEnv, CodeAction, CodeObservation, env_name="primes_timer_in_server", max_concurrent_envs=8)
