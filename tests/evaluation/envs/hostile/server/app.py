"""Server of the hostile environment. HOSTILE_MODE picks one misbehaviour:

- ``hang_reset`` / ``hang_step``: ``reset`` / ``step`` never answers.
- ``flood``: prints ~1 MB per 50 ms to stdout for as long as it runs.
- ``setsid``: starts a child that starts a grandchild which calls ``setsid()`` (leaves the
  process group) and listens on a TCP port; the grandchild writes ``<pid> <port>`` to
  ``$HOSTILE_STATE_DIR/grandchild``.
- ``tmpfile``: writes a file through ``tempfile`` at start and the path of that file to
  ``$HOSTILE_STATE_DIR/tmpfile``.
"""

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402
from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import State  # noqa: E402

from models import HostileAction, HostileObservation  # noqa: E402

MODE = os.environ.get("HOSTILE_MODE", "")

_GRANDCHILD = r"""
import os, socket, sys, time
os.setsid()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
path = os.path.join(sys.argv[1], "grandchild")
with open(path + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {s.getsockname()[1]}")
os.replace(path + ".tmp", path)
time.sleep(3600)
"""
_CHILD = r"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
time.sleep(3600)
"""


def _flood() -> None:
    line = ("flood " * 170 + "\n").encode()  # ~1 KB
    block = line * 1024
    while True:
        sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
        time.sleep(0.05)


if MODE == "flood":
    threading.Thread(target=_flood, daemon=True).start()
if MODE == "tmpfile":
    _fd, _made = tempfile.mkstemp(prefix="hostile-")
    os.close(_fd)
    Path(os.environ["HOSTILE_STATE_DIR"], "tmpfile").write_text(_made)
if MODE == "setsid":
    subprocess.Popen([sys.executable, "-c", _CHILD, _GRANDCHILD,
                      os.environ["HOSTILE_STATE_DIR"]])


class HostileEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> HostileObservation:
        if MODE == "hang_reset":
            time.sleep(3600)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return HostileObservation(done=False, reward=0.0)

    def step(self, action: HostileAction, timeout_s: Optional[float] = None,
             **kwargs: Any) -> HostileObservation:
        if MODE == "hang_step":
            time.sleep(3600)
        self._state.step_count += 1
        return HostileObservation(echoed=action.message, done=self._state.step_count >= 3,
                                  reward=min(len(action.message), 10) / 10)

    @property
    def state(self) -> State:
        return self._state


app = create_app(HostileEnvironment, HostileAction, HostileObservation, env_name="hostile",
                 max_concurrent_envs=4)
