"""EK420 where sessions queue: behind a proxy that holds a session past capacity unanswered
(Ray Serve does, past replicas x capacity) the finding says so and its fix fits that lane."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from envkit.validation.engine import ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules import sessions


class QueueingProxy:
    """A TCP proxy on 127.0.0.1 that forwards at most ``slots`` connections at once; a
    connection past them is accepted and left unanswered until a slot frees (a queue)."""

    def __init__(self, upstream: tuple[str, int], slots: int) -> None:
        self.upstream = upstream
        self.slots = threading.BoundedSemaphore(slots)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with self.slots:  # queued here: the client's handshake gets no answer meanwhile
            if self.stopped.is_set():
                client.close()
                return
            upstream = socket.create_connection(self.upstream)
            done = threading.Event()
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b, done), daemon=True).start()
            done.wait()
            for s in (client, upstream):
                s.close()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket, done: threading.Event) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        done.set()

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def queueing_url(echo_server) -> Iterator[str]:
    host, port = echo_server.url.removeprefix("http://").split(":")
    proxy = QueueingProxy((host, int(port)), slots=3)
    try:
        yield f"http://127.0.0.1:{proxy.port}"
    finally:
        proxy.close()


def test_a_queued_session_gets_the_queueing_lane_s_message(queueing_url: str) -> None:
    settings = Settings.resolve(
        None, RunOptions(episodes=1, seed=0, timeout_s=60, reply_timeout_s=2.0)
    )
    engine = ServerPlayer(settings)
    engine.url = queueing_url
    try:
        assert sessions.capacity(engine) == 3
    finally:
        engine.close()
    (found,) = [f for f in engine.findings if f.code == "EK420"]
    assert "got no answer at all, as behind a proxy that queues sessions" in found.message
    assert "(3 open)" in found.message
    assert "envkit capacity" in found.fix and "Ray Serve" in found.fix
