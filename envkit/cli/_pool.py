"""``envkit run --docker --replicas N``: start a pool, announce it, then detach or watch it."""

from __future__ import annotations

import signal
import threading
import time
from typing import TYPE_CHECKING

import typer

from envkit.cli import _output
from envkit.cli.build import BuildProgress
from envkit.errors import ExitCode
from envkit.reaper import owner_labels
from envkit.scale.pool import (
    PoolRequest,
    run_pool,
    start_watcher,
    up_servers,
    watch_pool,
    watcher_log,
)

if TYPE_CHECKING:
    from types import FrameType

    from envkit.cli.run import _DockerRun
    from envkit.scale.pool import RunningPool, WatchEvent

#: Seconds between two status looks in the foreground (a line only when something changed).
STATUS_EVERY_S = 5.0


def run_pool_cmd(req: _DockerRun) -> None:
    """Start the pool; with ``detach`` start its watcher and return, else watch it until
    Ctrl-C/SIGTERM and remove it.

    Raises:
        UsageError: see :func:`envkit.scale.pool.run_pool` (exit 2).
        typer.Exit: code 0 after Ctrl-C or SIGTERM removed the pool.
    """
    request = PoolRequest(
        path=req.path,
        replicas=int(req.replicas or 1),
        port=req.port,
        name=req.name,
        env=dict(req.env),
        build=req.build,
        tag=req.tag,
        # a detached pool outlives this process; a foreground one goes with it
        labels={**req.labels, **({} if req.detach else owner_labels())},
        timeout_s=req.timeout,
    )
    progress = BuildProgress(quiet=False, live=_output.is_tty())
    # SIGTERM as Ctrl-C from the start: a pool half started is removed too (run_pool cleans
    # up on any exception), never left behind by a killed `envkit run`.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _sigterm) if main else None
    try:
        with progress:
            pool = run_pool(request, on_event=progress, on_progress=_progress_line)
        try:
            _announce(pool)
            if req.detach:
                _detach(pool)
                return
            _watch_in_foreground(pool)
        finally:
            pool.close()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _progress_line(message: str) -> None:
    _output.err.print(f"[dim]…[/dim] {_output.esc(message)}")


def _announce(pool: RunningPool) -> None:
    """The banner: URL, N, C per replica, N x C, what balances and how to reach it."""
    _output.success(
        f"Pool {_output.esc(pool.name)} is serving at {pool.url} "
        f"(ready in {pool.ready_s:.1f} s): {_output.esc(pool.plan.summary())}."
    )
    _output.info(
        f"  WebSocket sessions: {pool.url.replace('http', 'ws', 1)}/ws   "
        f"image: {_output.esc(pool.image)}"
    )
    _output.info(
        f"  balancer: {_output.esc(pool.balancer)} (HAProxy, least connections, "
        f"GET /health every 1 s, WebSocket idle timeout {pool.tunnel_s:g} s)   "
        f"stats: {pool.stats_url}"
    )
    _output.info(
        f"  replicas: {_output.esc(', '.join(pool.replicas))} on network "
        f"{_output.esc(pool.network)}; sessions beyond {pool.plan.total} are refused "
        "(CAPACITY_REACHED)."
    )


def _detach(pool: RunningPool) -> None:
    pid = start_watcher(pool.name)
    _output.out.print(pool.url, markup=False)
    _output.info(
        f"  watcher: process {pid} starts replicas that exit or are killed "
        f"(log: {watcher_log(pool.name)}); it ends with the pool."
    )
    _output.info(f"Stop it with: {pool.stop_command}")


class _Status:
    """Prints one line when the replicas up or the session spread change."""

    def __init__(self, pool: RunningPool) -> None:
        self.pool = pool
        self.last = ""
        self.next_at = 0.0

    def __call__(self) -> bool:
        """The watcher's ``should_stop``: never stops, prints status on the way."""
        now = time.monotonic()
        if now < self.next_at:
            return False
        self.next_at = now + STATUS_EVERY_S

        up = up_servers(self.pool.servers())
        sessions = [int(r.get("scur") or 0) for r in up]
        line = (
            f"{len(up)}/{len(self.pool.replicas)} replicas up; sessions "
            f"{'+'.join(map(str, sessions)) or '0'} = {sum(sessions)} of {self.pool.plan.total}"
        )
        if line != self.last:
            self.last = line
            _output.info(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {_output.esc(line)}")
        return False


def _on_watch(event: WatchEvent) -> None:
    if event.kind == "restarted":
        _output.warn(f"{event.container} had stopped ({event.text}); started it again.")
    elif event.kind == "failed":
        _output.warn(f"could not restart {event.container or 'a replica'}: {event.text}")


def _sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _watch_in_foreground(pool: RunningPool) -> None:
    """Watch until Ctrl-C/SIGTERM (then remove the pool) or until it is stopped elsewhere.

    Raises:
        typer.Exit: code 0 after Ctrl-C or SIGTERM.
    """
    _output.info("Watching the pool; Ctrl-C stops and removes it.")
    try:
        watch_pool(pool.name, on_event=_on_watch, should_stop=_Status(pool))
        _output.info(f"The pool {_output.esc(pool.name)} was stopped elsewhere.")
        pool.stop()
    except KeyboardInterrupt:
        with _output.status(f"Removing the pool {_output.esc(pool.name)}…"):
            removed = pool.stop()
        _output.info(f"Stopped and removed {len(removed)} container(s) and network(s).")
        raise typer.Exit(int(ExitCode.OK)) from None
