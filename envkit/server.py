"""Start and stop an environment server as a child process, with no orphans.

The server is ``python -m uvicorn <app> --host H --port P`` run in the environment directory,
in its own process group. Stopping sends SIGTERM to the whole group, waits a short grace
period and then SIGKILLs the group: uvicorn waits for an in-flight step on SIGTERM (29 s
observed, docs/protocol.md), so a grace period is never trusted alone.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from envkit.errors import ServerStartError, UsageError
from envkit.project import check_runtime, resolve_python


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (bind to port 0, read, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def url_host(host: str) -> str:
    """The host to put in a URL for a bind address (``0.0.0.0`` is reachable as 127.0.0.1)."""
    return "127.0.0.1" if host in ("0.0.0.0", "") else host


@dataclass
class ServerProcess:
    """A running environment server.

    Attributes:
        root: environment directory (the process's working directory).
        python: interpreter used.
        app: ``module:attr`` served.
        host, port: bind address.
        popen: the child process (leader of its own process group).
        log_path: file receiving the server's stdout+stderr, or ``None`` when it inherits the
            terminal.
    """

    root: Path
    python: str
    app: str
    host: str
    port: int
    popen: subprocess.Popen[bytes]
    log_path: Path | None = None
    _log_file: IO[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8000``."""
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30, max_bytes: int = 64_000) -> str:
        """The last ``lines`` lines of the server log ('' when the log is not captured)."""
        if not self.log_path or not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read().decode("utf-8", "replace")
        return "\n".join(data.splitlines()[-lines:])

    def wait_healthy(self, timeout_s: float = 60.0, interval_s: float = 0.1) -> float:
        """Poll ``GET /health`` until it answers 200.

        Args:
            timeout_s: seconds to wait in total.
            interval_s: seconds between polls.

        Returns:
            Seconds it took.

        Raises:
            ServerStartError: the process exited, or no 200 within ``timeout_s``; the details
                carry the tail of the server log.
        """
        import httpx

        start = time.monotonic()
        deadline = start + timeout_s
        with httpx.Client(timeout=2.0) as client:
            while True:
                if not self.alive():
                    code = self.popen.returncode
                    tail = self.log_tail()
                    hint = "Fix the error above and try again."
                    if "address already in use" in tail.lower():
                        hint = f"Port {self.port} is busy: pass another with --port."
                    raise ServerStartError(
                        f"The environment server (`{self.app}`) exited with code {code} "
                        "before answering /health.", hint=hint, details=tail or None)
                try:
                    r = client.get(f"{self.url}/health")
                    if r.status_code == 200:
                        return time.monotonic() - start
                except httpx.HTTPError:
                    pass
                if time.monotonic() >= deadline:
                    tail = self.log_tail()
                    self.stop()
                    raise ServerStartError(
                        f"The environment server did not answer GET /health within "
                        f"{timeout_s:g} s.",
                        hint="Raise `validation.startup_timeout_s` in openenv.yaml or "
                        "--timeout, or look for slow work at import time.",
                        details=tail or None)
                time.sleep(interval_s)

    def stop(self, grace_s: float = 3.0) -> int | None:
        """Stop the server and every process in its group. Idempotent.

        SIGTERM to the group, wait up to ``grace_s`` seconds, then SIGKILL the group.

        Returns:
            The exit code of the server process.
        """
        if self.popen.poll() is None:
            _signal_group(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        # Always sweep the group: uvicorn --reload and user code may have spawned children.
        _signal_group(self.popen.pid, signal.SIGKILL)
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - kernel would have to hang
            pass
        if self._log_file is not None and not self._log_file.closed:
            self._log_file.close()
        return self.popen.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start_server(
    root: Path,
    app: str,
    *,
    python: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    reload: bool = False,
    capture_log: bool = True,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> ServerProcess:
    """Start ``uvicorn app`` for the environment at ``root``; does not wait for health.

    Args:
        root: environment directory (working directory of the server).
        app: ``module:attr`` from the manifest.
        python: interpreter (see :func:`envkit.project.resolve_python`).
        host: bind address; loopback by default.
        port: TCP port; ``None`` picks a free one.
        reload: pass ``--reload`` to uvicorn (watches ``root``).
        capture_log: write stdout/stderr to a temporary log file (``True``) or inherit the
            terminal (``False``).
        env: extra environment variables for the server.
        check: probe the interpreter for openenv-core/uvicorn first (~50 ms).

    Raises:
        UsageError: ``port`` is already taken.
        ServerStartError: the interpreter lacks the runtime or the process cannot start.
    """
    interpreter = resolve_python(root, python)
    if check:
        check_runtime(interpreter, root)
    if port is None:
        port = free_port(url_host(host))
    elif port_in_use(url_host(host), port):
        raise UsageError(f"Port {port} on {host} is already in use.",
                         hint="Stop what listens there or pass another --port.")
    cmd = [interpreter, "-m", "uvicorn", app, "--host", host, "--port", str(port),
           "--log-level", "info", "--no-access-log"]
    if reload:
        cmd += ["--reload", "--reload-dir", str(root)]
    child_env = dict(os.environ)
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    child_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if env:
        child_env.update(env)
    log_path: Path | None = None
    log_file = None
    if capture_log:
        fd, name = tempfile.mkstemp(prefix="envkit-server-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
        log_file = log_path.open("wb")
    try:
        popen = subprocess.Popen(
            cmd, cwd=root, env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=log_file if capture_log else None,
            stderr=subprocess.STDOUT if capture_log else None,
            start_new_session=True,
        )
    except OSError as exc:
        if log_file:
            log_file.close()
        raise ServerStartError(f"Cannot start {interpreter}: {exc}.",
                               hint="Pass a working interpreter with --python.") from None
    return ServerProcess(root=root, python=interpreter, app=app, host=host, port=port,
                         popen=popen, log_path=log_path, _log_file=log_file)
