"""`envkit validate` reports both digests; the schema digest read from the server it played
equals the one computed from the directory without a server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.envdir.digest import env_digest, short
from envkit.schemas import path_digests
from envkit.validation import validate
from envkit.validation.report import render

pytestmark = pytest.mark.slow  # serves the environment


def test_report_carries_the_digests_of_the_run(echo_env: Path, copy_env) -> None:
    env = copy_env(echo_env)
    report = validate(env, select=["EK401"], episodes=1, train_path=False)
    assert report.runtime_ran
    versions = json.loads(render(report, "json"))["versions"]
    assert versions["env_digest"] == env_digest(env)
    assert versions["schema_digest"] == path_digests(env).schema  # wire == in-process
    assert versions["schema_digest_note"] is None
    text = render(report, "text")
    assert f"schema-digest: {short(versions['schema_digest'])}" in text


def test_reading_the_schemas_compiles_into_envkits_cache_not_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app is imported in the environment's interpreter once per read: its bytecode goes
    to envkit's cache (as for a server), where the next read finds it, and no __pycache__
    lands in the environment's directory."""
    import sys

    from envkit.schemas import schemas_from_path

    env = tmp_path / "env"
    (env / "server").mkdir(parents=True)
    (env / "openenv.yaml").write_text(
        "spec_version: 1\nname: tiny\ntype: space\nruntime: fastapi\napp: server.app:app\n"
        "port: 8000\n"
    )
    (env / "server" / "__init__.py").write_text("")
    (env / "server" / "app.py").write_text(
        "async def app(scope, receive, send):\n"
        '    body = b\'{"action": {}, "observation": {}, "state": {}}\'\n'
        "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': body})\n"
    )
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)  # the suite's own prefix
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert schemas_from_path(env, sys.executable) == {"action": {}, "observation": {}, "state": {}}
    mirror = tmp_path / "cache" / "envkit" / "pycache" / env.resolve().relative_to("/")
    assert list((mirror / "server").glob("app.*.pyc")), sorted(tmp_path.rglob("*.pyc"))
    assert not list(env.rglob("__pycache__"))
