"""`envkit build` against a real Docker engine (issue #4)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.container._util import containers_mentioning, write_dockerfile

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]


def _json(result) -> dict:
    return json.loads(result.stdout)


def test_build_result_and_labels(built_echo, dclient, run_id):
    result = built_echo.result
    assert result.image_id.startswith("sha256:")
    assert result.tags == [built_echo.tag]
    assert result.builder == "docker-py"
    assert result.size_mb > 50
    assert result.preflight == "the EK3xx rules" or "built-in" in result.preflight
    # Steps map back to Dockerfile lines; the dependency install is one of them.
    install = [s for s in result.steps if "uv pip install" in s.instruction]
    assert len(install) == 1 and install[0].line is not None
    image = dclient.images.get(built_echo.tag)
    assert image.id == result.image_id
    lab = image.labels
    sha = hashlib.sha256((built_echo.path / "openenv.yaml").read_bytes()).hexdigest()
    assert lab["envkit.manifest-sha256"] == sha
    assert lab["org.opencontainers.image.title"] == "echo_env"
    assert lab["org.opencontainers.image.version"] == "0.1.0"
    assert lab["org.opencontainers.image.created"].endswith("Z")
    assert lab["envkit.test"] == run_id


def test_cli_rebuild_is_cached_and_reports_json(cli, built_echo, run_id):
    r = cli(
        "build",
        built_echo.path,
        "--tag",
        built_echo.tag,
        "--label",
        f"envkit.test={run_id}",
        "--quiet",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    data = _json(r)
    assert data["tags"] == [built_echo.tag]
    assert data["builder"] == "docker-py"
    # Every Dockerfile step (not the LABEL steps the engine appends) came from the cache.
    own = [s for s in data["steps"] if s["line"] is not None]
    assert len(own) >= 10
    assert all(s["cached"] for s in own[1:]), own  # step 1 (FROM) is never "Using cache"
    assert data["cache_hits"] >= len(own) - 1
    assert data["size_mb"] > 50 and data["seconds"] > 0


def test_text_output_and_progress_lines(cli, built_echo, run_id):
    r = cli("build", built_echo.path, "--tag", built_echo.tag, "--label", f"envkit.test={run_id}")
    assert r.exit_code == 0, r.output
    assert "Step 1/" in r.stderr and "FROM python:3.11-slim" in r.stderr
    assert f"Built {built_echo.tag}" in r.stderr
    # the next step runs the image just built, not a second one under the default tag
    assert f"--docker {built_echo.path} --tag {built_echo.tag}" in " ".join(r.stderr.split())
    assert r.stdout.splitlines()[0].startswith("image   sha256:")
    assert "from cache (docker-py)" in r.stdout


def test_code_only_edit_reuses_dependency_layer(cli, built_echo, copy_env, run_id):
    env = copy_env(built_echo.path, "edited")
    code = env / "server" / "echo_env_environment.py"
    # unique per run: the engine may still hold this edit's layers from an earlier run
    code.write_text(code.read_text() + f"\n# a code-only edit ({run_id})\n")
    r = cli(
        "build",
        env,
        "--tag",
        f"envkit-test-echo:{run_id}-edit",
        "--label",
        f"envkit.test={run_id}",
        "--quiet",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    steps = _json(r)["steps"]
    dep = next(s for s in steps if "uv pip install" in s["instruction"])
    code_copy = next(s for s in steps if s["instruction"].startswith("COPY --chown"))
    assert dep["cached"] is True, "the dependency layer was rebuilt after a code-only edit"
    assert code_copy["cached"] is False


def test_failing_run_step_exit_1_with_step_and_tail(cli, dclient, copy_env, built_echo, run_id):
    env = copy_env(built_echo.path, "failing")
    marker = f"boom-{run_id}"
    write_dockerfile(
        env,
        f'FROM python:3.11-slim\nRUN echo first-line && echo {marker} && exit 3\nCMD ["true"]\n',
    )
    r = cli(
        "build",
        env,
        "--tag",
        f"envkit-test-fail:{run_id}",
        "--label",
        f"envkit.test={run_id}",
        "--quiet",
    )
    assert r.exit_code == 1, r.output
    assert "Step 2/" in r.stderr and "(Dockerfile line 2) failed" in r.stderr
    assert "returned a non-zero code: 3" in r.stderr
    assert f"│ {marker}" in r.stderr and "│ first-line" in r.stderr
    assert "Traceback" not in r.output
    assert containers_mentioning(dclient, marker) == []  # forcerm: no intermediate container
    assert dclient.images.list(name=f"envkit-test-fail:{run_id}") == []


def test_bad_dockerfile_stops_before_the_build(cli, dclient, copy_env, built_echo, run_id):
    env = copy_env(built_echo.path, "bad")
    write_dockerfile(env, "FROM python:3.11-slim\nFORM oops\nRUN true\n")
    tag = f"envkit-test-bad:{run_id}"
    r = cli("build", env, "--tag", tag, "--label", f"envkit.test={run_id}")
    assert r.exit_code == 1, r.output
    assert "did not start" in r.stderr and "Dockerfile:2" in r.stderr and "FORM" in r.stderr
    assert "--no-check" in r.stderr
    assert "Step 1/" not in r.stderr
    # --no-check lets the engine see it, and its error is reported the same way.
    r = cli("build", env, "--tag", tag, "--label", f"envkit.test={run_id}", "--no-check")
    assert r.exit_code == 1, r.output
    assert "unknown instruction" in r.stderr.lower()
    assert dclient.images.list(name=tag) == []


def test_missing_base_image_says_how_to_fix(cli, dclient, copy_env, built_echo, run_id):
    env = copy_env(built_echo.path, "nobase")
    write_dockerfile(env, "FROM envkit-test-missing/base:0\nRUN true\n")
    r = cli("build", env, "--tag", f"envkit-test-nobase:{run_id}", "--quiet", "--no-check")
    assert r.exit_code == 2, r.output
    assert "Base image `envkit-test-missing/base:0` (Dockerfile line 1)" in r.stderr
    assert "cannot be pulled" in r.stderr and "docker pull" in r.stderr


def test_buildkit_dockerfile_goes_through_the_cli(cli, dclient, copy_env, built_echo, run_id):
    env = copy_env(built_echo.path, "bk")
    write_dockerfile(
        env, f"FROM python:3.11-slim\nRUN --mount=type=cache,target=/root/.cache echo bk-{run_id}\n"
    )
    tag = f"envkit-test-bk:{run_id}"
    r = cli("build", env, "--tag", tag, "--label", f"envkit.test={run_id}", "-q", "-f", "json")
    assert r.exit_code == 0, r.output
    data = _json(r)
    assert data["builder"] == "docker-cli-buildkit"
    assert data["steps"][-1]["line"] == 2
    assert dclient.images.get(tag).labels["envkit.test"] == run_id
    assert "EK306" in r.stderr  # the preflight warning is shown, not fatal


def test_buildkit_dockerfile_without_a_working_cli(cli, copy_env, built_echo, run_id):
    env = copy_env(built_echo.path, "bk2")
    write_dockerfile(env, "FROM python:3.11-slim\n\nRUN --mount=type=cache,target=/x true\n")
    r = cli(
        "build",
        env,
        "--tag",
        f"envkit-test-bk2:{run_id}",
        "-q",
        env={"ENVKIT_DOCKER_CLI": "/nonexistent/docker"},
    )
    assert r.exit_code == 1, r.output
    assert "Dockerfile line 3 uses `RUN --mount`, which needs BuildKit" in r.stderr
    assert "Rewrite that line" in r.stderr


def test_invalid_tag_is_a_usage_error(cli, built_echo):
    r = cli("build", built_echo.path, "--tag", "Not A Tag")
    assert r.exit_code == 2
    assert "not a valid image reference" in r.stderr


def test_fallback_preflight_finds_structural_errors():
    from envkit.container.dockerfile import _fallback_checks, buildkit_features

    problems = _fallback_checks("RUN true\nFORM x\n")
    texts = [str(p) for p in problems]
    assert any("Dockerfile:2: unknown instruction `FORM`" in t for t in texts), texts
    assert any("expected `FROM` as the first instruction" in t for t in texts), texts
    assert _fallback_checks("ARG V=1\nFROM python:3.11-slim\nRUN true\n") == []
    feats = buildkit_features(
        "# syntax=docker/dockerfile:1\nFROM x\nCOPY --chmod=755 a b\nRUN <<EOF\necho hi\nEOF\n"
    )
    assert [(f.line, f.what) for f in feats][:2] == [
        (1, "`# syntax=` parser directive"),
        (3, "`COPY --chmod`"),
    ]
    assert any("heredoc" in f.what for f in feats)


@pytest.mark.parametrize("args", [("build",), ("run", "--docker", "--detach"), ("stop",)])
def test_no_engine_exit_2(cli, built_echo, args):
    from envkit.server import free_port

    host = f"tcp://127.0.0.1:{free_port()}"
    argv = list(args) + ([str(built_echo.path)] if args[0] != "stop" else [])
    r = cli(*argv, env={"DOCKER_HOST": host})
    assert r.exit_code == 2, r.output
    assert f"Docker engine not reachable at {host}:" in r.stderr
    assert "Start it" in r.stderr and "DOCKER_HOST" in r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("command", ["build", "run", "stop"])
def test_help_has_examples(cli, command):
    r = cli(command, "--help")
    assert r.exit_code == 0
    assert "Examples:" in r.stdout


def test_envkit_help_does_not_import_docker():
    import subprocess
    import sys

    code = (
        "import sys; from envkit.cli import app; "
        "print(sorted(m for m in ('docker','huggingface_hub','jinja2') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert out.returncode == 0, out.stderr
    assert "docker" not in out.stdout, out.stdout
