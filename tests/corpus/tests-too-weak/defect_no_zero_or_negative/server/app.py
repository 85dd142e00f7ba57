"""Code task: count_digits(n). The prompt allows 0 and negatives, but every hidden input is a positive int."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FUNC = "count_digits"
PROMPT = ('Write `count_digits(n: int) -> int`: the number of decimal digits of the integer n, ignoring its sign. n may be any int, including 0 and negative numbers; count_digits(0) == 1 and count_digits(-305) == 3. Submit the Python source in `code`.')

# Runs in a fresh isolated interpreter: defines the submission, calls FUNC on every argument tuple.
RUNNER = r"""
import json, sys
args_list = json.loads(sys.argv[1])
ns = {}
try:
    exec(sys.stdin.read(), ns)
    fn = ns[sys.argv[2]]
except BaseException as e:
    print(json.dumps({"error": type(e).__name__}))
    sys.exit(0)
out = []
for args in args_list:
    try:
        r = fn(*args)
        json.dumps(r)
        out.append({"ok": r})
    except BaseException as e:
        out.append({"err": type(e).__name__})
print(json.dumps(out))
"""


def count_digits(n: int) -> int:
    n = abs(n)
    k = 1
    while n >= 10:
        n //= 10
        k += 1
    return k


def make_inputs(rng: random.Random) -> list:
    # Hidden tests: 20 positive integers of 1..10 digits. Zero and negative numbers are never drawn.
    return [(rng.randint(1, 10 ** rng.randint(1, 10) - 1),) for _ in range(20)]


def accept(got, want) -> bool:
    return type(got) is type(want) and got == want


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    examples: list = []
    feedback: str = ""


class CountDigitsEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._tests = None
        self._examples = []
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        inputs = make_inputs(rng)
        self._tests = [[list(args), count_digits(*args)] for args in inputs]
        self._examples = [{"args": a, "result": r} for a, r in self._tests[:2]]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs()

    def _obs(self, **kw) -> CodeObservation:
        return CodeObservation(prompt=PROMPT, examples=self._examples, **kw)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._tests is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        tests = self._tests
        try:
            p = subprocess.run([sys.executable, "-I", "-c", RUNNER, json.dumps([a for a, _ in tests]), FUNC],
                               input=action.code, capture_output=True, text=True, timeout=3)
            outs = json.loads(p.stdout.strip().splitlines()[-1])
        except Exception:
            outs = None
        if not isinstance(outs, list):
            return self._obs(feedback="submission did not load or run", done=True, reward=0.0)
        passed = sum(1 for o, (_, want) in zip(outs, tests) if isinstance(o, dict) and "ok" in o and accept(o["ok"], want))
        return self._obs(feedback=f"{passed}/{len(tests)} hidden tests passed", done=True,
                         reward=1.0 if passed == len(tests) else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    import inspect
    return {"code": inspect.getsource(count_digits)}


app = create_app(CountDigitsEnv, CodeAction, CodeObservation, env_name="defect_no_zero_or_negative", max_concurrent_envs=8)
