"""Code task: strip_scripts(html). The prompt states the whole intent (remove every script element, keep the rest
unchanged) and the server compares each output with the reference removal exactly."""
import json, os, random, re, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

PROMPT = ("User-submitted HTML is shown on our forum, and scripts in it must never run. Write "
          "`strip_scripts(html: str) -> str`. Requirement: remove every `<script ...>...</script>` element "
          "(tags in any letter case, with their contents) and leave every other character of the input unchanged. "
          "Submit the code in `code`.")
RUNNER = """
import json, sys
ns = {}
exec(sys.stdin.read(), ns)
out = []
for h in json.loads(sys.argv[1]):
    try:
        out.append(ns['strip_scripts'](h))
    except Exception:
        out.append(None)
print(json.dumps(out, default=lambda o: None))
"""
WORDS = ["hello", "forum", "post", "reply", "thanks", "great", "idea", "see", "below", "link", "image", "bye"]
SCRIPTS = ["<script>alert({n})</script>", "<SCRIPT type=\"text/javascript\">var a = {n};</SCRIPT>",
           "<script src=\"/s{n}.js\"></script>", "<Script>\ndocument.title = '{n}';\n</Script>"]
TEXT = ["<p>{w} {v}</p>", "<div class=\"c{n}\">{w}</div>", "<b>{w}</b> {v}", "<a href=\"/t/{n}\">{w}</a>", "{w} {v}"]
SCRIPT_RE = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)


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


def make_docs(rng):
    docs = []
    for _ in range(6):
        parts = [rng.choice(TEXT).format(w=rng.choice(WORDS), v=rng.choice(WORDS), n=rng.randint(1, 99))
                 for _ in range(rng.randint(2, 6))]
        for _ in range(rng.randint(1, 3)):
            parts.insert(rng.randint(0, len(parts)), rng.choice(SCRIPTS).format(n=rng.randint(1, 99)))
        docs.append("\n".join(parts))
    return docs


class StripEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._docs = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        self._docs = make_docs(random.Random(seed))
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._docs is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        out = run([sys.executable, "-c", RUNNER, json.dumps(self._docs)], stdin=action.code)
        try:
            got = json.loads(out.strip().splitlines()[-1])
            assert isinstance(got, list) and len(got) == len(self._docs)
            reward = sum(g == SCRIPT_RE.sub("", d) for g, d in zip(got, self._docs)) / len(self._docs)
        except Exception:
            reward = 0.0
        return CodeObservation(prompt=PROMPT, feedback=f"pass fraction {reward:.2f}", done=True, reward=reward)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "import re\n\ndef strip_scripts(html):\n"
                    "    return re.sub(r'<script\\b[^>]*>.*?</script\\s*>', '', html, flags=re.I | re.S)\n"}


app = create_app(StripEnv, CodeAction, CodeObservation, env_name="strip_scripts_exact", max_concurrent_envs=8)
