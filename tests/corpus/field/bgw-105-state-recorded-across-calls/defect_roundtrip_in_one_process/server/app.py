"""Code task: a compressor pair. The child calls compress(s) and then decompress(t) in the same process and checks
the round trip and the size bound; the pass fraction it prints is the reward."""
import json, os, random, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `compress(s: str) -> str` and `decompress(t: str) -> str` for strings of lowercase letters with "
          "long runs. Required: decompress(compress(s)) == s and len(compress(s)) <= len(s) // 2. Submit in `code`.")
RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
ok = 0
for s in json.loads(sys.argv[1]):
    try:
        t = ns['compress'](s)
        if type(t) is str and len(t) <= len(s) // 2:
            d = ns['decompress'](t)
            ok += type(d) is str and d == s
    except Exception:
        pass
print(ok)
"""


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    feedback: str = ""


def run(cmd, stdin="", timeout=5.0):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
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


def make_strings(rng):
    out = []
    for _ in range(8):
        s, prev = "", ""
        for _ in range(rng.randint(3, 12)):
            c = rng.choice([x for x in "abcdefghijklmnopqrstuvwxyz" if x != prev])
            s, prev = s + c * rng.randint(5, 40), c
        out.append(s)
    return out


class RleEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._strings = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        self._strings = make_strings(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._strings is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        out = run([sys.executable, "-c", RUNNER, json.dumps(self._strings)], stdin=action.code)
        try:
            reward = min(max(int(out.strip().splitlines()[-1]), 0), len(self._strings)) / len(self._strings)
        except Exception:
            reward = 0.0
        return CodeObservation(prompt=PROMPT, feedback=f"pass fraction {reward:.2f}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import itertools, re\n\ndef compress(s):\n"
                    "    return ''.join(c + str(len(list(g))) for c, g in itertools.groupby(s))\n\n"
                    "def decompress(t):\n    return ''.join(c * int(n) for c, n in re.findall(r'([a-z])(\\d+)', t))\n"}


app = create_app(RleEnv, CodeAction, CodeObservation, env_name="rle_roundtrip_same_process", max_concurrent_envs=8)
