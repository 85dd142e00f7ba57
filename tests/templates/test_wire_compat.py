"""WIRE-COMPATIBILITY FIXTURE, on purpose on the OLD distribution (issue #11).

Everything else in the suite runs on `openenv` 0.10. Many deployed Spaces still run servers
built on `openenv-core` 0.3.0, so this one test serves the echo template pinned to
`openenv-core==0.3.0`, installed into a venv of its own (the two distributions install the
same packages and must never share a venv), and talks to it ONLY over the wire (HTTP + WS):
envkit's runtime validation and the probe-plan recorder must work against it unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_openenv_core_030_server_over_the_wire(tmp_path):
    from envkit.envdir.uv import uv_binary
    from envkit.probe_plan import play_probe_plan, read_plan
    from envkit.scaffold import init_project
    from envkit.server import start_server
    from envkit.validation import validate

    env = init_project("old-space", template="echo", output_dir=tmp_path, lock=False).path
    pyproject = env / "pyproject.toml"
    text = pyproject.read_text()
    assert '"openenv>=0.10,<0.11"' in text
    pyproject.write_text(text.replace('"openenv>=0.10,<0.11"', '"openenv-core==0.3.0"'))
    uv = uv_binary()
    venv = tmp_path / "venv-openenv-core-0.3.0"
    subprocess.run(
        [uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120
    )
    python = str(venv / "bin" / "python")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", python, "-e", str(env)], check=True, timeout=600
    )
    installed = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('openenv-core'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert installed == "0.3.0"

    server = start_server(env, "server.app:app", python=python)
    try:
        server.wait_healthy(timeout_s=120)
        report = validate(None, url=server.url, episodes=2)
        errors = [(f.code, f.message) for f in report.findings if f.severity.value == "error"]
        assert errors == [] and report.summary["checks_run"] > 0
        # the same oracle episode as on 0.10: the plan init wrote is valid for old servers too
        played = play_probe_plan(server.url, env, python=python, oracle="server.oracle:policy")
        assert played == read_plan(env)
    finally:
        server.stop()
