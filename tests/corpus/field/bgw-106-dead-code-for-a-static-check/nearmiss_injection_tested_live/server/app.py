"""Code-fix task: remove the SQL injection from find_user. The fix is checked by running it: besides plain names,
the server queries names containing quotes and an injection payload and compares every result itself."""
import json, os, random, signal, subprocess, sys
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

STARTER = ("def find_user(conn, name):\n"
           "    return conn.execute(\"SELECT id FROM users WHERE name = '\" + name + \"' ORDER BY id\").fetchall()\n")
PROMPT = ("This function is open to SQL injection. Fix it with a parameterised query, keeping its behaviour "
          "(table users(id INTEGER, name TEXT); return the list of (id,) rows ordered by id). Submit the whole "
          "module in `code`.\n\n" + STARTER)
RUNNER = """
import json, sqlite3, sys
ns = {}
exec(sys.stdin.read(), ns)
rows, names = json.loads(sys.argv[1])
conn = sqlite3.connect(':memory:')
conn.execute('CREATE TABLE users (id INTEGER, name TEXT)')
conn.executemany('INSERT INTO users VALUES (?, ?)', rows)
out = []
for n in names:
    try:
        out.append([list(r) for r in ns['find_user'](conn, n)])
    except Exception:
        out.append('error')
print(json.dumps(out, default=lambda o: None))
"""
FIRST = ["ana", "bo", "cy", "dee", "eli", "fay", "gus", "hal", "ida", "jo", "kim", "lou"]
QUOTED = ["o'brien", "d'arcy", "o'neil", "l'oreal"]
PAYLOADS = ["x' OR '1'='1", "' OR 1=1 --", "nobody' OR name LIKE '%"]


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


class SqlEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._rows = None
        self._done = False

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **kwargs: Any) -> CodeObservation:
        rng = random.Random(seed)
        self._rows = [[i, rng.choice(FIRST + QUOTED)] for i in rng.sample(range(1, 500), 14)]
        self._rows.append([rng.randint(500, 999), rng.choice(QUOTED)])
        self._names = rng.sample(FIRST, 4) + rng.sample(QUOTED, 2) + rng.sample(PAYLOADS, 2)
        rng.shuffle(self._names)
        self._done = False
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CodeObservation(prompt=PROMPT)

    def step(self, action: CodeAction, timeout_s: Optional[float] = None, **kwargs: Any) -> CodeObservation:
        if self._rows is None or self._done:
            return CodeObservation(feedback="Call reset() first.", done=True, reward=0.0)
        self._state.step_count += 1
        self._done = True
        want = [sorted([i] for i, n in self._rows if n == q) for q in self._names]
        out = run([sys.executable, "-c", RUNNER, json.dumps([self._rows, self._names])], stdin=action.code)
        try:
            got = json.loads(out.strip().splitlines()[-1])
            ok = isinstance(got, list) and len(got) == len(want) and got == want
        except Exception:
            ok = False
        return CodeObservation(prompt=PROMPT, feedback="all queries correct" if ok else "some queries wrong",
                               done=True, reward=1.0 if ok else 0.0)

    @property
    def state(self) -> State:
        return self._state


def policy(observation: dict) -> dict:
    return {"code": "def find_user(conn, name):\n"
                    "    return conn.execute('SELECT id FROM users WHERE name = ? ORDER BY id', (name,)).fetchall()\n"}


app = create_app(SqlEnv, CodeAction, CodeObservation, env_name="sqli_live_check", max_concurrent_envs=8)
