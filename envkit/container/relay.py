"""Reach a server inside a ``--network none`` container from the host.

A container without a network has nothing to publish a port on. OpenEnv 0.10's validator
relays through ``docker exec`` into a helper image pulled from a registry; envkit pulls
nothing: :class:`ExecRelay` runs ONE ``docker exec -i CONTAINER python3 -c RELAY PORT`` in
the environment's own container and multiplexes every TCP connection of a host listener on
127.0.0.1 over that process's stdin/stdout (one ``docker exec`` per connection costs ~0.15 s
each; the runtime stage opens about a hundred sessions).

Frames both ways: ``>IBI`` (connection id, kind, payload length) then the payload; kinds
0 = open, 1 = data, 2 = close (half-close towards the receiver).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import subprocess
import threading
from typing import IO

from envkit import programs
from envkit.errors import ContainerError, InternalError

_HEADER = struct.Struct(">IBI")
OPEN, DATA, CLOSE = 0, 1, 2

#: The program run inside the container (:mod:`envkit.programs.exec_relay`), sent as text:
#: the container has no envkit.
RELAY_SCRIPT = programs.source("exec_relay")


#: Where Debian's docker.io puts its CLI: tried last, when ``docker`` is not on ``PATH``.
FALLBACK_DOCKER_CLI = "/usr/bin/docker"


def docker_cli() -> str:
    """The docker CLI used for ``docker exec`` (``$ENVKIT_DOCKER_CLI``, else ``docker`` on
    ``PATH``, else :data:`FALLBACK_DOCKER_CLI`).

    Raises:
        ContainerError: none found.
    """
    for exe in (os.environ.get("ENVKIT_DOCKER_CLI"), shutil.which("docker"), FALLBACK_DOCKER_CLI):
        if exe and os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    raise ContainerError(
        "No docker CLI found: the `no-network` lane relays through `docker exec`.",
        hint="Install the docker CLI (or set "
        "ENVKIT_DOCKER_CLI), or declare `network: {mode: public}`.",
    )


class ExecRelay:
    """A host TCP listener on 127.0.0.1 whose connections reach ``127.0.0.1:port`` inside a
    container, through one ``docker exec`` process.

    Use as a context manager; :attr:`url` is ``http://127.0.0.1:<listener port>``.

    Args:
        container_id: the running container.
        port: the server's port inside the container.
        bind_port: host port to listen on (127.0.0.1); 0 picks a free one.
    """

    def __init__(self, container_id: str, port: int, *, bind_port: int = 0):
        self.container_id = container_id
        self.port = port
        self.bind_port = bind_port
        self._proc: subprocess.Popen[bytes] | None = None
        self._listener: socket.socket | None = None
        self._conns: dict[int, socket.socket] = {}
        self._next = 1
        self._lock = threading.Lock()
        self._closed = False

    def _started(self) -> tuple[socket.socket, subprocess.Popen[bytes]]:
        """The listener and the ``docker exec`` process.

        Raises:
            InternalError: :meth:`start` has not run (a bug in the caller).
        """
        if self._listener is None or self._proc is None:
            raise InternalError("The exec relay was used before start().")
        return self._listener, self._proc

    @property
    def url(self) -> str:
        listener, _proc = self._started()
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    def __enter__(self) -> ExecRelay:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the ``docker exec`` process and the listener.

        Raises:
            ContainerError: no docker CLI.
        """
        self._proc = subprocess.Popen(
            [
                docker_cli(),
                "exec",
                "-i",
                self.container_id,
                "python3",
                "-c",
                RELAY_SCRIPT,
                str(self.port),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", self.bind_port))
        self._listener.listen(128)
        threading.Thread(target=self._accept, daemon=True, name="relay-accept").start()
        threading.Thread(target=self._demux, daemon=True, name="relay-demux").start()

    def alive(self) -> bool:
        """True while the ``docker exec`` process runs."""
        return self._proc is not None and self._proc.poll() is None

    def _send(self, cid: int, kind: int, data: bytes = b"") -> None:
        stdin = self._started()[1].stdin
        if stdin is None:  # started without a pipe: nothing can be relayed
            return
        with self._lock:
            try:
                stdin.write(_HEADER.pack(cid, kind, len(data)) + data)
                stdin.flush()
            except (OSError, ValueError):
                pass

    def _accept(self) -> None:
        listener, _proc = self._started()
        while not self._closed:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                cid = self._next
                self._next += 1
            self._conns[cid] = conn
            self._send(cid, OPEN)
            threading.Thread(target=self._upstream, args=(cid, conn), daemon=True).start()

    def _upstream(self, cid: int, conn: socket.socket) -> None:
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                self._send(cid, DATA, data)
        except OSError:
            pass
        self._send(cid, CLOSE)

    def _demux(self) -> None:
        stdout = self._started()[1].stdout
        if stdout is None:  # started without a pipe: nothing comes back
            return
        out: IO[bytes] = stdout
        while True:
            head = _read_exact(out, _HEADER.size)
            if head is None:
                break
            cid, kind, n = _HEADER.unpack(head)
            data = _read_exact(out, n) if n else b""
            if data is None:
                break
            conn = self._conns.get(cid)
            if conn is None:
                continue
            if kind == DATA:
                try:
                    conn.sendall(data)
                except OSError:
                    pass
            elif kind == CLOSE:
                self._conns.pop(cid, None)
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
        for conn in list(self._conns.values()):  # the exec ended: drop every connection
            _drop(conn)
        self._conns.clear()

    def close(self) -> None:
        """Stop listening, drop connections, end the ``docker exec`` process. Idempotent."""
        self._closed = True
        if self._listener is not None:
            _drop(self._listener)
        for conn in list(self._conns.values()):
            _drop(conn)
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
            try:
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def _drop(sock: socket.socket) -> None:
    """Shut ``sock`` down, then close it. ``close()`` alone leaves the kernel's socket open
    while another thread is blocked in ``recv()`` or ``accept()`` on it: a client would wait
    for a reply that never comes, a listener would accept one more connection."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf
