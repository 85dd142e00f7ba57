"""Code task: to_roman(n) for 1 <= n <= 3999. Hidden cases run in a subprocess;
score = passed/total (a skipped case is not a pass)."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = "Write `to_roman(n: int) -> str` (1 <= n <= 3999, standard subtractive form). Submit it in `code`."

RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
out = []
for n in json.loads(sys.argv[1]):
    try:
        got = ns['to_roman'](n)
        out.append(got if type(got) is str else None)
    except NotImplementedError:
        out.append("<skipped>")
    except Exception:
        out.append(None)
print(json.dumps(out))
"""


def roman(n: int) -> str:
    vals = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for v, s in vals:
        while n >= v:
            out += s
            n -= v
    return out


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


class RomanEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._cases = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        ns = [rng.randint(1, 3999) for _ in range(8)] + [4, 9, 1994]
        self._cases = [(n, roman(n)) for n in ns]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        total = len(self._cases)
        try:
            p = subprocess.run([sys.executable, "-c", RUNNER, json.dumps([n for n, _ in self._cases])], input=action.code,
                               capture_output=True, text=True, timeout=5)
            outs = json.loads(p.stdout.strip().splitlines()[-1])
            passed = sum(1 for got, (_, want) in zip(outs, self._cases) if got == want)
            res = {"passed": passed, "skipped": outs.count("<skipped>")}
        except Exception:
            res, passed = {}, 0
        reward = passed / total
        return CodeObservation(prompt=PROMPT, feedback=json.dumps(res), done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    import inspect
    return {"code": inspect.getsource(roman).replace("def roman(", "def to_roman(")}


app = create_app(RomanEnv, CodeAction, CodeObservation, env_name="roman", max_concurrent_envs=8)
