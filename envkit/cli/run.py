"""``envkit run``: serve an environment locally with uvicorn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, HostOpt, PortOpt, PythonOpt
from envkit.errors import ExitCode, ServerStartError


def run_cmd(
    path: EnvDirArg = Path("."),
    host: HostOpt = "127.0.0.1",
    port: PortOpt = None,
    reload: Annotated[bool, typer.Option("--reload", help="Restart on code changes.")] = False,
    python: PythonOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", min=1.0,
                                           help="Seconds to wait for /health.")] = 60.0,
) -> None:
    """Serve the environment with uvicorn until Ctrl-C.

    Runs `python -m uvicorn <app>` from openenv.yaml in the environment directory, with the
    environment's own interpreter (--python, else PATH/.venv/bin/python, else the current
    one), waits for GET /health and prints the URL. Ctrl-C stops the server and everything it
    started. The default port is the manifest's (8000); loopback only unless --host.

    Examples:
      envkit run
      envkit run envs/my-env --port 9000 --reload
      envkit run --host 0.0.0.0
    """
    from envkit.project import EnvProject
    from envkit.server import start_server

    project = EnvProject.load(path)
    manifest = project.manifest
    server = start_server(project.root, manifest.app, python=python, host=host,
                          port=port or manifest.port, reload=reload, capture_log=False)
    try:
        with _output.err.status(f"Starting {_output.esc(manifest.name)}…"):
            secs = server.wait_healthy(timeout_s=timeout)
        _output.success(f"{_output.esc(manifest.name)} is serving at {server.url} "
                        f"(ready in {secs:.1f} s). Ctrl-C to stop.")
        _output.info(f"  WebSocket sessions: {server.url.replace('http', 'ws', 1)}/ws   "
                     f"schema: {server.url}/schema")
        code = server.popen.wait()
        raise ServerStartError(f"The environment server exited with code {code}.",
                               hint="See its log above.")
    except KeyboardInterrupt:
        server.stop()
        _output.info("Stopped.")
        raise typer.Exit(int(ExitCode.OK)) from None
    finally:
        server.stop()


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("run")(handled(run_cmd))
