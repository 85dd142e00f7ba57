"""Fixtures for the Docker area: a real engine, one build of the echo template per session,
and cleanup of everything labelled with this session's ``envkit.test`` value."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TEST_LABEL = "envkit.test"


@dataclass
class Built:
    """The echo environment (a private copy) and its build."""

    path: Path
    tag: str
    result: object  # envkit.container.BuildResult


@pytest.fixture(scope="session")
def run_id() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture(scope="session")
def dclient(docker_engine: None, run_id: str) -> Iterator:
    """docker SDK client; at the end removes every container and image carrying this
    session's label (tests must not leave anything behind, even when they fail). An image
    goes without its untagged parent layers: the dependency layers (a `uv pip install` of
    openenv, tens of seconds) stay in the engine's build cache for the next run, as a user's
    rebuild keeps them."""
    import docker

    from envkit.container._engine import listed_containers

    client = docker.from_env(timeout=120)
    try:
        yield client
    finally:
        selector = {"label": [f"{TEST_LABEL}={run_id}"]}
        for c in listed_containers(client, selector):
            c.remove(force=True)
        for img in client.images.list(filters=selector):
            try:
                client.images.remove(img.id, force=True, noprune=True)
            except docker.errors.APIError:
                pass
        client.close()


@pytest.fixture(scope="session")
def labels(run_id: str) -> dict[str, str]:
    return {TEST_LABEL: run_id}


@pytest.fixture(scope="session")
def built_echo(
    echo_env: Path,
    dclient,
    labels: dict[str, str],
    run_id: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Built:
    """One build of the echo template (through the library), shared by the session; cold on
    a fresh engine, its dependency layers cached after the first run (:func:`dclient`)."""
    from envkit.container import build_image

    path = tmp_path_factory.mktemp("docker-env") / "echo-env"
    shutil.copytree(echo_env, path, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    tag = f"envkit-test-echo:{run_id}"
    result = build_image(path, tag=tag, labels=labels)
    return Built(path=path, tag=tag, result=result)
