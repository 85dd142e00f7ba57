"""Fixtures for `envkit eval` tests: a local OpenAI-compatible server (tests/evaluation/openai_stub.py)
served by a real uvicorn on 127.0.0.1 in a background thread, for the whole session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.helpers import serve_in_thread

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
    from tests.evaluation.openai_stub import make_app

    with serve_in_thread(make_app(STUB_KEY), "openai-stub", lifespan="off") as url:
        yield Stub(base_url=f"{url}/v1", key=STUB_KEY)


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
    from tests.evaluation.flaky_server import Knobs, make_app

    knobs = Knobs()
    app = make_app(knobs)
    with serve_in_thread(app, "flaky-server", lifespan="off", ws_max_size=64 * 1024 * 1024) as url:
        yield Flaky(url=url, knobs=knobs)
