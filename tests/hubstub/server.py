"""Launcher of the Hub stand-in: uvicorn in a thread on a free 127.0.0.1 port.

An ASGI middleware in front of the app records every request (method, path, query, status,
request-body bytes, whether it was authenticated), injects failures on demand
(:meth:`HubStub.fail`) and can hold a request until released (:meth:`HubStub.hold`). The client
has no request timeout, so the stand-in always answers: a held request is released after
``max_hold_s`` at the latest.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hubstub.app import build_app, subdomain
from tests.hubstub.state import HubState, Space

WRITE_TOKEN = "hf_STANDINwriteTOKEN0123456789abcdefXYZ"
READ_TOKEN = "hf_STANDINreadTOKEN0123456789abcdefXYZ0"
_TOKENS = {
    WRITE_TOKEN: {"name": "alice", "role": "write", "orgs": ["envkit-org"]},
    READ_TOKEN: {"name": "alice", "role": "read", "orgs": []},
}
WRITE_METHODS = {"POST", "PUT", "DELETE", "PATCH"}


@dataclass
class Recorded:
    """One request the stand-in received."""

    method: str
    path: str
    query: str
    status: int = 0
    body_bytes: int = 0
    authorization: bool = False
    injected: bool = False


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


class _Middleware:
    def __init__(self, app: Any, stub: HubStub) -> None:
        self.app = app
        self.stub = stub

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        rec = Recorded(
            scope["method"],
            scope["path"],
            scope.get("query_string", b"").decode(),
            authorization="authorization" in headers,
        )
        with self.stub._lock:
            self.stub.requests.append(rec)
        hold = self.stub._match_hold(rec)
        if hold is not None:
            deadline = time.monotonic() + self.stub.max_hold_s
            hold[1].set()  # tell the test the request arrived
            while not hold[0].is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)

        async def counting_receive() -> dict:
            message = await receive()
            if message["type"] == "http.request":
                rec.body_bytes += len(message.get("body", b""))
            return message

        async def recording_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                rec.status = message["status"]
            await send(message)

        fault = self.stub._take_fault(rec)
        if fault is not None:
            rec.injected = True
            # Drain the body (the client must have sent it) before answering.
            while True:
                message = await counting_receive()
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
            body = json.dumps(fault.body or {"error": f"injected {fault.status}"}).encode()
            hdrs = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]
            hdrs += [(k.encode(), v.encode()) for k, v in fault.headers.items()]
            await recording_send(
                {"type": "http.response.start", "status": fault.status, "headers": hdrs}
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, counting_receive, recording_send)


class HubStub:
    """A running stand-in. Create with :meth:`start` (a context manager)."""

    def __init__(self, root: Path) -> None:
        self.state = HubState(root)
        self.config: dict[str, Any] = {"paid_namespaces": None}
        self.requests: list[Recorded] = []
        self.max_hold_s = 30.0
        self._faults: list[_Fault] = []
        self._holds: list[tuple[str, re.Pattern[str], threading.Event, threading.Event]] = []
        self._lock = threading.Lock()
        self.app = _Middleware(build_app(self.state, _TOKENS, self.config), self)
        self.url = ""

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    @contextmanager
    def start(cls, root: Path) -> Iterator[HubStub]:
        from tests.helpers import serve_in_thread

        stub = cls(root)
        config = {"access_log": False, "lifespan": "off", "ws": "none"}
        with serve_in_thread(stub.app, "hubstub", **config) as url:
            stub.url = url
            try:
                yield stub
            finally:
                stub._release_holds()  # a held request must not keep uvicorn from stopping

    def _release_holds(self) -> None:
        for release, _arrived in [(h[2], h[3]) for h in self._holds]:
            release.set()

    # -- knobs -------------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Answer the next ``times`` requests matching ``method`` and ``path_regex`` with
        ``status``. 429 and 5xx carry ``Retry-After: 0`` unless ``headers`` say otherwise
        (keeps the client's backoff short)."""
        hdrs = dict(headers or {})
        if status == 429 or status >= 500:
            hdrs.setdefault("Retry-After", "0")
        with self._lock:
            self._faults.append(
                _Fault(method.upper(), re.compile(path_regex), status, times, hdrs, body or {})
            )

    def hold(self, method: str, path_regex: str) -> tuple[threading.Event, threading.Event]:
        """Hold matching requests until ``release.set()``; returns ``(release, arrived)``."""
        release, arrived = threading.Event(), threading.Event()
        with self._lock:
            self._holds.append((method.upper(), re.compile(path_regex), release, arrived))
        return release, arrived

    def clear(self) -> None:
        """Forget faults, holds and recorded requests."""
        with self._lock:
            for h in self._holds:
                h[2].set()
            self._faults.clear()
            self._holds.clear()
            self.requests.clear()

    def _take_fault(self, rec: Recorded) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if (
                    fault.times > 0
                    and fault.method in (rec.method, "*")
                    and fault.pattern.search(rec.path)
                ):
                    fault.times -= 1
                    return fault
        return None

    def _match_hold(self, rec: Recorded):
        with self._lock:
            for method, pattern, release, arrived in self._holds:
                if (
                    method in (rec.method, "*")
                    and pattern.search(rec.path)
                    and not release.is_set()
                ):
                    return release, arrived
        return None

    # -- inspection --------------------------------------------------------------------------
    def space(self, repo_id: str) -> Space:
        return self.state.spaces[repo_id]

    def files(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        """``{path: content}`` of the Space at ``rev``."""
        tree = self.space(repo_id).tree(rev) or {}
        return {p: self.state.blob(o) for p, o in tree.items()}

    def dataset_files(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        """``{path: content}`` of the dataset ``repo_id`` at ``rev``."""
        tree = self.state.datasets[repo_id].tree(rev) or {}
        return {p: self.state.blob(o) for p, o in tree.items()}

    def head(self, repo_id: str, rev: str = "main") -> str:
        return self.space(repo_id).refs[rev]

    def commit_count(self, repo_id: str) -> int:
        return len(self.space(repo_id).commits)

    def writes(self) -> list[Recorded]:
        """Requests that would change something (POST/PUT/DELETE), excluding read-only POSTs
        (``validate-yaml``)."""
        return [
            r
            for r in self.requests
            if r.method in WRITE_METHODS and not r.path.endswith("/validate-yaml")
        ]

    def set_runtime(self, repo_id: str, *stages: str) -> None:
        """Stages the next GET runtime calls return, in order (the last one then sticks)."""
        space = self.space(repo_id)
        space.runtime_script = list(stages)

    def set_host(self, repo_id: str, url: str) -> None:
        """The app URL the Hub reports for the Space (``host`` in GET /api/spaces/{id})."""
        self.space(repo_id).host = url

    def seed_space(
        self,
        repo_id: str,
        files: dict[str, bytes],
        *,
        private: bool = False,
        hardware: str = "cpu-basic",
    ) -> Space:
        """Create a Space directly (as if pushed earlier), with one commit of ``files``."""
        with self.state.lock:
            space = self.state.create(
                repo_id,
                sdk="docker",
                private=private,
                hardware=hardware,
                author=repo_id.split("/")[0],
            )
            if files:
                self.state.commit(space, "main", files, [], "seed", "alice")
            space.stage = "RUNNING"
            return space

    @staticmethod
    def subdomain(repo_id: str) -> str:
        return subdomain(repo_id)
