"""The Ray Serve driver that ``envkit deploy ray`` runs with the environment's interpreter.

envkit never imports ray (an optional extra of about 500 MB): it runs this file as a script,
``PY ray_driver.py '<json>'``, with the interpreter that has ``ray[serve]`` and the
environment's dependencies. Only the standard library and ray are imported here, and ray only
inside :func:`main`'s actions, so a missing ray is reported as data, not a traceback.

The driver connects to a running Ray cluster, deploys or deletes one Serve application, prints
one line ``ENVKIT_RESULT {json}`` on stdout and exits; the application stays up (Serve's
controller is a detached actor). It never stops Ray.

Facts (Ray Serve 2.60, measured on 2-core machines, see docs/scale.md):

- Replicas need the environment's code: the environment directory is the job's
  ``runtime_env`` ``working_dir``, which Serve passes on to the replicas.
- The unchanged OpenEnv app runs under ``@serve.ingress(builder)``; ``builder()`` imports the
  manifest's ``module:attr`` inside the replica, so nothing of OpenEnv is pickled.
- A WebSocket holds one of a replica's ``max_ongoing_requests`` for its whole life, so it is set
  to the app's ``max_concurrent_envs``.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import time
import urllib.request
from collections.abc import Callable
from types import ModuleType
from typing import Any

RESULT_PREFIX = "ENVKIT_RESULT "
#: Exit codes the caller maps to its errors (see envkit.scale.ray_deploy).
EXIT_NO_RAY = 3
EXIT_NO_CLUSTER = 4
EXIT_UNHEALTHY = 5
EXIT_NOT_FOUND = 6


def _emit(payload: dict[str, Any], code: int = 0) -> None:
    print(RESULT_PREFIX + json.dumps(payload), flush=True)
    sys.exit(code)


def _import_serve() -> ModuleType:
    try:
        import ray  # noqa: F401
        from ray import serve
    except ImportError as exc:
        _emit({"error": "no-ray", "detail": str(exc), "python": sys.executable}, EXIT_NO_RAY)
    return serve


def _reachable(address: str) -> str | None:
    """``None`` when ``host:port`` accepts a TCP connection (or is not ``host:port``, like
    ``auto``), else why not: ``ray.init`` retries an unreachable address for minutes."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "//" in address:
        return None
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            return None
    except OSError as exc:
        return f"{address}: {exc}"


def _connect(args: dict[str, Any], runtime_env: dict[str, Any] | None) -> None:
    import ray

    problem = _reachable(args["address"])
    if problem is not None:
        _emit({"error": "no-cluster", "detail": problem}, EXIT_NO_CLUSTER)
    try:
        ray.init(
            address=args["address"],
            runtime_env=runtime_env,
            namespace="serve",
            log_to_driver=False,
            logging_level="WARNING",
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        _emit({"error": "no-cluster", "detail": str(exc)}, EXIT_NO_CLUSTER)


def _builder(app: str) -> Callable[[], object]:
    """A function that imports ``module:attr`` when the replica calls it (cloudpickle sends
    this function by value; the import happens in the replica's working_dir)."""

    def build() -> object:
        import importlib  # inside: the function is pickled by value and runs in the replica

        module_name, _, attr = app.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj

    return build


def _wait_healthy(url: str, timeout_s: float) -> str | None:
    """``None`` once ``GET url/health`` answers 200 through the proxy, else the last error."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as reply:
                if reply.status == 200:
                    return None
                last = f"HTTP {reply.status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.5)
    return last


def _proxy_address(host: str, port: int) -> tuple[str, int]:
    """The host and port Serve's proxy really uses: ``serve.start`` keeps the HTTP options of
    a Serve instance already running on the cluster (it only logs that new ones are not
    applied), so a second application shares the first one's port."""
    try:
        from ray.serve.context import _get_global_client

        config = _get_global_client().http_config
        return str(config.host), int(config.port)
    except Exception:  # noqa: BLE001 - a private API; the asked-for address is the fallback
        return host, port


def _failure(exc: BaseException) -> dict[str, Any]:
    """The result for a failed ``serve.run``: the last line of Serve's message without colour
    codes (a remote traceback otherwise), and ``prefix-taken`` when another application
    already serves ``/`` on this Serve instance."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    last = text.splitlines()[-1] if text else type(exc).__name__
    taken = re.search(r'Prefix / is being used by application "([^"]+)"', text)
    if taken:
        return {"error": "prefix-taken", "detail": taken.group(1)}
    return {"error": "unhealthy", "detail": last}


def deploy(args: dict[str, Any]) -> None:
    """Deploy ``args["app"]`` from ``args["env_dir"]`` as Serve application ``args["name"]``."""
    serve = _import_serve()
    runtime_env = {
        "working_dir": args["env_dir"],
        "excludes": args["excludes"],
        "env_vars": args["env_vars"],
    }
    _connect(args, runtime_env)
    serve.start(http_options={"host": args["host"], "port": args["port"]})
    host, port = _proxy_address(args["host"], args["port"])
    options: dict[str, Any] = {"max_ongoing_requests": args["max_ongoing_requests"]}
    if args.get("autoscaling"):
        options["autoscaling_config"] = args["autoscaling"]
    else:
        options["num_replicas"] = args["replicas"]
    if args.get("num_cpus") is not None:
        options["ray_actor_options"] = {"num_cpus": args["num_cpus"]}

    @serve.deployment(name="env", **options)
    @serve.ingress(_builder(args["app"]))
    class Environment:
        """One replica: the environment's own ASGI app, unchanged."""

    started = time.monotonic()
    try:
        serve.run(Environment.bind(), name=args["name"], route_prefix="/")
    except Exception as exc:  # noqa: BLE001 - Serve raises its own types for a failed app
        _emit(_failure(exc), EXIT_UNHEALTHY)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    problem = _wait_healthy(url, args["timeout_s"])
    if problem is not None:
        _emit({"error": "unhealthy", "detail": f"GET {url}/health: {problem}"}, EXIT_UNHEALTHY)
    seconds = round(time.monotonic() - started, 1)
    _emit({"url": url, "name": args["name"], "seconds": seconds, "port": port, "host": host})


def delete(args: dict[str, Any]) -> None:
    """Delete Serve application ``args["name"]``; Ray and other applications keep running."""
    serve = _import_serve()
    _connect(args, None)
    names = sorted(serve.status().applications)
    if args["name"] not in names:
        _emit({"error": "not-found", "detail": args["name"], "apps": names}, EXIT_NOT_FOUND)
    serve.delete(args["name"])
    left = sorted(serve.status().applications)
    _emit({"name": args["name"], "apps": left})


def status(args: dict[str, Any]) -> None:
    """The Serve applications and their states (``{"apps": {name: status}}``)."""
    serve = _import_serve()
    _connect(args, None)
    apps = serve.status().applications
    _emit(
        {
            "apps": {
                name: str(getattr(app.status, "value", app.status)) for name, app in apps.items()
            }
        }
    )


def main(argv: list[str]) -> None:
    """``ray_driver.py '{"action": "deploy"|"delete"|"status", ...}'``."""
    args = json.loads(argv[1])
    {"deploy": deploy, "delete": delete, "status": status}[args["action"]](args)


if __name__ == "__main__":
    main(sys.argv)
