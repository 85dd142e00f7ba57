"""Code task: letter_grade(score). Hidden scores are drawn from 0..100 but never equal a grade threshold."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

FUNC = "letter_grade"
PROMPT = ("Write `letter_grade(score: int) -> str` for an integer score 0..100: 'A' for 90 and above, 'B' for 80 and above, 'C' for 70 and above, 'D' for 60 and above, otherwise 'F'. Submit the Python source in `code`.")

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


def letter_grade(score: int) -> str:
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"


def make_inputs(rng: random.Random) -> list:
    # Hidden tests: 20 scores in 0..100, never exactly 60, 70, 80 or 90.
    scores = [s for s in range(101) if s not in (60, 70, 80, 90)]
    return [(s,) for s in rng.sample(scores, 20)]


def accept(got, want) -> bool:
    return type(got) is type(want) and got == want


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    examples: list = []
    feedback: str = ""


class LetterGradeEnv(Environment):
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
        self._tests = [[list(args), letter_grade(*args)] for args in inputs]
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
    return {"code": inspect.getsource(letter_grade)}


app = create_app(LetterGradeEnv, CodeAction, CodeObservation, env_name="defect_boundary_untested", max_concurrent_envs=8)
