"""Code task: write dedupe_sorted(xs) -> sorted list of the distinct ints in xs.
Grader runs the submission in a subprocess on hidden inputs."""
import json, random, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write a Python function `dedupe_sorted(xs: list[int]) -> list[int]` returning the distinct "
          "values of xs in ascending order. Submit the source code in `code`.")

RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
cases = json.loads(sys.argv[1])
out = []
for xs in cases:
    try:
        r = ns['dedupe_sorted'](list(xs))
        out.append(type(r).__name__)
    except Exception as e:
        out.append('error')
print(json.dumps(out))
"""


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


class DedupeEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._cases = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._cases = [[rng.randint(-20, 20) for _ in range(rng.randint(3, 12))] for _ in range(6)]
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        try:
            p = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(self._cases)], input=action.code,
                               capture_output=True, text=True, timeout=5)
            kinds = json.loads(p.stdout.strip().splitlines()[-1])
        except Exception:
            kinds = []
        # the function must run on every case and hand back a list
        passed = sum(1 for k in kinds if k == "list")
        reward = passed / len(self._cases)
        return CodeObservation(prompt=PROMPT, feedback=f"{passed}/{len(self._cases)} cases passed",
                               done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "def dedupe_sorted(xs):\n    return sorted(set(xs))\n"}


app = create_app(DedupeEnv, CodeAction, CodeObservation, env_name="dedupe", max_concurrent_envs=8)
