"""Start and stop an environment server as a child process, leaving nothing behind.

The server is ``python -m uvicorn <app> --fd N`` run in the environment directory, in its own
process group, serving a socket envkit bound and listens on before it started the process
(:func:`listen_socket`): the port is the server's from the moment it is chosen, so a /health
answer on it is this server's (a port picked free and bound later by the child can be taken
in between by another process, whose server then answers). The other launch forms
(``main()``, a Dockerfile's command) bind ``--host``/``--port`` themselves.

Stopping sends SIGTERM to the whole group, waits a short grace period and then SIGKILLs the
group: uvicorn waits for an in-flight step on SIGTERM (29 s observed with openenv-core 0.3.0,
docs/protocol.md), so a grace period is never trusted alone.

Nothing survives a stop: every process envkit starts for an environment
carries ``ENVKIT_RUN_ID=<id>`` in its environment, which its children inherit even when they
leave the process group with ``setsid()``. After the group is killed, :func:`kill_marked`
scans ``/proc`` for that marker and SIGKILLs what is left; :attr:`ServerProcess.strays` says
what had to be killed. (A process that rewrites its environment and re-execs escapes the
marker; on systems without ``/proc`` only the process group is swept.) Nor does one outlive
envkit: each also carries ``ENVKIT_OWNER=<token of this envkit process>``, and a small
reaper process (:mod:`envkit.reaper`, started with the first one) stops every
process holding that token once envkit is gone, even by SIGKILL.

Nothing is written to disk: the server's stdout and stderr go to a pipe
read by a thread that keeps only the last :data:`LOG_TAIL_BYTES` bytes in memory, enough for
error messages, however much the server prints. Nor is anything left in the machine's
temporary directory: each server gets a private one (``TMPDIR``,
:attr:`ServerProcess.tmpdir`), removed when it is stopped (or by the reaper), as a Space's
``/tmp`` goes with its container. What the environment (or a program it runs) writes
through :mod:`tempfile` goes there; a path written out (``/tmp/x``) does not.

Any OpenEnv layout starts by itself: :func:`start_server` starts the
manifest's app from the environment folder first; when that process exits before answering
``GET /health``, :meth:`ServerProcess.wait_healthy` stops it and starts the next way the
environment's files describe (:func:`envkit.envdir.launch.launch_candidates`: the package form from
the parent folder, ``[project.scripts] server``, the Dockerfile's command), until one is
healthy. :attr:`ServerProcess.candidate` says which one worked; when none does, the error
leads with the root-cause line of the log (:func:`envkit.envdir.launch.root_cause`), then the command
tried, then the log tail.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from envkit.envdir.launch import LaunchCandidate, RootCause, launch_candidates, root_cause
from envkit.envdir.project import check_runtime, resolve_python
from envkit.errors import ServerStartError, UsageError
from envkit.fsutil import cache_dir
from envkit.programs.reaper import marked
from envkit.reaper import OWNER_VAR, owned_tmpdir, owner_token

RUN_ID_VAR = "ENVKIT_RUN_ID"  # marker inherited by every process started for an environment
LOG_TAIL_BYTES = 1024 * 1024  # the most of a server's output kept (in memory), bytes
_READ_CHUNK = 64 * 1024


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (bind to port 0, read, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening, for a server process to inherit.

    Args:
        host: bind address (IPv4, or IPv6 when it contains ``:``).
        port: TCP port, 0 for one the kernel picks (read it with ``getsockname()``).

    Raises:
        OSError: the address is taken (``errno.EADDRINUSE``) or not this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # as uvicorn does: a port whose last connections are in TIME_WAIT can be bound again
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog
    except OSError:
        sock.close()
        raise
    return sock


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def url_host(host: str) -> str:
    """The host to put in a URL for a bind address (``0.0.0.0`` is reachable as 127.0.0.1)."""
    return "127.0.0.1" if host in ("0.0.0.0", "") else host


def new_run_id() -> str:
    """A fresh value for :data:`RUN_ID_VAR` (random, 32 hex digits)."""
    return uuid.uuid4().hex


def bytecode_env(base: Mapping[str, str]) -> dict[str, str]:
    """Variables for a child of the environment's interpreter (``base``: its environment):
    compiled bytecode goes to envkit's cache, ``$XDG_CACHE_HOME/envkit/pycache``
    (``PYTHONPYCACHEPREFIX``), never into ``__pycache__`` folders of the environment's
    directory, and is reused by the next run. Without it every server start compiles
    openenv and what it imports from source (about 2.5 s of a 6 s start here). A user's own
    ``PYTHONPYCACHEPREFIX`` or ``PYTHONDONTWRITEBYTECODE`` is kept; without a writable cache
    directory nothing is written (``PYTHONDONTWRITEBYTECODE=1``)."""
    if base.get("PYTHONPYCACHEPREFIX") or base.get("PYTHONDONTWRITEBYTECODE"):
        return {}
    cache = cache_dir("pycache")
    if cache is None:
        return {"PYTHONDONTWRITEBYTECODE": "1"}
    return {"PYTHONPYCACHEPREFIX": str(cache)}


def marked_env(run_id: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment plus ``extra``, the ``ENVKIT_RUN_ID`` marker and this
    process's ``ENVKIT_OWNER`` token (:func:`owner_token`), for a child."""
    env = dict(os.environ)
    if extra:
        env.update(extra)
    env[RUN_ID_VAR] = run_id
    env[OWNER_VAR] = owner_token()
    return env


