"""What envkit starts does not outlive envkit, however envkit ends.

envkit stops its servers, oracles and containers itself (on Ctrl-C and SIGTERM too). When it
cannot (SIGKILL, the OOM killer, a closed terminal's SIGHUP, a CI job's time limit), the
reaper does: a small process (:mod:`envkit.programs.reaper`) started with the first thing
this envkit process owns, whose stdin is a pipe only this process holds. At end of file (this
process is gone) it stops every live process whose environment holds
``ENVKIT_OWNER=<token>`` (SIGTERM, then SIGKILL 3 s later), when this process created
any, removes every container and network labelled ``envkit.owner=<token>`` (Docker's API on
its local socket), and removes the temporary directories made by :func:`owned_tmpdir`. Linux
only (it reads ``/proc``); elsewhere the token is given and nothing watches it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading

from envkit import programs
from envkit.programs.reaper import CONTAINERS_LINE, OWNER_LABEL, OWNER_VAR, TMPDIR_LINE

__all__ = ["OWNER_LABEL", "OWNER_VAR", "owned_tmpdir", "owner_labels", "owner_token"]


class _Owner:
    """This process's token and reaper (one per process: a forked child makes its own)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.token = os.urandom(16).hex()
        self.reaper = _start(self.token)
        self.told_containers = False


_lock = threading.Lock()
_owner: _Owner | None = None


def _current() -> _Owner:
    global _owner
    with _lock:
        if _owner is None or _owner.pid != os.getpid():
            _owner = _Owner()
        return _owner


def owner_token() -> str:
    """This process's ``ENVKIT_OWNER`` value (32 hex digits), for a child's environment; the
    first call starts the reaper (one process start, ~10-20 ms)."""
    return _current().token


def owner_labels() -> dict[str, str]:
    """``{"envkit.owner": token}``, for a container or network this process owns (never for
    one meant to outlive it, such as a detached one): the reaper removes it when this
    process is gone."""
    owner = _current()
    with _lock:
        if not owner.told_containers:
            owner.told_containers = _tell(owner, CONTAINERS_LINE)
    return {OWNER_LABEL: owner.token}


def owned_tmpdir(prefix: str) -> str:
    """A new private directory under :func:`tempfile.gettempdir` (``mkdtemp``, mode 0700)
    that the reaper removes should this process die without removing it itself.

    Raises:
        OSError: the temporary directory is not writable.
    """
    path = tempfile.mkdtemp(prefix=prefix)
    owner = _current()
    with _lock:
        _tell(owner, TMPDIR_LINE + json.dumps(path).encode() + b"\n")
    return path


def _tell(owner: _Owner, line: bytes) -> bool:
    """Write ``line`` to the reaper; ``False`` when there is none (or it is gone)."""
    if owner.reaper is None or owner.reaper.stdin is None:
        return False
    try:
        owner.reaper.stdin.write(line)
        owner.reaper.stdin.flush()
    except OSError:
        return False
    return True


def _start(token: str) -> subprocess.Popen[bytes] | None:
    """The reaper of ``token``, or ``None`` where it cannot run (no ``/proc``, no process)."""
    if not os.path.isdir("/proc"):
        return None
    # Only what it reads: no marker of an outer envkit's, whose reaper would stop it
    # before its own sweep.
    env = {"DOCKER_HOST": os.environ["DOCKER_HOST"]} if "DOCKER_HOST" in os.environ else {}
    try:
        return subprocess.Popen(
            [sys.executable, "-I", str(programs.path("reaper")), token],
            stdin=subprocess.PIPE,  # this end is inheritable by no child (PEP 446)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # signals for envkit's terminal do not reach it
        )
    except OSError:
        return None
