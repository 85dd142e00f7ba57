"""Shared fixtures. Real parts only: real uvicorn servers on 127.0.0.1, a real Docker engine,
OpenEnv's real client (openenv 0.10, the test extra). Fixtures for one area live in that area's own conftest.py.

Tiers: `pytest_collection_modifyitems` marks every test `docker`, `browser` or `slow` from the
fixtures it uses (and the few modules that start servers or build venvs inline), so
`scripts/test --fast` (`-m "not slow and not docker and not browser"`) needs no marks written
by hand. Under pytest-xdist (`--dist loadgroup`) the Docker tests share one worker, as do the
template-venv tests and the browser tests, so session fixtures are built once and two Docker
builds never compete for the 2 cores."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import cache_root, docker_available, path_without_gradio

_REAL_HOME = Path.home()


def pytest_configure(config: pytest.Config) -> None:
    """Set the child processes' environment once, before xdist starts its workers (they and
    every process they start inherit it): no gradio (:data:`tests.helpers.WITHOUT_GRADIO`;
    ``ENVKIT_TEST_GRADIO=1`` keeps it; the Docker images have it either way), shared
    bytecode."""
    if os.environ.get("ENVKIT_TEST_GRADIO") != "1":
        os.environ["PYTHONPATH"] = path_without_gradio(os.environ.get("PYTHONPATH"))
    _share_bytecode()


def _share_bytecode() -> None:
    """One bytecode cache for the whole run (``PYTHONPYCACHEPREFIX``, kept across runs beside
    the venv cache). envkit starts servers with its cache under ``$XDG_CACHE_HOME``, which
    :func:`_isolate` makes a fresh temporary HOME per test: every server would compile
    openenv, fastapi and pydantic from source again (~2.5 s of CPU each, hundreds of starts).
    The part of the cache mirroring the temporary directory (each run's own environments) is
    dropped when a run starts. A user's own prefix or ``PYTHONDONTWRITEBYTECODE`` is kept."""
    if os.environ.get("PYTHONPYCACHEPREFIX") or os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    prefix = cache_root() / "pycache"
    mirror = prefix / Path(tempfile.gettempdir()).resolve().relative_to("/")
    shutil.rmtree(mirror, ignore_errors=True)
    prefix.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)


# Fixtures whose closure means "needs this tier" (item.fixturenames is the whole closure).
DOCKER_FIXTURES = frozenset({"docker_engine"})
BROWSER_FIXTURES = frozenset({"browser"})
# Start a uvicorn/envkit server process, run a real `envkit eval`, or build/install a venv.
SLOW_FIXTURES = frozenset(
    {
        "echo_server",  # tests/conftest.py: uvicorn subprocess
        "knobs_server",  # tests/validation: uvicorn subprocess
        "unlimited_server",  # tests/validation/test_rules.py
        "capacity2_server",  # tests/evaluation/test_eval_policies.py
        "tools_server",  # tests/evaluation/test_eval_tools.py
        "eval_dir_session",  # tests/label: a real `envkit eval` against echo_server
        "built_envs",
        "served",
        "every_env",
        "with_transformers",  # tests/templates: venvs, servers
        "openenv_cli",
        "openenv010_bin",
        "openenv_core030_bin",  # OpenEnv CLI venvs
        "installed_env",  # tests/cli/test_run.py: an env venv
        "openenv_init_env",
        "openenv_init_010",  # `openenv init` subprocesses (~20 s loaded)
    }
)
# Tests that start servers, run `envkit eval`/`validate` against a live server, or run
# `openenv init` inline (no fixture tells): node-id prefixes relative to tests/, a whole module
# or directory, or one test. Each took 10 s or more on a loaded 2-core machine.
SLOW_PATHS = (
    # the runtime-stage modules: each serves an environment (knobs, realworld, wire010)
    "validation/test_determinism.py",
    "validation/test_engine.py",
    "validation/test_fuzz.py",
    "validation/test_lifecycle.py",
    "validation/test_rules.py",
    "validation/test_templates.py",
    "validation/test_wire010.py",
    "plumbing/",  # run/validate/eval end to end, then look for leftovers
    "launch/test_validate_start.py",
    "launch/test_real_start.py",
    "evaluation/test_eval_cli.py",
    "evaluation/test_eval_hostile.py",
    "evaluation/test_eval_policies.py",
    "evaluation/test_eval_openai.py",
    "cli/test_run.py",
    "templates/test_wire_compat.py",
    "templates/test_code_limits.py",
    "safety/test_fuzz_static.py::test_static_validate_survives_any_single_file_mutation",
    "hub/test_deploy.py::test_subprocess_",
    "cli/test_init.py::test_generated_tests_pass",
    "validation/test_signal.py::test_rfc008_ids_match_openenv_010_policy_and_graders",
    # each starts a server (an environment's, or the Hub stand-in with its uploads) or a
    # second interpreter that imports openenv: seconds apiece, not the fast tier's
    "validation/test_declared_startup.py",
    "validation/test_seeds.py",
    "migrate/test_plan.py::test_",
    "hub/test_deploy.py::test_ctrl_c_mid_push",
    "hub/test_deploy.py::test_unchanged_repush",
    "hub/test_upload.py::test_apply_carries_out_the_plan",
    "hub/test_preflight.py::test_credentials_store_name_needs_an_explicit_allow",
    "hub/test_dry_run_offline.py::test_a_hub_that_never_answers",
    "evaluation/test_eval_lost.py",
)
# xdist_group per tier: one worker runs the whole group (session fixtures built once; one
# Docker build at a time on a 2-core machine). Outside the tiers, a module whose tests use a
# module-scoped fixture (a server, an installed environment, a lock) is a group of its own:
# split over two workers, each would build that fixture.
TEMPLATE_FIXTURES = frozenset({"built_envs", "served", "every_env", "with_transformers"})
_TESTS = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects and before xdist reads xdist_group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the `docker`, `browser` and `slow` marks (explicit marks stay), an `xdist_group`
    for the Docker, template and browser tiers, and run the slow tiers last (stable order)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        try:
            rel = item.path.relative_to(_TESTS).as_posix() + "::" + item.name
        except ValueError:
            rel = ""
        if names & DOCKER_FIXTURES:
            item.add_marker(pytest.mark.docker)
        if names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if names & SLOW_FIXTURES or rel.startswith(SLOW_PATHS):
            item.add_marker(pytest.mark.slow)
        group = _group(item, names)
        if group and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_tier)


