"""Stop what an envkit process started when that process dies without stopping it (run as
``python -I FILE TOKEN`` by :mod:`envkit.reaper`, in its own session).

Standard library only. It reads its stdin, a pipe whose other end only the envkit process
holds, until end of file: envkit exited, normally or not (SIGKILL, the OOM killer, a closed
terminal's SIGHUP). Then every live process whose environment holds ``ENVKIT_OWNER=TOKEN``
(read from ``/proc/<pid>/environ``; children inherit it, even after ``setsid()``) gets
SIGTERM and, after up to :data:`GRACE_S` seconds, SIGKILL; and, when envkit wrote
:data:`CONTAINERS_LINE` (it labelled a container), every container, then every network,
labelled ``envkit.owner=TOKEN`` is removed through Docker's API on its local socket
(``DOCKER_HOST`` ``unix://``, or ``/var/run/docker.sock``); then every temporary directory
envkit named on a :data:`TMPDIR_LINE` line (a server's ``TMPDIR``) that is still there is
removed. After a normal exit envkit has stopped and removed them all itself, and there is
nothing to do.
"""

import http.client
import json
import os
import shutil
import signal
import socket
import sys
import time
import urllib.parse

OWNER_VAR = "ENVKIT_OWNER"
OWNER_LABEL = "envkit.owner"
CONTAINERS_LINE = b"containers\n"
TMPDIR_LINE = b"tmpdir "  # then the directory's path as a JSON string, then a newline
GRACE_S = 3.0  # seconds between SIGTERM and SIGKILL
DOCKER_TIMEOUT_S = 30.0


def marked(needle: bytes) -> list[int]:
    """Live processes but this one (zombies excluded) whose environment holds ``needle``
    (``b"NAME=value"``); their ``/proc/<pid>/environ`` is readable for the user's own."""
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


def stop_processes(token: str) -> None:
    """SIGTERM every process marked with ``token``, then SIGKILL what is left after the
    grace period."""
    needle = f"{OWNER_VAR}={token}".encode()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = marked(needle)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + GRACE_S
        while marked(needle) and time.monotonic() < deadline:
            time.sleep(0.05)


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (Docker's local API)."""

    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=DOCKER_TIMEOUT_S)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(DOCKER_TIMEOUT_S)
        sock.connect(self.socket_path)
        self.sock = sock


def docker_socket() -> str:
    """The local Docker socket's path ('' when DOCKER_HOST is not a Unix socket)."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return host[len("unix://") :] if host.startswith("unix://") else ""


def remove_containers(token: str) -> None:
    """Remove (force) every container labelled ``envkit.owner=TOKEN``, then every such
    network (a pool's, once its containers are gone)."""
    path = docker_socket()
    if not path:
        return
    filters = urllib.parse.quote(json.dumps({"label": [f"{OWNER_LABEL}={token}"]}))
    conn = UnixHTTPConnection(path)
    try:
        for listing, removal in (
            (f"/containers/json?all=1&filters={filters}", "/containers/{}?force=1&v=1"),
            (f"/networks?filters={filters}", "/networks/{}"),
        ):
            conn.request("GET", listing)
            listed = json.loads(conn.getresponse().read() or b"[]")
            for item in listed if isinstance(listed, list) else []:
                conn.request("DELETE", removal.format(item["Id"]))
                conn.getresponse().read()
    except (OSError, ValueError, KeyError, TypeError, http.client.HTTPException):
        pass  # no engine, or it went away: nothing more can be done from here
    finally:
        conn.close()


def main(argv: list[str]) -> None:
    token = argv[0]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for envkit
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    containers = False
    tmpdirs: list[str] = []
    while chunk := sys.stdin.buffer.readline():
        containers = containers or chunk == CONTAINERS_LINE
        if chunk.startswith(TMPDIR_LINE):
            try:
                tmpdirs.append(str(json.loads(chunk[len(TMPDIR_LINE) :])))
            except ValueError:  # cut short by envkit's death mid-line
                pass
    stop_processes(token)
    if containers:
        remove_containers(token)
    for path in tmpdirs:  # after the processes that wrote there are gone
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