def marked_pids(run_id: str) -> dict[int, str]:
    """Live processes whose environment holds ``ENVKIT_RUN_ID=run_id``: ``{pid: command}``.

    Reads ``/proc/<pid>/environ`` (readable for the user's own processes); empty where
    ``/proc`` does not exist. Zombies are skipped (they hold no resources but a PID).
    """
    found: dict[int, str] = {}
    if not os.path.isdir("/proc"):
        return found
    for pid in marked(f"{RUN_ID_VAR}={run_id}".encode()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        found[pid] = cmd.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200]
    return found


def kill_marked(run_id: str, *, timeout_s: float = 5.0) -> list[str]:
    """SIGKILL every live process marked with ``run_id`` and wait until none is left.

    Args:
        run_id: the ``ENVKIT_RUN_ID`` value given to the processes.
        timeout_s: seconds to keep sweeping (a process may fork while being killed).

    Returns:
        ``"pid 123: python -c ..."`` for each process that had to be killed (empty when the
        process-group kill had already stopped everything).
    """
    killed: dict[int, str] = {}
    deadline = time.monotonic() + timeout_s
    while True:
        left = marked_pids(run_id)
        if not left or time.monotonic() > deadline:
            break
        for pid, cmd in left.items():
            killed.setdefault(pid, cmd)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    return [f"pid {pid}: {cmd}" for pid, cmd in sorted(killed.items())]


class LogTail:
    """Reads a child's output pipe on a thread and keeps its last ``max_bytes`` bytes.

    A server printing hundreds of MB costs envkit at most ``max_bytes`` of memory and no
    disk; the thread ends at EOF (every writer gone). ``echo``, when given, is also called
    with every chunk read (bytes, not split into lines), on that thread.
    """

    def __init__(
        self,
        stream: object,
        max_bytes: int = LOG_TAIL_BYTES,
        echo: Callable[[bytes], None] | None = None,
    ):
        self._stream = stream
        self.max_bytes = max_bytes
        self._echo = echo
        self._buf = bytearray()
        self.total_bytes = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, daemon=True, name="envkit-server-log")
        self._thread.start()

    def _pump(self) -> None:
        read = getattr(self._stream, "read1", None) or self._stream.read  # type: ignore[attr-defined]
        try:
            while True:
                chunk = read(_READ_CHUNK)
                if not chunk:
                    break
                with self._lock:
                    self.total_bytes += len(chunk)
                    self._buf += chunk
                    if len(self._buf) > self.max_bytes:
                        del self._buf[: len(self._buf) - self.max_bytes]
                if self._echo is not None:
                    self._echo(chunk)
        except (OSError, ValueError):  # closed under us at stop
            pass

    def text(self, lines: int = 30) -> str:
        """The last ``lines`` lines (UTF-8, undecodable bytes replaced)."""
        with self._lock:
            data = bytes(self._buf[-64_000:])
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])

    def wait_eof(self, timeout_s: float = 2.0) -> None:
        """Wait up to ``timeout_s`` seconds for every writer to be gone (the pipe read to
        its end), so :meth:`text` holds a dead process's last words."""
        self._thread.join(timeout_s)

    def close(self, timeout_s: float = 2.0) -> None:
        """Wait for EOF up to ``timeout_s`` seconds, then close the pipe."""
        self._thread.join(timeout_s)
        try:
            self._stream.close()  # type: ignore[attr-defined]
        except OSError:
            pass


