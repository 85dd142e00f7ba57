"""Safety paths fail closed (issue #12, defect 1): a bug in a rule stops `build` with an
internal error (exit 2) before the Docker engine is touched, and a command module that cannot
be imported stops the CLI (exit 2) instead of vanishing from `--help`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _broken(*args, **kwargs):
    raise TypeError("simulated bug in a Dockerfile rule")


def test_build_stops_on_a_crashing_dockerfile_rule(cli, echo_env, monkeypatch):
    import envkit.container.build
    import envkit.validation.rules.dockerfile

    def no_docker(*args, **kwargs):  # the preflight must stop the build before the engine
        raise AssertionError("the Docker engine was contacted after a rule crashed")

    monkeypatch.setattr(envkit.validation.rules.dockerfile, "looks_secret", _broken)
    monkeypatch.setattr(envkit.container.build, "docker_client", no_docker)
    r = cli("build", echo_env, "--tag", "envkit-safety-test:never")
    assert r.exit_code == 2, r.output
    assert "Internal error: TypeError: simulated bug in a Dockerfile rule" in r.stderr
    assert "built-in checks" not in r.output


def test_build_with_no_check_skips_the_rules_on_purpose(echo_env, monkeypatch):
    """--no-check is the one explicit way to build without the rules: they are not run."""
    from envkit.container import build as build_mod

    called = []
    monkeypatch.setattr(build_mod, "preflight", lambda *a, **k: called.append(1) or ([], [], "x"))

    monkeypatch.setattr(build_mod, "docker_client", _broken)  # stop where the engine starts
    with pytest.raises(TypeError, match="simulated"):
        build_mod.build_image(echo_env, tag="envkit-safety-test:never", check=False)
    assert called == []


def _run_cli(tmp_path: Path, prelude: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "run_envkit.py"
    script.write_text(
        textwrap.dedent(prelude)
        + textwrap.dedent("""
        import sys
        from envkit.cli import main
        sys.argv = ["envkit", *sys.argv[1:]]
        main()
    """)
    )
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(tmp_path)}
    env.pop("ENVKIT_DEBUG", None)
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )


def test_a_missing_command_module_stops_the_cli(tmp_path):
    r = _run_cli(
        tmp_path,
        """
        import sys
        sys.modules["envkit.cli.push"] = None  # as if envkit/cli/push.py were not installed
    """,
        "--help",
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "the `envkit push` command cannot be loaded" in r.stderr
    assert "reinstall" in r.stderr and "Traceback" not in r.stderr


def test_a_broken_module_on_sys_path_stops_the_cli(tmp_path):
    # The import system itself fails on a command module (a broken file, a bad install).
    r = _run_cli(
        tmp_path,
        """
        import importlib.abc, sys

        class Broken(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "envkit.cli.validate":
                    raise SyntaxError("invalid syntax (validate.py, line 1)")
                return None

        sys.meta_path.insert(0, Broken())
    """,
        "validate",
        "--help",
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "`envkit validate` command cannot be loaded (SyntaxError" in r.stderr
    assert "Traceback" not in r.stderr
