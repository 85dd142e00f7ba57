"""The candidates really start (real uvicorn on 127.0.0.1, stopped by process group): on an
in-repo layout the manifest form dies with the relative-import error that `root_cause` names,
and the package form serves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from envkit.envdir.launch import LaunchCandidate, launch_candidates, root_cause
from envkit.envdir.manifest import read_manifest
from envkit.server import free_port

from .conftest import write


def _run(cand: LaunchCandidate, log: Path, timeout_s: float = 60.0) -> tuple[bool, str]:
    """Start ``cand``; (answered /health, log text). Always stops the whole process group."""
    port = free_port()
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            cand.argv(sys.executable, "127.0.0.1", port),
            cwd=cand.cwd,
            env={**cand.merged_env(os.environ), **cand.run_env("127.0.0.1", port)},
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    return True, log.read_text()
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        return False, log.read_text()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def test_in_repo_layout_manifest_form_fails_and_package_form_serves(
    in_repo: Path, tmp_path: Path
) -> None:
    manifest, package = launch_candidates(in_repo, read_manifest(in_repo))
    ok, log = _run(manifest, tmp_path / "manifest.log")
    assert not ok
    cause = root_cause(log)
    assert cause is not None
    # `server` is a package, so `..models` climbs above the top level.
    assert cause.line == "ImportError: attempted relative import beyond top-level package"
    ok, log = _run(package, tmp_path / "package.log")
    assert ok, log


def test_main_form_gets_host_and_port(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "pyproject.toml": '[project]\nname = "svc"\nversion = "0"\n'
            '[project.scripts]\nserver = "svc_server.main:run"\n',
            "svc_server/__init__.py": "",
            "svc_server/main.py": """
            import argparse


            def run():
                from fastapi import FastAPI
                import uvicorn

                api = FastAPI()
                api.get("/health")(lambda: {"status": "healthy"})
                p = argparse.ArgumentParser()
                p.add_argument("--host", default="0.0.0.0")
                p.add_argument("--port", type=int, default=8000)
                a = p.parse_args()
                uvicorn.run(api, host=a.host, port=a.port)
        """,
        },
    )
    (cand,) = launch_candidates(root, None)
    assert cand.main == "svc_server.main:run"
    ok, log = _run(cand, tmp_path / "main.log")
    assert ok, log