# 45 random bytes in base64 (tests/safety/test_secret_scan.py draws one per collection).
_RANDOM_B64 = re.compile(r"[A-Za-z0-9+/]{60}")


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A stable id for a parameter drawn from os.urandom at import: xdist workers each
    collect the suite and refuse to run when their test ids differ."""
    if isinstance(val, str) and _RANDOM_B64.fullmatch(val):
        return f"{argname}-random-base64"
    return None


def _group(item: pytest.Item, names: set[str]) -> str | None:
    if item.get_closest_marker("docker"):
        return "docker"
    if item.get_closest_marker("browser"):
        return "browser"
    if names & TEMPLATE_FIXTURES:
        return "templates"
    if _uses_a_module_fixture(item):
        return item.nodeid.split("::", 1)[0]
    return None


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)  # pytest.Function's resolved fixture closure
    if info is None:
        return False
    return any(defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values())


def _tier(item: pytest.Item) -> int:
    """0 fast, 1 slow, 2 browser, 3 docker: quick feedback first in a serial run."""
    if item.get_closest_marker("docker"):
        return 3
    if item.get_closest_marker("browser"):
        return 2
    return 1 if item.get_closest_marker("slow") else 0


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME, HF_HOME and caches in a temp dir; stable terminal; uv keeps the real cache so
    environment venvs install in seconds."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv(
        "UV_CACHE_DIR", os.environ.get("UV_CACHE_DIR", str(_REAL_HOME / ".cache" / "uv"))
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / ".cache" / "huggingface"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("ENVKIT_DEBUG", raising=False)


class Cli:
    """Runs the real typer app in-process, like a user would from a shell."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None, env: dict | None = None):
        from envkit.cli import app

        return self.runner.invoke(
            app, [str(a) for a in args], input=input, env=env, catch_exceptions=False
        )


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture(scope="session")
def echo_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly generated echo environment (no uv.lock), shared by the session. Tests must
    not modify it: copy it first (`copy_env`)."""
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("envs")
    return init_project("echo-env", output_dir=parent, lock=False).path


@pytest.fixture(scope="session")
def echo_lock(echo_env: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The text of a real `uv lock` of the echo environment, made once per session on a copy
    (needs PyPI, ~2-5 s): EK222 checks that a lock still matches pyproject.toml, so a clean
    environment needs a true one, not a placeholder."""
    from envkit.scaffold import lock_environment

    dst = tmp_path_factory.mktemp("echo-lock") / echo_env.name
    shutil.copytree(echo_env, dst, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    result = lock_environment(dst)
    assert result.status == "written", result.message
    return (dst / "uv.lock").read_text()


@pytest.fixture
def copy_env(tmp_path: Path):
    """Copy a generated environment to a private temp dir: `copy_env(echo_env)`."""

    def _copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
        return dst

    return _copy


@pytest.fixture(scope="session")
def echo_server(echo_env: Path) -> Iterator:
    """The echo environment served by uvicorn on 127.0.0.1 with the test interpreter (which
    has openenv). Stopped, with its process group, at the end of the session."""
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    server = start_server(echo_env, read_manifest(echo_env).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Require a Docker engine. Under CI=true a missing engine FAILS the test (never skips)."""
    ok, why = docker_available()
    if not ok:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Docker engine required under CI=true but not reachable: {why}")
        pytest.skip(f"Docker engine not reachable: {why}")
