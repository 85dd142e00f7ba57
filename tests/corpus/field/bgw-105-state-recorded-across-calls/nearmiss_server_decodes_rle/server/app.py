"""Code task: a run-length compressor. The child only calls compress(s) and prints the results; the server decodes
them with its own fixed-format decoder and checks the round trip and the size bound."""
import json, os, random, re, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("Write `compress(s: str) -> str` for strings of lowercase letters with long runs, in run-length form: "
          "each run written as its letter followed by its length in decimal (e.g. 'aaab' -> 'a3b1'). The server "
          "decodes your output and requires it to equal s, with len(compress(s)) <= len(s) // 2. Submit in `code`.")
RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
out = []
for s in json.loads(sys.argv[1]):
    try:
        out.append(ns['compress'](s))
    except Exception:
        out.append(None)
print(json.dumps(out, default=lambda o: None))
"""
TOKEN = re.compile(r"([a-z])([1-9][0-9]{0,3})")


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


def decode(t):
    if not isinstance(t, str) or TOKEN.sub("", t) != "":
        return None
    return "".join(c * int(n) for c, n in TOKEN.findall(t))


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
            got = json.loads(out.strip().splitlines()[-1])
            assert isinstance(got, list) and len(got) == len(self._strings)
            ok = sum(isinstance(t, str) and len(t) <= len(s) // 2 and decode(t) == s
                     for t, s in zip(got, self._strings))
            reward = ok / len(self._strings)
        except Exception:
            reward = 0.0
        return CodeObservation(prompt=PROMPT, feedback=f"pass fraction {reward:.2f}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import itertools\n\ndef compress(s):\n"
                    "    return ''.join(c + str(len(list(g))) for c, g in itertools.groupby(s))\n"}


app = create_app(RleEnv, CodeAction, CodeObservation, env_name="rle_server_decodes", max_concurrent_envs=8)
