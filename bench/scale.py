"""Throughput of a pool of environment replicas behind one URL: sessions/s and steps/s
against 1, 2 and 4 replicas, with ``nproc`` and the load average beside them.

Information only: on a small shared machine more replicas cannot add cores (2 shared cores:
2 replicas gave at most 1.3x the steps/s of one, 4 nothing more). The load is the guess
template's oracle: ``--clients`` threads each open a WebSocket session, play one episode to
the end, close it, and start again, for ``--seconds``. Every replica accepts all the clients
(``MAX_CONCURRENT_ENVS`` = ``--clients``), so 1 replica is measured with the same load.

Backends: one function per backend starts a pool and yields its URL (:data:`BACKENDS`).
``docker`` is ``envkit run --docker --replicas N`` (HAProxy in front); another backend
registers itself from ``bench/_scale_ray.py`` (``register(BACKENDS)``) when that file exists.

Usage:
    python bench/scale.py [--backend docker] [--replicas 1 2 4] [--clients 8] [--seconds 10]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: Backend name -> ``start(env_dir, replicas, per_replica) -> context manager of the URL``.
BACKENDS: dict[str, Callable[[Path, int, int], contextlib.AbstractContextManager[str]]] = {}


@contextlib.contextmanager
def docker_pool(env_dir: Path, replicas: int, per_replica: int) -> Iterator[str]:
    """A pool of ``replicas`` containers behind HAProxy (the library behind ``envkit run
    --docker --replicas``); removed afterwards."""
    from envkit.scale.pool import PoolRequest, run_pool

    name = f"envkit-bench-scale-{uuid.uuid4().hex[:6]}"
    pool = run_pool(
        PoolRequest(
            path=env_dir,
            replicas=replicas,
            name=name,
            env={"MAX_CONCURRENT_ENVS": str(per_replica)},
            tag="envkit-bench-guess:latest",
            labels={"envkit.bench": "scale"},
        )
    )
    try:
        yield pool.url
    finally:
        pool.stop(timeout_s=1)
        pool.close()


BACKENDS["docker"] = docker_pool


def _load_plugins() -> None:
    """``bench/_scale_ray.py`` (or any ``bench/_scale_*.py``) adds its backend."""
    for path in sorted(Path(__file__).parent.glob("_scale_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        register = getattr(module, "register", None)
        if callable(register):
            register(BACKENDS)


def _oracle(env_dir: Path) -> Callable[[dict[str, Any]], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("bench_oracle", env_dir / "server" / "oracle.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.policy


def _drive(url: str, policy: Callable, clients: int, seconds: float) -> dict[str, float]:
    """Run ``clients`` threads of whole episodes for ``seconds``; count sessions and steps."""
    from envkit.wire import EnvSession

    counts = {"sessions": 0, "steps": 0, "errors": 0}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker(seed: int) -> None:
        while time.monotonic() < stop_at:
            steps = 0
            try:
                with EnvSession(url, timeout_s=10) as session:
                    result = session.reset(seed=seed)
                    while not result.done and steps < 32:
                        result = session.step(policy(result.observation))
                        steps += 1
                key = "sessions"
            except Exception:  # noqa: BLE001 - a failed session is counted, not fatal
                key = "errors"
            with lock:
                counts[key] += 1
                counts["steps"] += steps
            seed += clients

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    return {
        "sessions_per_s": counts["sessions"] / elapsed,
        "steps_per_s": counts["steps"] / elapsed,
        "errors": counts["errors"],
        "seconds": elapsed,
    }


@functools.cache
def guess_env() -> Path:
    """The guess template, generated once per process in a temporary directory."""
    import atexit
    import shutil

    from envkit.scaffold import init_project

    tmp = tempfile.mkdtemp(prefix="envkit-bench-scale-")
    atexit.register(shutil.rmtree, tmp, True)
    return init_project("guess", template="guess", output_dir=Path(tmp), lock=False).path


def measure(
    backend: str,
    replicas: int,
    *,
    env_dir: Path | None = None,
    clients: int = 8,
    seconds: float = 10.0,
) -> dict[str, Any]:
    """Start ``backend`` with ``replicas``, drive it, stop it.

    Args:
        backend: a key of :data:`BACKENDS`. replicas: N.
        env_dir: the environment (default: the guess template, :func:`guess_env`).
        clients: concurrent sessions (also each replica's ``MAX_CONCURRENT_ENVS``).
        seconds: length of the measurement (after a 2 s warm-up).

    Returns:
        ``backend``, ``replicas``, ``clients``, ``sessions_per_s``, ``steps_per_s``,
        ``errors``, ``seconds``, ``nproc`` and ``loadavg`` (1 min, after the run).
    """
    env_dir = env_dir or guess_env()
    policy = _oracle(env_dir)
    with BACKENDS[backend](env_dir, replicas, clients) as url:
        _drive(url, policy, clients, 2.0)  # warm-up: imports, first sessions
        result = _drive(url, policy, clients, seconds)
    return {
        "backend": backend,
        "replicas": replicas,
        "clients": clients,
        **result,
        "nproc": os.cpu_count(),
        "loadavg": os.getloadavg()[0],
    }


def main() -> int:
    _load_plugins()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="docker")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--clients", type=int, default=8, help="concurrent sessions")
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    args = parser.parse_args()

    print(f"{'backend':8} {'replicas':>8} {'sessions/s':>11} {'steps/s':>9} "
          f"{'errors':>6} {'nproc':>5} {'load1':>6}")  # fmt: skip
    for n in args.replicas:
        r = measure(args.backend, n, clients=args.clients, seconds=args.seconds)
        print(
            f"{r['backend']:8} {r['replicas']:8d} {r['sessions_per_s']:11.1f} "
            f"{r['steps_per_s']:9.1f} {r['errors']:6d} {r['nproc']:5d} {r['loadavg']:6.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
