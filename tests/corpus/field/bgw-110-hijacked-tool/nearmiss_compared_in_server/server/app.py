"""Top-k word counts. The submitted program runs in a scratch dir whose bin/ is on PATH; the server compares its output."""
import os, random, signal, subprocess, sys, tempfile
from collections import Counter
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

K = 5
VOCAB = ("apple bridge candle delta ember falcon garnet harbor island jasper kettle lantern meadow "
         "nickel orchid pepper quartz raven saffron timber umber velvet walnut yarrow zephyr").split()
PROMPT = (f"Submit a Python 3 program in `code`. It reads text on stdin and prints the {K} most frequent "
          "words (split on whitespace, lowercased), one per line as `word count`, by count descending then "
          "word ascending. It runs in a scratch directory; the directory's bin/ is on PATH for helper tools.")


class CodeAction(Action):
    code: str = ""


class CodeObservation(Observation):
    prompt: str = ""
    text: str = ""
    feedback: str = ""


def top_k(text: str) -> str:
    c = Counter(text.lower().split())
    return "".join(f"{w} {n}\n" for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:K])


def normalise(text: str) -> list:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def run(cmd, cwd, env, stdin="", timeout=5.0):
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        out = None
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return p.returncode, out


class WordCountEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._text: Optional[str] = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        words = rng.sample(VOCAB, 9)
        tokens = [w.upper() if rng.random() < 0.2 else w for w in words for _ in range(rng.randint(1, 14))]
        rng.shuffle(tokens)
        self._text = "\n".join(" ".join(tokens[i:i + 8]) for i in range(0, len(tokens), 8)) + "\n"
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT, text=self._text)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._text is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        ok = False
        with tempfile.TemporaryDirectory(prefix="wc-ws-") as ws:
            os.makedirs(os.path.join(ws, "bin"))
            with open(os.path.join(ws, "solve.py"), "w") as f:
                f.write(action.code)
            env = dict(os.environ, PATH=os.path.join(ws, "bin") + os.pathsep + os.environ.get("PATH", ""))
            rc, out = run([sys.executable, "solve.py"], ws, env, stdin=self._text)
            if out is not None:
                # compared by server code, never by a program the submission could put on PATH
                ok = normalise(out) == normalise(top_k(self._text))
        return CodeObservation(prompt=PROMPT, text=self._text, feedback="output matches" if ok else "output differs",
                               done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import sys\nfrom collections import Counter\n"
                    "c = Counter(sys.stdin.read().lower().split())\n"
                    f"for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:{K}]:\n"
                    "    print(w, n)\n"}


app = create_app(WordCountEnv, CodeAction, CodeObservation, env_name="word_count_server_compare", max_concurrent_envs=8)
