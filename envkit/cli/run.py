"""``envkit run``: serve an environment locally with uvicorn, or in its Docker image
(``--docker``) exactly as a Hugging Face Docker Space runs it.

envkit.container (and envkit.cli._pool above it) imports httpx, which imports its own
command line and with it rich.syntax and pygments (0.1-0.2 s): the ``--docker`` path imports
them where it uses them, so a local run and ``envkit run --help`` do without
(tests/cli/test_startup.py).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from envkit.cli import _output
from envkit.cli._options import (
    EnvDirArg,
    EnvVarOpt,
    HostOpt,
    PortOpt,
    PythonOpt,
    RunTimeoutOpt,
    StartupTimeoutOpt,
    parse_key_values,
)
from envkit.cli.build import BuildProgress
from envkit.envdir import EnvProject
from envkit.envdir.project import (
    env_spec,
    own_interpreter_note,
    resolve_python,
    resolve_timeouts,
)
from envkit.errors import ContainerError, ExitCode, ServerStartError, UsageError
from envkit.reaper import owner_labels
from envkit.server import start_server

if TYPE_CHECKING:
    from rich.status import Status

    from envkit.container.run import RunningContainer


def run_cmd(
    path: EnvDirArg = Path("."),
    host: HostOpt = "127.0.0.1",
    port: PortOpt = None,
    reload: Annotated[bool, typer.Option("--reload", help="Restart on code changes.")] = False,
    python: PythonOpt = None,
    timeout: RunTimeoutOpt = None,
    startup_timeout: StartupTimeoutOpt = None,
    docker: Annotated[
        bool,
        typer.Option(
            "--docker",
            help="Run the environment's Docker image (built if missing) instead of uvicorn.",
        ),
    ] = False,
    env: EnvVarOpt = None,
    web: Annotated[
        bool,
        typer.Option("--web", help="Set ENABLE_WEB_INTERFACE=true (OpenEnv's web UI at /web)."),
    ] = False,
    build: Annotated[
        bool, typer.Option("--build", help="--docker: rebuild the image first.")
    ] = False,
    detach: Annotated[
        bool,
        typer.Option("--detach", "-d", help="--docker: leave the container running and return."),
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="--docker: container name (default: envkit-NAME-xxxxxx).",
            show_default=False,
        ),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option(
            "--tag",
            "-t",
            help="--docker: image reference (default: NAME:VERSION).",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            help="--docker: extra container (and image) label KEY=VALUE (repeatable).",
            show_default=False,
        ),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(
            "--replicas",
            min=1,
            help="--docker: run N replicas behind one HAProxy balancer on 127.0.0.1 "
            "(WebSocket sessions spread by least connections; needs concurrent sessions).",
            show_default=False,
        ),
    ] = None,
    hardened: Annotated[
        bool,
        typer.Option(
            "--hardened",
            help="--docker: run as `envkit validate --docker` does (read-only, uid "
            "65532, no capabilities, declared memory/CPU/network) to reproduce its "
            "findings.",
        ),
    ] = False,
) -> None:
    """Serve the environment until Ctrl-C: with uvicorn, or in Docker with --docker.

    Without --docker: runs `python -m uvicorn <app>` from openenv.yaml in the environment
    directory, with the environment's own interpreter (--python, else PATH/.venv/bin/python,
    else the current one), waits for GET /health (--startup-timeout) and prints the URL.
    Ctrl-C, or the end of --timeout, stops the server and every process it started, even
    detached ones. The default port is the manifest's (8000); loopback only unless --host.

    With --docker: builds the image when it is missing (or --build), starts it with the
    manifest's port published on 127.0.0.1 (--port, default a free one), waits until it is
    healthy, prints the URL and streams its log; Ctrl-C stops and removes the container.
    --detach leaves it running and prints the `envkit stop NAME` command.

    Examples:
      envkit run
      envkit run envs/my-env --port 9000 --reload
      envkit run --docker
      envkit run --docker --detach --port 8000 -e MY_KEY=1 --web
      envkit run --timeout 600   # serve for at most 10 minutes (e.g. in CI)
      envkit run --docker --hardened
      envkit run --docker --replicas 3 -e MAX_CONCURRENT_ENVS=4 --detach --name pool

    With --docker --replicas N: N containers of the image on their own Docker network, one
    HAProxy container (built once from Debian's package) as the one URL, published on
    127.0.0.1 only. Prints N, the sessions per replica (MAX_CONCURRENT_ENVS, `-e` wins) and
    N x C. A replica that exits or is killed is started again (by this process, or by a
    small background watcher with --detach). Ctrl-C, or `envkit stop NAME`, removes the
    replicas, the balancer and the network.
    """
    variables = parse_key_values(env, "--env")
    if web:
        variables["ENABLE_WEB_INTERFACE"] = "true"
    if docker:
        if timeout is not None:
            raise UsageError(
                "--timeout does not apply to --docker (the container runs until `envkit stop`).",
                hint="Drop --timeout or --docker.",
            )
        for flag, used in (("--reload", reload), ("--python", python is not None)):
            if used:
                raise UsageError(
                    f"{flag} does not apply to --docker (the image has its own interpreter).",
                    hint=f"Drop {flag} or --docker.",
                )
        if replicas is not None:
            _refuse_for_pool(host=host, web=web, hardened=hardened)
        _run_docker(
            _DockerRun(
                path=path,
                host=host,
                port=port,
                timeout=startup_timeout,
                env=variables,
                build=build,
                detach=detach,
                name=name,
                tag=tag,
                labels=parse_key_values(label, "--label"),
                hardened=hardened,
                replicas=replicas,
            )
        )
        return
    for flag, used in (
        ("--build", build),
        ("--detach", detach),
        ("--name", name is not None),
        ("--tag", tag is not None),
        ("--label", bool(label)),
        ("--hardened", hardened),
        ("--replicas", replicas is not None),
    ):
        if used:
            raise UsageError(f"{flag} needs --docker.", hint=f"Add --docker or drop {flag}.")
    _run_local(
        path,
        host=host,
        port=port,
        reload=reload,
        python=python,
        timeout=timeout,
        startup_timeout=startup_timeout,
        env=variables,
    )


def _run_local(
    path: Path,
    *,
    host: str,
    port: int | None,
    reload: bool,
    python: str | None,
    timeout: float | None,
    startup_timeout: float | None,
    env: dict[str, str],
) -> None:
    """Serve with uvicorn until Ctrl-C, ``timeout`` seconds, or the server's own exit.

    Args:
        path: environment directory. host, port: where to listen (``None``: the manifest's).
        reload: restart on code changes. python: interpreter (``None``: resolved as usual).
        timeout: seconds to serve for at most (``None``: no limit).
        startup_timeout: seconds to wait for health (``None``: the manifest's).
        env: extra environment variables for the server.

    Raises:
        ServerStartError: the server exited by itself, or never became healthy.
        typer.Exit: code 0 after Ctrl-C stopped it.
    """
    t0 = time.monotonic()
    project = EnvProject.load(path)
    manifest = project.manifest
    timeouts = resolve_timeouts(
        env_spec(manifest), timeout_s=timeout, startup_timeout_s=startup_timeout
    )
    interpreter = resolve_python(project.root, python)
    borrowed = own_interpreter_note(project.root, python)
    if borrowed:  # before the server's own log lines start
        _output.warn(borrowed)
    relay = LogRelay()
    server = start_server(
        project.root,
        manifest.app,
        python=interpreter,
        host=host,
        port=port or manifest.port,
        reload=reload,
        capture_log=True,
        env=env or None,
        on_output=relay,
    )
    try:
        with relay.showing(_output.err.status(f"Starting {_output.esc(manifest.name)}…")):
            secs = server.wait_healthy(timeout_s=timeouts.startup_s)
        until = "" if timeout is None else f" for at most {timeout:g} s"
        _output.success(
            f"{_output.esc(manifest.name)} is serving at {server.url}{until} "
            f"(ready in {secs:.1f} s). Ctrl-C to stop."
        )
        _output.info(
            f"  WebSocket sessions: {server.url.replace('http', 'ws', 1)}/ws   "
            f"schema: {server.url}/schema"
        )
        deadline = timeouts.deadline(t0)
        try:
            code = server.popen.wait(
                None if deadline is None else max(0.0, deadline - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            _stop(server, f"--timeout {timeout:g} s reached: stopped.")
            return
        raise ServerStartError(
            f"The environment server exited with code {code}.", hint="See its log above."
        )
    except KeyboardInterrupt:
        _stop(server, "Stopped.")
        raise typer.Exit(int(ExitCode.OK)) from None
    finally:
        server.stop()


class LogRelay:
    """Shows the server's output on stderr, a whole line at a time, through envkit's console.

    The server does not share the terminal: its output comes through a pipe, so the start-up
    spinner (a rich status on the same console) is cleared before each line is printed and
    drawn again below it, instead of the server writing over the spinner's frame. Called
    from the server's log reader thread with raw chunks (:func:`envkit.server.start_server`'s
    ``on_output``).
    """

    def __init__(self) -> None:
        self._pending = b""
        self._lock = threading.Lock()

    def __call__(self, chunk: bytes) -> None:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        with self._lock:
            for line in lines:
                self._print(line)

    @contextlib.contextmanager
    def showing(self, status: Status) -> Iterator[None]:
        """Show ``status`` (the start-up spinner) for the block. It is started and stopped
        between two relayed lines: a line printed while rich tears the spinner down lands
        after the spinner's frame, on the same terminal line."""
        with self._lock:
            status.start()
        try:
            yield
        finally:
            with self._lock:
                status.stop()

    def _print(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        # Colour the server wrote (when it thinks it has a terminal) is kept as styles on a
        # colour terminal; the console drops it elsewhere.
        _output.err.print(Text.from_ansi(line), soft_wrap=True)


def _stop(server: object, message: str) -> None:
    """Stop the server; say so, and name the processes that had escaped its group."""
    server.stop()  # type: ignore[attr-defined]
    _output.info(message)
    for stray in server.strays:  # type: ignore[attr-defined]
        _output.warn(f"killed a process that had left the server's process group: {stray}")


@dataclass(frozen=True)
class _DockerRun:
    """``envkit run --docker``'s options, parsed.

    Attributes:
        path: environment directory. host, port: where to publish (``port`` ``None``: free).
        timeout: seconds to wait for health (``None``: the manifest's).
        env: container environment variables. build: rebuild first.
        detach: leave it running and return. name, tag: container name and image reference.
        labels: extra container (and image) labels. hardened: the container lane's options.
        replicas: N for a pool behind one balancer (``None``: one container).
    """

    path: Path
    host: str
    port: int | None
    timeout: float | None
    env: dict[str, str]
    build: bool
    detach: bool
    name: str | None
    tag: str | None
    labels: dict[str, str]
    hardened: bool = False
    replicas: int | None = None


def _run_docker(req: _DockerRun) -> None:
    """Start the container, announce it, then return (``detach``) or stream its log.

    Raises:
        UsageError: ``--hardened --detach`` for a ``no-network`` environment.
        ContainerError: it exited by itself (its last 30 log lines in ``details``).
        typer.Exit: code 0 after Ctrl-C stopped and removed it.
    """
    from envkit.container import run_container

    if req.replicas is not None:
        from envkit.cli._pool import run_pool_cmd

        run_pool_cmd(req)
        return
    if req.hardened and req.detach:
        _refuse_detached_relay(req.path)
    progress = BuildProgress(quiet=False, live=_output.is_tty())
    with progress:
        running = run_container(
            req.path,
            tag=req.tag,
            host=req.host,
            port=req.port,
            env=req.env,
            build=req.build,
            name=req.name,
            # a detached container outlives this process; a foreground one goes with it
            labels={**req.labels, **({} if req.detach else owner_labels())},
            timeout_s=req.timeout,
            on_event=progress,
            hardened=req.hardened,
        )
    try:
        _announce(running)
        if req.detach:
            _output.out.print(running.url, markup=False)
            _output.info(f"Stop it with: {running.stop_command}")
            return
        _stream_until_stopped(running)
    finally:
        if not req.detach:
            running.stop()
        running.close()


def _refuse_for_pool(*, host: str, web: bool, hardened: bool) -> None:
    """Options a replica pool cannot honour.

    Raises:
        UsageError: ``--host`` other than 127.0.0.1 (the balancer is published on loopback
            only), ``--web`` (the web UI holds one shared environment per server, which
            replicas cannot share), or ``--hardened``.
    """
    if host != "127.0.0.1":
        raise UsageError(
            f"--replicas publishes the pool on 127.0.0.1 only, not {host}.",
            hint="Drop --host, and put your own proxy in front to serve other hosts.",
        )
    for flag, used, why in (
        ("--web", web, "the web UI holds one environment per server, replicas cannot share it"),
        ("--hardened", hardened, "the hardened lane runs one container"),
    ):
        if used:
            raise UsageError(
                f"{flag} does not apply to --replicas: {why}.", hint=f"Drop {flag} or --replicas."
            )


def _refuse_detached_relay(path: Path) -> None:
    """A hardened ``no-network`` run's port is relayed by this process, so it cannot detach."""
    from envkit.container.hardening import container_facts

    if container_facts(EnvProject.load(path).root).network_mode == "no-network":
        raise UsageError(
            "--hardened --detach cannot serve a `no-network` environment: "
            "its port is relayed by this process.",
            hint="Drop --detach (Ctrl-C stops it) or --hardened.",
        )


def _announce(running: RunningContainer) -> None:
    """Print where the healthy container serves (and its hardened ``docker run`` line)."""
    if running.docker_run:
        _output.info(f"  hardened as: {_output.esc(running.docker_run)}")
    _output.success(
        f"{_output.esc(running.image)} is serving at {running.url} in container "
        f"{_output.esc(running.name)} (ready in {running.ready_s:.1f} s)."
    )
    _output.info(
        f"  WebSocket sessions: {running.url.replace('http', 'ws', 1)}/ws   "
        f"schema: {running.url}/schema"
    )


def _stream_until_stopped(running: RunningContainer) -> None:
    """Print the container's log until it stops; the caller removes it afterwards.

    Returns normally when it was removed from elsewhere (``envkit stop NAME``).

    Raises:
        ContainerError: it exited by itself with the exit code shown.
        typer.Exit: code 0 after Ctrl-C stopped and removed it.
    """
    _output.info("Streaming its log; Ctrl-C stops and removes the container.")
    try:
        for line in running.follow_logs():
            _output.err.print(line, markup=False, highlight=False, soft_wrap=True)
        code = running.exit_code()
        tail = running.log_tail(30)
        if code is None:  # removed from elsewhere (`envkit stop NAME` in another shell)
            _output.info(f"{_output.esc(running.name)} was stopped and removed.")
            return
    except KeyboardInterrupt:
        running.stop()
        _output.info(f"Stopped and removed {_output.esc(running.name)}.")
        raise typer.Exit(int(ExitCode.OK)) from None
    from envkit.container.run import missing_module_hint

    raise ContainerError(
        f"The container {running.name} exited with code {code}.",
        details=tail or None,
        hint=missing_module_hint(tail) or "See its log above.",
    )


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("run")(handled(run_cmd))
