"""The Ray Serve backend of bench/scale.py, and the private Ray cluster tests/scale uses.

:func:`local_ray` starts a single-node Ray on 127.0.0.1 in a session of its own and ends
exactly the processes of that session (never ``ray stop``, which ends every Ray process on
the host). :func:`ray_pool` deploys an environment on it with ``envkit deploy ray`` and
yields the Serve URL.

    with ray_pool(Path("envs/guess"), replicas=2, python=".venv/bin/python",
                  env_vars={"MAX_CONCURRENT_ENVS": "4"}) as url:
        ...  # ENV_URL for a trainer or a load generator

Facts (Ray 2.60 on these 2-core machines, docs/scale.md): ``ray start`` takes about 12-17 s;
its daemons and every worker stay in the session of the ``ray start`` process (workers get
their own process group, not their own session).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: Ray's worker ports (10002-19999 by default): a GCS port there fails to start.
_RAY_WORKER_PORTS = range(10002, 20000)
# `ray start` as a module of the interpreter that has ray, so that its workers run with that
# interpreter (Ray starts workers with the `ray start` process's sys.executable).
_RAY_MAIN = "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"


def free_port() -> int:
    """A free TCP port on 127.0.0.1 outside Ray's worker port range."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _RAY_WORKER_PORTS:
            return port


def session_pids(sid: int) -> set[int]:
    """Live processes whose session id is ``sid`` (Linux ``/proc``)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state ppid pgrp session ...
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.add(int(entry.name))
    return pids


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def stop_session(sid: int, grace_s: float = 5.0) -> set[int]:
    """SIGTERM every process of session ``sid``, SIGKILL what is left after ``grace_s``.

    Returns:
        The processes still alive afterwards (empty on success).
    """
    _signal_all(session_pids(sid), signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.2)
    _signal_all(session_pids(sid), signal.SIGKILL)
    deadline = time.monotonic() + 5
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return session_pids(sid)


@dataclass
class LocalRay:
    """A private single-node Ray cluster.

    Attributes:
        address: ``127.0.0.1:PORT`` of its GCS (``--address`` of ``envkit deploy ray``).
        sid: the session id shared by all of its processes.
        temp_dir: its ``--temp-dir`` (logs under ``session_latest/logs``).
        start_s: seconds ``ray start`` took.
    """

    address: str
    sid: int
    temp_dir: Path
    start_s: float


@contextmanager
def local_ray(python: str, num_cpus: int = 2, timeout_s: float = 180.0) -> Iterator[LocalRay]:
    """Start Ray with ``python`` (which has ``ray``) and stop exactly its processes after.

    Every port Ray would otherwise take at a fixed number (GCS, client server, dashboard,
    dashboard agent) is a free one, and ``--temp-dir`` a fresh short directory (Ray's Unix
    socket paths must stay under 108 bytes), so it clashes with no other Ray on the host.

    Raises:
        RuntimeError: ``ray start`` failed (its output attached).
    """
    temp_dir = Path(tempfile.mkdtemp(prefix="ekray-", dir="/tmp"))
    port = free_port()
    command = [python, "-c", _RAY_MAIN, "start", "--head", f"--num-cpus={num_cpus}"]
    command += ["--node-ip-address=127.0.0.1", f"--port={port}", "--disable-usage-stats"]
    command += ["--include-dashboard=false", f"--temp-dir={temp_dir}"]
    command += [f"--ray-client-server-port={free_port()}", f"--dashboard-port={free_port()}"]
    command += [f"--dashboard-agent-listen-port={free_port()}"]
    started = time.monotonic()
    # A session of its own: every daemon and worker Ray starts inherits it.
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start exited {proc.returncode}:\n{out[-3000:]}")
        yield LocalRay(f"127.0.0.1:{port}", proc.pid, temp_dir, time.monotonic() - started)
    finally:
        if proc.poll() is None:
            proc.kill()
        left = stop_session(proc.pid)
        if left:
            print(f"ray processes left in session {proc.pid}: {sorted(left)}", file=sys.stderr)
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)


def envkit_command() -> list[str]:
    """``python -m envkit`` of the interpreter running this code."""
    return [sys.executable, "-m", "envkit"]


@contextmanager
def ray_pool(
    env: Path,
    *,
    replicas: int,
    python: str,
    env_vars: dict[str, str] | None = None,
    cluster: LocalRay | None = None,
) -> Iterator[str]:
    """Deploy ``env`` with ``envkit deploy ray --replicas N`` and yield its URL; delete the
    Serve application afterwards, and stop the cluster when this function started it.

    Args:
        env: the environment directory.
        replicas: N replicas.
        python: an interpreter with ``ray[serve]`` and the environment's dependencies.
        env_vars: the replicas' environment (e.g. ``{"MAX_CONCURRENT_ENVS": "4"}``).
        cluster: a running :class:`LocalRay` to use (default: a private one for this pool).

    Raises:
        subprocess.CalledProcessError: the deploy failed.
    """
    if cluster is None:
        with (
            local_ray(python) as own,
            ray_pool(env, replicas=replicas, python=python, env_vars=env_vars, cluster=own) as url,
        ):
            yield url
        return
    port = free_port()
    command = envkit_command() + ["deploy", "ray", str(env), f"--replicas={replicas}"]
    command += ["--python", python, "--address", cluster.address, "--port", str(port)]
    command += ["--name", "bench", "--format", "json"]
    for key, value in (env_vars or {}).items():
        command += ["-e", f"{key}={value}"]
    import json

    proc = subprocess.run(command, capture_output=True, text=True, timeout=900, check=True)
    url = json.loads(proc.stdout)["url"]
    try:
        yield url
    finally:
        delete = envkit_command() + ["deploy", "ray", "--delete", "bench"]
        delete += ["--address", cluster.address, "--python", python]
        subprocess.run(delete, capture_output=True, text=True, timeout=300, check=False)


#: An interpreter with ``ray[serve]`` and the environment's dependencies (the bench's Ray
#: backend is registered only when it is set: Ray is about 500 MB and an optional extra).
RAY_PYTHON_VARIABLE = "ENVKIT_BENCH_RAY_PYTHON"


def register(backends: dict) -> None:
    """Add the ``ray`` backend to ``bench/scale.py``'s ``BACKENDS`` when
    ``ENVKIT_BENCH_RAY_PYTHON`` names an interpreter; else say how to enable it."""
    python = os.environ.get(RAY_PYTHON_VARIABLE)
    if not python:
        print(
            f"ray: not measured (set {RAY_PYTHON_VARIABLE} to a python with ray[serve] "
            "and the environment's dependencies)",
            file=sys.stderr,
        )
        return

    @contextmanager
    def start(env_dir: Path, replicas: int, per_replica: int) -> Iterator[str]:
        env_vars = {"MAX_CONCURRENT_ENVS": str(per_replica)}
        with ray_pool(env_dir, replicas=replicas, python=python, env_vars=env_vars) as url:
            yield url

    backends["ray"] = start