@dataclass(frozen=True)
class Attempt:
    """One way of starting the server that exited before answering ``GET /health``.

    Attributes:
        candidate: what was started (:class:`envkit.envdir.launch.LaunchCandidate`).
        command: the command line, as a user would type it.
        exit_code: the process's exit code.
        log_tail: the last lines of its output ('' when not captured).
        cause: the root-cause line of the log (:func:`envkit.envdir.launch.root_cause`), or ``None``.
    """

    candidate: LaunchCandidate
    command: str
    exit_code: int | None
    log_tail: str
    cause: RootCause | None

    def layout_error(self) -> bool:
        """The failure says the form is wrong (the module is not importable this way: a
        relative import without its package, uvicorn cannot import the app module), not that
        the environment is broken."""
        if self.cause is None:
            return False
        line = self.cause.line
        if "relative import" in line or "Could not import module" in line:
            return True
        app = self.candidate.app or self.candidate.main or ""
        top = app.split(":", 1)[0].split(".", 1)[0]
        return (
            self.cause.exc_type in ("ModuleNotFoundError", "ImportError")
            and f"No module named '{top}" in line
        )


@dataclass
class ServerProcess:
    """A running environment server.

    Attributes:
        root: environment directory (the process's working directory).
        python: interpreter used.
        app: ``module:attr`` served.
        host, port: bind address.
        popen: the child process (leader of its own process group).
        run_id: the ``ENVKIT_RUN_ID`` marker every process of this server inherits.
        log: the in-memory tail of its stdout+stderr, or ``None`` when it inherits the
            terminal.
        strays: after :meth:`stop`, the processes that had left the process group and had
            to be killed by their marker (``"pid N: command"``); empty when none.
        candidate: the way of starting it that is running (after :meth:`wait_healthy`: the
            one that answered), ``None`` for a server started without fallbacks.
        fallbacks: the ways still to try, in order, should the running one exit before
            answering ``GET /health``.
        attempts: the ways tried that exited before answering, in order.
        tmpdir: the server's private temporary directory (its ``TMPDIR``), removed by
            :meth:`stop`; '' when none was made.
    """

    root: Path
    python: str
    app: str
    host: str
    port: int
    popen: subprocess.Popen[bytes]
    run_id: str = ""
    log: LogTail | None = None
    strays: list[str] = field(default_factory=list)
    candidate: LaunchCandidate | None = None
    fallbacks: list[LaunchCandidate] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    tmpdir: str = ""
    _spawn_args: dict[str, object] = field(default_factory=dict, repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8000``."""
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the server's output ('' when it is not captured)."""
        return self.log.text(lines) if self.log is not None else ""

    def wait_healthy(self, timeout_s: float = 60.0, interval_s: float = 0.1) -> float:
        """Poll ``GET /health`` until the server is healthy (:func:`envkit.wire.get_health`).

        When the process exits before answering and :attr:`fallbacks` remain, it is stopped
        and the next way of starting the environment is tried; each one
        gets ``timeout_s``. A server that stays up without answering is not replaced: a slow
        start is no layout problem.

        Args:
            timeout_s: seconds to wait for each way of starting it (the start-up timeout).
            interval_s: seconds between polls.

        Returns:
            Seconds it took in total.

        Raises:
            ServerStartError: every way exited, or the running one was not healthy within
                ``timeout_s`` (the server is stopped then). After exits, the message leads
                with the root-cause line of the most telling log, then the command tried;
                the details list every way tried and that log's tail.
        """

        class _Exited(Exception):
            pass

        def exited() -> None:
            raise _Exited

        # envkit.wire imports httpx, whose own CLI module pulls in rich.syntax: `envkit run
        # --help` (which imports this module) must not pay for it.
        from envkit.wire import wait_healthy

        t0 = time.monotonic()
        while True:
            try:
                wait_healthy(
                    self.url,
                    timeout_s=timeout_s,
                    interval_s=interval_s,
                    alive=self.alive,
                    on_exit=exited,
                )
                return time.monotonic() - t0
            except _Exited:
                self._record_exit()
                if self.fallbacks:
                    self._next_candidate()
                    continue
                self.stop(grace_s=0.5)  # sweep what the last one may have left
                raise self._exit_error() from None
            except TimeoutError as exc:
                tail = self.log_tail()
                self.stop()
                raise ServerStartError(
                    f"The environment server (`{self.command()}`) was not healthy within "
                    f"{timeout_s:g} s ({exc}).",
                    hint="Raise --startup-timeout (or `startup_timeout_s` in openenv.yaml), or "
                    "look for slow work at import time.",
                    details=tail or None,
                ) from None

    def command(self) -> str:
        """The running command as a user would type it (``uvicorn APP`` in FOLDER)."""
        if self.candidate is not None:
            return self.candidate.describe().split(": ", 1)[-1]
        return f"uvicorn {self.app} in {self.root}"

    def _record_exit(self) -> None:
        try:
            self.popen.wait(timeout=2)
        except subprocess.TimeoutExpired:  # pragma: no cover - alive() said it exited
            pass
        if self.log is not None:
            self.log.wait_eof(2.0)
        tail = self.log_tail()
        full = self.log.text(400) if self.log is not None else ""
        cand = self.candidate or LaunchCandidate(
            kind="manifest",
            label="manifest app from the environment folder",
            app=self.app,
            cwd=self.root,
        )
        self.attempts.append(
            Attempt(cand, self.command(), self.popen.returncode, tail, root_cause(full))
        )

    def _next_candidate(self) -> None:
        """Stop the exited process (and anything it left) and start the next fallback."""
        self.stop(grace_s=0.5)
        cand = self.fallbacks.pop(0)
        fresh = _spawn(cand, **self._spawn_args)  # type: ignore[arg-type]
        self.popen, self.log, self.run_id = fresh.popen, fresh.log, fresh.run_id
        self.tmpdir = fresh.tmpdir
        self.root, self.app, self.candidate = fresh.root, fresh.app, cand
        self.strays, self._stopped = [], False

    def _exit_error(self) -> ServerStartError:
        """Every way exited: lead with the most telling root cause (the first failure that
        is not a layout error, else the first), then its command, then its log tail."""
        attempts = self.attempts
        telling = next((a for a in attempts if not a.layout_error()), attempts[0])
        cause = telling.cause.line if telling.cause is not None else None
        head = f"`{cause}`: the" if cause else "The"
        message = (
            f"{head} environment server exited with code {telling.exit_code} before "
            f"answering /health (`{telling.command}`)."
        )
        if len(attempts) > 1:
            message += f" {len(attempts)} ways to start it were tried; none served."
        tried = "\n".join(
            f"  {i}. {a.candidate.label}: {a.command} -> "
            f"{a.cause.line if a.cause else f'exit code {a.exit_code}'}"
            for i, a in enumerate(attempts, 1)
        )
        details = (f"Tried:\n{tried}\n" if len(attempts) > 1 else "") + (
            f"Log tail of `{telling.command}`:\n{telling.log_tail}" if telling.log_tail else ""
        )
        hint = "Fix the error above and try again."
        if "address already in use" in telling.log_tail.lower():
            hint = f"Port {self.port} is busy: pass another with --port."
        err = ServerStartError(message, hint=hint, details=details.strip() or None)
        err.attempts = list(attempts)  # type: ignore[attr-defined]
        err.root_cause = cause  # type: ignore[attr-defined]
        return err

    def stop(self, grace_s: float = 3.0) -> int | None:
        """Stop the server and every process it started, however detached. Idempotent.

        SIGTERM to the group, wait up to ``grace_s`` seconds, SIGKILL the group, then
        SIGKILL every process still carrying the server's ``ENVKIT_RUN_ID`` marker (recorded
        in :attr:`strays`), then remove its temporary directory (:attr:`tmpdir`).

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
        if self.run_id and not self._stopped:
            self.strays = kill_marked(self.run_id)
        self._stopped = True
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self.log is not None:
            self.log.close()
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
    fallbacks: bool = True,
    on_output: Callable[[bytes], None] | None = None,
) -> ServerProcess:
    """Start ``uvicorn app`` for the environment at ``root``; does not wait for health.

    With ``fallbacks`` the other ways the environment's files describe
    (:func:`envkit.envdir.launch.launch_candidates`) are kept on the server, and
    :meth:`ServerProcess.wait_healthy` tries them in order when this one exits before
    answering.

    Args:
        root: environment directory (working directory of the server).
        app: ``module:attr`` from the manifest.
        python: the interpreter, as resolved once by :func:`envkit.envdir.project.resolve_python`
            (``None`` resolves it here, for library callers).
        host: bind address; loopback by default.
        port: TCP port; ``None`` lets the kernel pick a free one.
        reload: pass ``--reload`` to uvicorn (watches ``root``).
        capture_log: keep the last :data:`LOG_TAIL_BYTES` of stdout/stderr in memory
            (``True``) or let the server inherit the terminal (``False``). Nothing is
            written to disk either way.
        env: extra environment variables for the server.
        check: probe the interpreter for openenv/uvicorn first (~50 ms).
        fallbacks: try the other launch forms when this one exits before answering.
        on_output: with ``capture_log``, also called with every chunk of the server's
            stdout+stderr as it arrives (from a reader thread), e.g. to show the log while a
            spinner runs on the same terminal.

    Raises:
        UsageError: ``port`` is already taken, or ``host`` cannot be bound.
        ServerStartError: the interpreter lacks the runtime or the process cannot start.
    """
    interpreter = python if python is not None else resolve_python(root)
    if check:
        check_runtime(interpreter, root)
    first = LaunchCandidate(
        kind="manifest",
        label="manifest app from the environment folder",
        app=app,
        cwd=Path(root),
        source="openenv.yaml `app`",
    )
    rest: list[LaunchCandidate] = []
    if fallbacks:
        rest = [
            c for c in launch_candidates(root, SimpleNamespace(app=app)) if c._key() != first._key()
        ]
    spawn_args: dict[str, object] = {
        "python": interpreter,
        "host": host,
        "port": port or 0,
        "reload": reload,
        "capture_log": capture_log,
        "env": dict(env) if env else None,
        "on_output": on_output,
    }
    server = _spawn(first, **spawn_args)  # type: ignore[arg-type]
    spawn_args["port"] = server.port  # a fallback serves where the first one would have
    server.candidate, server.fallbacks, server._spawn_args = first, rest, spawn_args
    return server


def _spawn(
    cand: LaunchCandidate,
    *,
    python: str,
    host: str,
    port: int,
    reload: bool,
    capture_log: bool,
    env: Mapping[str, str] | None,
    on_output: Callable[[bytes], None] | None = None,
) -> ServerProcess:
    """Start one candidate in its own process group, marked with a fresh run id (``port`` 0:
    one the kernel picks), with a private ``TMPDIR`` unless ``env`` gives one. An ``app``
    candidate serves a socket bound here (:func:`listen_socket`, ``uvicorn --fd``).

    Raises:
        UsageError: the port is taken, or ``host`` cannot be bound.
        ServerStartError: the process cannot start.
    """
    listener: socket.socket | None = None
    if cand.app is not None:
        try:
            listener = listen_socket(host, port)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise _port_taken(host, port) from None
            raise UsageError.cannot_listen(host, port, exc) from None
        port = int(listener.getsockname()[1])
        cmd = [
            python,
            "-m",
            "uvicorn",
            cand.app,
            "--fd",
            str(listener.fileno()),
            "--log-level",
            "info",
            "--no-access-log",
        ]
        if reload:
            cmd += ["--reload", "--reload-dir", str(cand.cwd)]
    else:
        if port == 0:
            port = free_port(url_host(host))
        elif port_in_use(url_host(host), port):
            raise _port_taken(host, port)
        cmd = cand.argv(python, host, port)
    run_id = new_run_id()
    child_env = cand.merged_env(marked_env(run_id))
    child_env.update(cand.run_env(host, port))
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    child_env.update(bytecode_env(child_env))
    tmpdir = ""
    if not (env and "TMPDIR" in env):
        tmpdir = owned_tmpdir("envkit-server-")
        child_env["TMPDIR"] = tmpdir
    if env:
        child_env.update(env)
    child_env[RUN_ID_VAR] = run_id
    child_env[OWNER_VAR] = owner_token()
    try:
        popen = subprocess.Popen(
            cmd,
            cwd=cand.cwd,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture_log else None,
            stderr=subprocess.STDOUT if capture_log else None,
            start_new_session=True,
            pass_fds=(listener.fileno(),) if listener is not None else (),
        )
    except OSError as exc:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise ServerStartError(
            f"Cannot start {python}: {exc}.", hint="Pass a working interpreter with --python."
        ) from None
    finally:
        if listener is not None:
            listener.close()  # the child holds its own copy
    log = LogTail(popen.stdout, echo=on_output) if capture_log else None
    return ServerProcess(
        root=Path(cand.cwd),
        python=python,
        app=cand.app or cand.main or "",
        host=host,
        port=port,
        popen=popen,
        run_id=run_id,
        log=log,
        tmpdir=tmpdir,
    )


def _port_taken(host: str, port: int) -> UsageError:
    return UsageError(
        f"Port {port} on {host} is already in use.",
        hint="Stop what listens there or pass another --port.",
    )
