"""Fixtures of the push/fork tests: one Hub stand-in per module, pointed at by HF_ENDPOINT."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hubstub import HubStub

_ids = itertools.count(1)


@pytest.fixture(scope="module")
def hub_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubStub]:
    with HubStub.start(tmp_path_factory.mktemp("hub")) as stub:
        yield stub


@pytest.fixture
def hub(hub_server: HubStub, monkeypatch: pytest.MonkeyPatch) -> HubStub:
    """The stand-in, cleared of faults and recorded requests; HF_ENDPOINT points at it (envkit
    reads HF_ENDPOINT at call time, so in-process CLI runs use it)."""
    hub_server.clear()
    hub_server.config["paid_namespaces"] = None
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    return hub_server


@pytest.fixture
def space_id() -> str:
    """A fresh Space id in alice's namespace for each test."""
    return f"alice/env-{next(_ids)}"


@pytest.fixture
def env_copy(echo_env: Path, copy_env) -> Path:
    return copy_env(echo_env)
