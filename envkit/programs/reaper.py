"""Stop what an envkit process started when that process dies without stopping it (run as
``python -I FILE TOKEN`` by :func:`envkit.server.owner_env`, in its own session).

Standard library only. It reads its stdin, a pipe whose other end only the envkit process
holds, until end of file: envkit exited, normally or not (SIGKILL, the OOM killer, a closed
terminal's SIGHUP). Then every live process whose environment holds
``ENVKIT_OWNER=TOKEN`` (read from ``/proc/<pid>/environ``; children inherit it, even after
``setsid()``) gets SIGTERM and, after up to :data:`GRACE_S` seconds, SIGKILL. After a normal
exit envkit has already stopped them, and there is nothing to do.
"""

import os
import signal
import sys
import time

OWNER_VAR = "ENVKIT_OWNER"
GRACE_S = 3.0  # seconds between SIGTERM and SIGKILL


def owned(needle: bytes) -> list[int]:
    """Live processes (zombies excluded) whose environment holds ``needle``."""
    found = []
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
        except OSError:  # gone meanwhile, or not ours
            continue
        found.append(int(name))
    return found


def sweep(token: str) -> None:
    """SIGTERM every process marked with ``token``, then SIGKILL what is left after the
    grace period."""
    needle = f"{OWNER_VAR}={token}".encode()
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        pids = owned(needle)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait_s
        while owned(needle) and time.monotonic() < deadline:
            time.sleep(0.05)


def main(argv: list[str]) -> None:
    token = argv[0]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for envkit
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while sys.stdin.buffer.read(65536):  # envkit never writes: only end of file matters
        pass
    sweep(token)


if __name__ == "__main__":
    main(sys.argv[1:])
