"""Fixtures for the template family (issue 6): each template generated, locked, installed
into its own venv (`openenv` 0.10 and the template's dependencies from PyPI through the shared
uv cache) once per session, and served on 127.0.0.1 once per module. `openenv_cli` is OpenEnv
0.10's own CLI from a venv of its own (issue #11: `openenv` and `openenv-core` install the
same packages, so the peer validator never shares a venv with anything else)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from envkit.catalog import DEFAULT_TEMPLATE
from envkit.resources import templates_dir
from tests.helpers import cached_venv, locked_env_venv, shipped_templates

#: Every template envkit ships, the default first: a new template is in every test below
#: without being named here.
SHIPPED: tuple[str, ...] = shipped_templates()
#: The family the session builds and serves: every shipped template but the default (echo),
#: which tests/cli and tests/validation play on their own fixtures.
TEMPLATES: tuple[str, ...] = tuple(name for name in SHIPPED if name != DEFAULT_TEMPLATE)
#: The templates with a TRL adapter (trl_env.py): the multi-turn ones.
WITH_ADAPTER: tuple[str, ...] = tuple(
    name for name in TEMPLATES if (templates_dir() / name / "trl_env.py.jinja").is_file()
)


@dataclass(frozen=True)
class BuiltEnv:
    """A generated environment with its venv."""

    template: str
    path: Path
    python: str


def _uv() -> str:
    from envkit.envdir.uv import uv_binary

    uv = uv_binary()
    assert uv, "uv is required (declared dependency of rl-envkit)"
    return uv


def build_env(
    parent: Path, template: str, *, extra_requirements: str = "", **options: str
) -> BuiltEnv:
    """`envkit init` (with `uv lock`), then the environment's venv: the locked dependencies
    and pytest come from a venv cached across runs by the hash of that dependency set
    (`tests.helpers.cached_venv`); the environment itself is installed editable, `--no-deps`,
    into a fresh venv layered on top (`env/.venv`, private to this session).

    `extra_requirements` (requirements.txt text, e.g. a trainer's torch and TRL) is installed
    into the cached venv together with the locked set, so it is part of the cache key."""
    from envkit.scaffold import init_project

    result = init_project(
        f"{template}-env", template=template, output_dir=parent, options=options or None
    )
    assert result.lock.status == "written", result.lock.message
    python = locked_env_venv(result.path, extra_requirements)
    return BuiltEnv(template, result.path, python)


@pytest.fixture(scope="session")
def built_envs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuiltEnv]:
    """Every template of the family, generated and installed once per session (in parallel:
    uv lock and uv pip are network/IO bound)."""
    from concurrent.futures import ThreadPoolExecutor

    parent = tmp_path_factory.mktemp("templates")
    _uv()  # warm sysconfig first: its lazy init races when uv's find_uv_bin runs in threads
    with ThreadPoolExecutor(max_workers=len(TEMPLATES)) as pool:
        futures = {t: pool.submit(build_env, parent, t) for t in TEMPLATES}
        return {t: f.result() for t, f in futures.items()}


@pytest.fixture(scope="session")
def served(built_envs: dict[str, BuiltEnv]) -> Iterator[dict[str, str]]:
    """Every template served by uvicorn with its own venv's interpreter; template -> URL.
    Stopped (with their process groups) at the end of the session."""
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    servers = {}
    try:
        for name, env in built_envs.items():
            servers[name] = start_server(env.path, read_manifest(env.path).app, python=env.python)
        for server in servers.values():
            server.wait_healthy(timeout_s=120)
        yield {name: server.url for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


OPENENV_VERSION = "0.10.0"


@pytest.fixture(scope="session")
def openenv_cli() -> str:
    """Path of the `openenv` executable of openenv==0.10.0, installed once into its own venv
    under the real user's test cache (`tests.helpers.cached_venv`, reused across sessions
    and shared by xdist workers)."""
    return str(cached_venv(f"openenv=={OPENENV_VERSION}\n") / "bin" / "openenv")


@pytest.fixture(scope="session")
def every_env(
    built_envs: dict[str, BuiltEnv], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, BuiltEnv]:
    """`built_envs` plus the default echo template, built the same way."""
    echo = build_env(tmp_path_factory.mktemp("echo-template"), "echo")
    return {"echo": echo, **built_envs}
