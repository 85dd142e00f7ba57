"""Fixtures for `envkit eval` tests: a local OpenAI-compatible server (tests/evaluation/openai_stub.py)
served by a real uvicorn on 127.0.0.1 in a background thread, for the whole session."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from tests.evaluation.flaky_server import Knobs

STUB_KEY = "sk-stub-7f3a9c1e5b"


@dataclass
class Stub:
    base_url: str  # ends with /v1, as OpenAI-compatible servers do
    key: str

    def log(self) -> dict[str, Any]:
        return httpx.get(self.base_url[: -len("/v1")] + "/_log", timeout=5).json()

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.log()["requests"] if r["model"] == model]


@pytest.fixture(scope="session")
def openai_stub() -> Iterator[Stub]:
    import uvicorn

    from envkit.server import free_port
    from tests.evaluation.openai_stub import make_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            make_app(STUB_KEY), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True, name="openai-stub")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the OpenAI stub server did not start")
        time.sleep(0.02)
    try:
        yield Stub(base_url=f"http://127.0.0.1:{port}/v1", key=STUB_KEY)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def stub_key(monkeypatch: pytest.MonkeyPatch, openai_stub: Stub) -> str:
    """HF_TOKEN set to the stub's key (the default --api-key-env)."""
    monkeypatch.setenv("HF_TOKEN", openai_stub.key)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("API_BASE_URL", raising=False)
    monkeypatch.delenv("MODEL_NAME", raising=False)
    return openai_stub.key


@dataclass
class Flaky:
    url: str
    knobs: Knobs


@pytest.fixture
def flaky_server() -> Iterator[Flaky]:
    """tests/evaluation/flaky_server.py served by a real uvicorn on 127.0.0.1, behaving well
    until the test sets its knobs."""
    import uvicorn

    from envkit.server import free_port
    from tests.evaluation.flaky_server import Knobs, make_app

    knobs = Knobs()
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            make_app(knobs), host="127.0.0.1", port=port, log_level="warning", lifespan="off",
            ws_max_size=64 * 1024 * 1024,
        )
    )  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True, name="flaky-server")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the flaky server did not start")
        time.sleep(0.02)
    try:
        yield Flaky(url=f"http://127.0.0.1:{port}", knobs=knobs)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
