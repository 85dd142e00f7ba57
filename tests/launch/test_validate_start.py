"""`envkit validate PATH` starts any OpenEnv layout by itself (issue #13 item 1): on an in-repo
layout the manifest form exits with a relative-import error, envkit stops it and serves the
package form, says so, and leaves no process behind; when no form serves, EK401 leads with the
root-cause line, then the command tried, then the log tail."""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from envkit.envdir.manifest import read_manifest
from envkit.errors import UsageError
from envkit.server import start_server
from tests.helpers import descendants

from .conftest import write


def _validate(cli, root: Path):
    before = descendants(os.getpid())
    result = cli(
        "validate",
        root,
        "--python",
        sys.executable,
        "--select",
        "EK4",
        "--episodes",
        "1",
        "--format",
        "json",
    )
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "validate left processes behind"
    return result, json.loads(result.stdout)


def test_validate_serves_an_in_repo_layout_by_the_package_form(cli, in_repo: Path) -> None:
    result, report = _validate(cli, in_repo)
    codes = [f["code"] for f in report["findings"]]
    assert "EK401" not in codes, report["findings"]
    assert "EK402" not in codes and "EK405" not in codes
    # the progress line (stderr) names the form that worked
    assert (
        "started with the package form from the parent folder: uvicorn "
        "ping_env.server.app:app" in result.stderr
    )


def test_no_form_serves_ek401_leads_with_the_root_cause(cli, in_repo: Path) -> None:
    # the package form now gets past the layout and fails on a missing dependency
    env_py = in_repo / "server" / "ping_environment.py"
    env_py.write_text("import ping_missing_dependency  # noqa\n" + env_py.read_text())
    result, report = _validate(cli, in_repo)
    assert result.exit_code == 1
    (ek401,) = [f for f in report["findings"] if f["code"] == "EK401"]
    msg = ek401["message"]
    # the most telling cause leads (not the layout error of the manifest form) ...
    assert msg.startswith("`ModuleNotFoundError: No module named 'ping_missing_dependency'`"), msg
    # ... then the command tried, then every way tried, then the log tail
    assert "(`uvicorn ping_env.server.app:app in " in msg
    assert msg.index("Tried:") < msg.index("Log tail of")
    assert "1. manifest app from the environment folder: uvicorn server.app:app" in msg
    assert "attempted relative import beyond top-level package" in msg
    assert msg.rstrip().splitlines()[-1].startswith("ModuleNotFoundError")
    # the server exited for want of a module and the environment has no venv: the fix says
    # so (waiting longer, the rule's generic advice, would not help)
    assert not (in_repo / ".venv").exists()
    assert "The environment has no venv" in ek401["fix"], ek401["fix"]
    assert "uv pip install --python .venv/bin/python -e ." in ek401["fix"]
    assert "startup_timeout_s" not in ek401["fix"]


def test_library_callers_of_start_server_get_the_fallback_too(in_repo: Path) -> None:
    """`envkit run` and `envkit eval` use start_server + wait_healthy: the same fallback."""
    server = start_server(in_repo, read_manifest(in_repo).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        assert server.candidate is not None and server.candidate.kind == "package"
        assert [a.candidate.kind for a in server.attempts] == ["manifest"]
        assert server.attempts[0].layout_error()
        assert server.root == in_repo.parent and server.app == "ping_env.server.app:app"
    finally:
        server.stop(grace_s=1)
    assert not server.alive()


def _flat_env(tmp_path: Path) -> Path:
    from .conftest import APP, ENVIRONMENT, MANIFEST, MODELS

    return write(
        tmp_path / "flat_env",
        {
            "openenv.yaml": MANIFEST.format(app="server.app:app"),
            "models.py": MODELS,
            "server/__init__.py": "",
            "server/ping_environment.py": ENVIRONMENT.format(models="models"),
            "server/app.py": APP.format(models="models", env_module="server.ping_environment"),
        },
    )


def test_a_clean_start_tries_nothing_else(tmp_path: Path) -> None:
    server = start_server(_flat_env(tmp_path), "server.app:app", python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        assert server.attempts == [] and server.candidate.kind == "manifest"
    finally:
        server.stop(grace_s=1)


def test_the_port_is_the_servers_before_it_answers(tmp_path: Path) -> None:
    """Two test workers once got the same free port: one's server bound it, the other's
    /health poll reached that server and validated the wrong environment. The socket is bound
    before the child starts, so nothing else can take the port while the server imports."""
    server = start_server(_flat_env(tmp_path), "server.app:app", python=sys.executable)
    try:
        with socket.socket() as other, pytest.raises(OSError) as taken:
            other.bind(("127.0.0.1", server.port))
        assert taken.value.errno == errno.EADDRINUSE
        server.wait_healthy(timeout_s=90)
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
    finally:
        server.stop(grace_s=1)
    with socket.socket() as again:  # and it is free again once the server stopped
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", server.port))


def test_a_fallback_serves_on_the_first_forms_port(in_repo: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = start_server(in_repo, read_manifest(in_repo).app, python=sys.executable, port=port)
    try:
        server.wait_healthy(timeout_s=90)
        assert server.candidate.kind == "package" and server.port == port
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    finally:
        server.stop(grace_s=1)


def test_a_taken_port_is_a_usage_error_and_starts_nothing(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        before = descendants(os.getpid())
        with pytest.raises(UsageError, match="already in use"):
            start_server(
                _flat_env(tmp_path),
                "server.app:app",
                python=sys.executable,
                port=holder.getsockname()[1],
            )
        assert descendants(os.getpid()) <= before
