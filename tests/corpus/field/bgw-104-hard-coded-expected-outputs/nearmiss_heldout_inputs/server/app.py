"""Code task: collatz_steps(n). The prompt shows worked examples; grading adds 20 held-out inputs; the submission is run in a subprocess."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
out = []
for n in json.loads(sys.argv[1]):
    try:
        r = ns['collatz_steps'](n)
        out.append(r if type(r) is int else None)
    except Exception:
        out.append(None)
print(json.dumps(out))
"""


def collatz_steps(n: int) -> int:
    k = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    examples: list = []
    feedback: str = ""


class CollatzEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._examples = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        ns = rng.sample(range(2, 100000), 25)
        self._examples = [[n, collatz_steps(n)] for n in ns[:5]]
        self._hidden = [[n, collatz_steps(n)] for n in ns[5:]]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return self._obs()

    def _obs(self, **kw) -> CodeObservation:
        return CodeObservation(prompt="Write `collatz_steps(n: int) -> int`: the number of Collatz steps from n "
                               "(n >= 1) down to 1. Submit the source in `code`.", examples=self._examples, **kw)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._examples is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        tests = self._examples + self._hidden
        try:
            p = subprocess.run([sys.executable, "-c", RUNNER, json.dumps([n for n, _ in tests])],
                               input=action.code, capture_output=True, text=True, timeout=5)
            outs = json.loads(p.stdout.strip().splitlines()[-1])
        except Exception:
            outs = []
        passed = sum(1 for got, (_, want) in zip(outs, tests) if got == want)
        return self._obs(feedback=f"{passed}/{len(tests)} passed", done=True, reward=1.0 if passed == len(tests) else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    import inspect
    return {"code": inspect.getsource(collatz_steps)}


app = create_app(CollatzEnv, CodeAction, CodeObservation, env_name="collatz", max_concurrent_envs=8)
