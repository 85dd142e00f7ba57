"""Deploy an environment to a running Ray cluster as a Ray Serve application, and delete it.

envkit does not import ray: :func:`deploy_ray` runs :mod:`envkit.scale.ray_driver` as a script
with the interpreter that has ``ray[serve]`` and the environment's dependencies (``--python``,
default the environment's own), passing its arguments as JSON, and reads one
``ENVKIT_RESULT {json}`` line back. The application outlives the command (Serve's controller
is a detached actor); :func:`delete_ray` removes it with ``serve.delete``. Neither ever stops
Ray: ``ray stop`` ends every Ray process on the host.

**Ray binds all interfaces and has no authentication by default** (measured with Ray 2.60,
even with ``--node-ip-address 127.0.0.1``): anyone who reaches the cluster's ports can run
code on it. Every deploy says so.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.constants import DEBRIS_DIRS
from envkit.envdir.project import resolve_python
from envkit.errors import ServerStartError, UsageError
from envkit.scale.capacity import CAPACITY_VARIABLE, CapacityPlan, plan_capacity

#: What to install where ray is missing (the ``ray`` extra of rl-envkit pins the same).
RAY_INSTALL = 'pip install "ray[serve]>=2.60"'
#: How to start a single-node cluster safely on one machine (SCALE.md: port 16379 lies in
#: Ray's worker port range 10002-19999).
RAY_START = (
    "ray start --head --num-cpus 2 --node-ip-address 127.0.0.1 --port 26379 "
    "--include-dashboard=false --disable-usage-stats"
)
#: Printed by every deploy (and in docs/scale.md).
SECURITY_NOTE = (
    "Ray binds all interfaces and has no authentication by default: anyone who can reach "
    "the cluster's ports can run code on it. Run it on a trusted network or behind a firewall."
)
#: Autoscaling keeps about this fraction of a replica's slots busy before adding one: a
#: session that arrives at a full replica is queued in Serve's proxy, not refused.
TARGET_FRACTION = 0.75
#: Seconds for the app to answer ``GET /health`` through the proxy after ``serve.run``.
HEALTH_TIMEOUT_S = 120.0
#: Seconds the whole driver may take (connect, upload working_dir, start replicas).
DRIVER_TIMEOUT_S = 600.0
_RESULT = "ENVKIT_RESULT "
_DRIVER = Path(__file__).with_name("ray_driver.py")


@dataclass(frozen=True)
class RayDeployment:
    """A Serve application running on a Ray cluster.

    Attributes:
        name: the Serve application's name (``--delete NAME`` removes it).
        url: the base URL of Serve's HTTP proxy (``ENV_URL`` for a trainer).
        plan: the capacity plan (replicas, or the autoscaling maximum, x C).
        autoscale: ``(min, max)`` replicas when autoscaling, else ``None``.
        seconds: how long ``serve.run`` and the health check took.
        port_note: set when Serve was already running on the cluster with another port
            than the one asked for (``serve.start`` keeps a running proxy's options).
        settings: what was sent to the driver (JSON-ready).
    """

    name: str
    url: str
    plan: CapacityPlan
    autoscale: tuple[int, int] | None = None
    seconds: float = 0.0
    port_note: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)


def parse_autoscale(text: str) -> tuple[int, int]:
    """``"1:4"`` -> ``(1, 4)``.

    Raises:
        UsageError: not ``MIN:MAX`` integers with ``1 <= MIN <= MAX``.
    """
    low, sep, high = text.partition(":")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        raise UsageError(f"--autoscale {text!r} is not MIN:MAX.", hint="E.g. --autoscale 1:4.")
    lo, hi = int(low), int(high)
    if not 1 <= lo <= hi:
        raise UsageError(f"--autoscale {text}: need 1 <= MIN <= MAX.", hint="E.g. --autoscale 1:4.")
    return lo, hi


def app_name(env: EnvDir) -> str:
    """The default Serve application name: the manifest's ``name`` (else the directory's),
    lower-cased, with characters other than letters, digits, ``-`` and ``_`` replaced."""
    manifest = env.manifest
    raw = getattr(manifest, "name", None) or env.root.resolve().name
    return re.sub(r"[^a-z0-9_-]+", "-", raw.lower()).strip("-") or "env"


def autoscaling_config(low: int, high: int, per_replica: int) -> dict[str, Any]:
    """Serve's ``autoscaling_config`` on ongoing requests (one per open WebSocket session):
    a replica of C slots targets ``C x 0.75`` of them (at least 1)."""
    return {
        "min_replicas": low,
        "max_replicas": high,
        "target_ongoing_requests": max(1, round(per_replica * TARGET_FRACTION)),
    }


def run_driver(python: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Run the driver with ``python`` and return its result (``{"error": ...}`` on failure).

    Raises:
        ServerStartError: the driver printed no result (it crashed or timed out); the
            message carries the tail of its output.
    """
    try:
        proc = subprocess.run(
            [python, str(_DRIVER), json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ServerStartError(
            f"The Ray driver ({args['action']}) did not finish within {timeout_s:.0f} s.",
            hint="Check the cluster with `ray status` and the replicas' logs under "
            "the Ray session's logs/serve/.",
        ) from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT):
            return dict(json.loads(line[len(_RESULT) :]))
    tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
    raise ServerStartError(
        f"The Ray driver ({args['action']}) exited with code {proc.returncode} without a result.",
        hint="Re-run with the same --python and look at the output below.",
        details=tail,
    )


def _raise_for(result: dict[str, Any], python: str, address: str) -> None:
    """Turn the driver's ``error`` into an envkit error with the next step."""
    kind, detail = result.get("error"), str(result.get("detail", ""))
    if kind is None:
        return
    if kind == "no-ray":
        raise UsageError(
            f"ray[serve] cannot be imported by {python} ({detail}).",
            hint=f"Install it into that interpreter (`{RAY_INSTALL}`, or rl-envkit's `ray` "
            "extra), or pass --python with one that has it and the environment's dependencies.",
        )
    if kind == "no-cluster":
        raise UsageError(
            f"No Ray cluster answers at --address {address} ({detail}).",
            hint=f"Start one (`{RAY_START}`) and pass --address 127.0.0.1:26379, "
            "or the address of your cluster's head node.",
        )
    if kind == "not-found":
        apps = ", ".join(result.get("apps") or []) or "none"
        raise UsageError(
            f"No Serve application named {detail!r} on the Ray cluster at {address} "
            f"(applications: {apps}).",
            hint="Pass the name `envkit deploy ray` printed (--name).",
        )
    if kind == "prefix-taken":
        raise UsageError(
            f"Serve application {detail!r} already serves `/` on the cluster at {address}; "
            "an OpenEnv client expects the environment at the root of its URL, so one Ray "
            "cluster's Serve serves one environment.",
            hint=f"Delete it first (`envkit deploy ray --delete {detail} --address {address}`), "
            f"or deploy under the same --name {detail} to replace it.",
        )
    raise ServerStartError(
        f"The Serve application did not become healthy: {detail}",
        hint="Look at the replicas' logs under the Ray session's logs/serve/ (e.g. "
        "/tmp/ray/session_latest/logs/serve/); a ModuleNotFoundError means --python or the "
        "cluster's nodes lack the environment's dependencies.",
    )


def deploy_ray(
    path: Path,
    *,
    replicas: int | None = None,
    autoscale: tuple[int, int] | None = None,
    address: str = "auto",
    name: str | None = None,
    port: int = 8000,
    python: str | None = None,
    env_vars: dict[str, str] | None = None,
) -> RayDeployment:
    """Deploy the environment at ``path`` as a Ray Serve application and wait for it.

    The replicas serve the manifest's app unchanged, with the environment directory as their
    ``working_dir`` (``.venv``, ``.git`` and caches excluded) and ``env_vars`` plus
    ``MAX_CONCURRENT_ENVS=C`` in their environment. ``max_ongoing_requests`` is C, because
    each WebSocket session holds one ongoing request for its whole life (Ray Serve 2.60's
    default of 5 left sessions hanging in the proxy).

    Args:
        path: the environment directory.
        replicas: N fixed replicas (exclusive with ``autoscale``; default 1).
        autoscale: ``(min, max)`` replicas, scaled on open sessions.
        address: the Ray cluster (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``).
        name: the Serve application's name (default :func:`app_name`).
        port: the port of Serve's HTTP proxy, bound on 127.0.0.1.
        python: the interpreter with ``ray[serve]`` and the environment's dependencies
            (default: the environment's, :meth:`EnvDir.python`).
        env_vars: the replicas' environment variables (``-e KEY=VALUE``).

    Raises:
        UsageError: both ``replicas`` and ``autoscale``; the environment does not support
            concurrent sessions; ray is missing from ``python``; no cluster at ``address``.
        ServerStartError: the application never answered ``GET /health`` through the proxy.
    """
    if replicas is not None and autoscale is not None:
        raise UsageError("Give either --replicas N or --autoscale MIN:MAX, not both.")
    env = EnvDir(path)
    env.require_manifest()
    interpreter = env.python(python)
    variables = dict(env_vars or {})
    count = autoscale[1] if autoscale else (replicas or 1)
    plan = plan_capacity(env, replicas=count, env_vars=variables)
    variables[CAPACITY_VARIABLE] = str(plan.per_replica)
    settings: dict[str, Any] = {
        "action": "deploy",
        "address": address,
        "env_dir": str(env.root.resolve()),
        "excludes": sorted(DEBRIS_DIRS),
        "env_vars": variables,
        "host": "127.0.0.1",
        "port": port,
        "max_ongoing_requests": plan.per_replica,
        "replicas": count,
        "autoscaling": autoscaling_config(*autoscale, plan.per_replica) if autoscale else None,
        "num_cpus": env.spec.cpu,
        "name": name or app_name(env),
        "app": env.app,
        "timeout_s": HEALTH_TIMEOUT_S,
    }
    result = run_driver(interpreter, settings, DRIVER_TIMEOUT_S)
    _raise_for(result, interpreter, address)
    note = None
    if int(result.get("port", port)) != port:
        note = (
            f"Serve was already running on this cluster with its proxy on port "
            f"{result['port']}, so --port {port} was not applied."
        )
    return RayDeployment(
        name=settings["name"],
        url=str(result["url"]),
        plan=plan,
        autoscale=autoscale,
        seconds=float(result.get("seconds", 0.0)),
        port_note=note,
        settings=settings,
    )


def delete_ray(name: str, *, address: str = "auto", python: str | None = None) -> list[str]:
    """Delete Serve application ``name``; Ray and every other application keep running.

    Args:
        name: the application's name.
        address: the Ray cluster.
        python: an interpreter with ``ray[serve]`` (default: the current directory's
            environment interpreter, :func:`envkit.envdir.project.resolve_python`).

    Returns:
        The names of the Serve applications left on the cluster.

    Raises:
        UsageError: ray is missing from ``python``; no cluster at ``address``; no
            application named ``name``.
    """
    interpreter = resolve_python(Path.cwd(), python)
    args = {"action": "delete", "address": address, "name": name}
    result = run_driver(interpreter, args, DRIVER_TIMEOUT_S)
    _raise_for(result, interpreter, address)
    return [str(a) for a in result.get("apps") or []]


def serve_applications(address: str, python: str) -> dict[str, str]:
    """The Serve applications on the cluster at ``address`` and their status.

    Raises:
        UsageError: ray is missing from ``python``; no cluster at ``address``.
    """
    result = run_driver(python, {"action": "status", "address": address}, DRIVER_TIMEOUT_S)
    _raise_for(result, python, address)
    return {str(k): str(v) for k, v in (result.get("apps") or {}).items()}
