"""Code task: second_largest(xs). Hidden tests include repeated maxima, all-equal lists and single elements."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FUNC = "second_largest"
PROMPT = ('Write `second_largest(xs: list[int])`: the second largest DISTINCT value in the non-empty list xs, or None if xs holds fewer than two distinct values (second_largest([5, 5, 3]) == 3, second_largest([4, 4]) is None). Submit the Python source in `code`.')

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


def second_largest(xs: list):
    best = None
    second = None
    for x in xs:
        if best is None or x > best:
            if best is not None:
                second = best
            best = x
        elif x != best and (second is None or x > second):
            second = x
    return second


def make_inputs(rng: random.Random) -> list:
    # Hidden tests: 8 lists with distinct values, 6 whose maximum is repeated, 3 all-equal lists, 3 singletons.
    out = []
    for i in range(20):
        if i < 8:
            xs = rng.sample(range(-50, 51), rng.randint(2, 9))
        elif i < 14:
            xs = rng.sample(range(-50, 51), rng.randint(2, 7))
            xs += [max(xs)] * rng.randint(1, 3)
            rng.shuffle(xs)
        elif i < 17:
            xs = [rng.randint(-50, 50)] * rng.randint(2, 5)
        else:
            xs = [rng.randint(-50, 50)]
        out.append((xs,))
    rng.shuffle(out)
    return out


def accept(got, want) -> bool:
    return type(got) is type(want) and got == want


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    examples: list = []
    feedback: str = ""


class SecondLargestEnv(Environment):
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
        self._tests = [[list(args), second_largest(*args)] for args in inputs]
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
    return {"code": inspect.getsource(second_largest)}


app = create_app(SecondLargestEnv, CodeAction, CodeObservation, env_name="nearmiss_second_largest_duplicates", max_concurrent_envs=8)
