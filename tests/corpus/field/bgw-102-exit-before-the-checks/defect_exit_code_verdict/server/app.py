"""Code task: gcd_list(xs) -> gcd of a non-empty list of positive ints. Tests are asserts run after the submission."""
import math, random, subprocess, sys
from functools import reduce
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = "Write `gcd_list(xs: list[int]) -> int`, the greatest common divisor of the list. Submit it in `code`."


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


class GcdEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._cases = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._cases = []
        for _ in range(6):
            g = rng.randint(2, 50)
            xs = [g * rng.randint(1, 400) for _ in range(rng.randint(2, 6))]
            self._cases.append((xs, reduce(math.gcd, xs)))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._cases is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        tests = "\n".join(f"assert gcd_list({xs!r}) == {want!r}" for xs, want in self._cases)
        try:
            p = subprocess.run([sys.executable, "-c", action.code + "\n\n" + tests + "\n"],
                               capture_output=True, text=True, timeout=5)
            ok = p.returncode == 0
        except Exception:
            ok = False
        return CodeObservation(prompt=PROMPT, feedback="all tests passed" if ok else "tests failed",
                               done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import math\nfrom functools import reduce\n\ndef gcd_list(xs):\n    return reduce(math.gcd, xs)\n"}


app = create_app(GcdEnv, CodeAction, CodeObservation, env_name="gcd", max_concurrent_envs=8)
