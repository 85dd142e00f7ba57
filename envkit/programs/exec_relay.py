"""The container's end of :class:`envkit.container.relay.ExecRelay` (sent as
``docker exec -i CONTAINER python3 -c <this text> PORT``: the container has no envkit).

Runs inside the container, as its own user: standard library only. Multiplexes TCP
connections to ``127.0.0.1:PORT`` over stdin/stdout in frames ``>IBI`` (connection id, kind,
payload length) then the payload; kinds 0 = open, 1 = data, 2 = close (half-close towards the
receiver). Exits when stdin ends.
"""

import os
import socket
import struct
import sys
import threading

HEADER = struct.Struct(">IBI")
OPEN, DATA, CLOSE = 0, 1, 2


class Relay:
    """The frames on this process's stdin/stdout and the connections they name."""

    def __init__(self, port):
        self.port = port
        self.stdin, self.stdout = sys.stdin.buffer, sys.stdout.buffer
        self.lock = threading.Lock()
        self.sockets = {}

    def write(self, conn, kind, data=b""):
        with self.lock:
            self.stdout.write(HEADER.pack(conn, kind, len(data)) + data)
            self.stdout.flush()

    def read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.stdin.read(n - len(buf))
            if not chunk:
                os._exit(0)
            buf += chunk
        return buf

    def pump(self, conn, sock):
        """The server's bytes on ``sock`` to the host, then a close."""
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                self.write(conn, DATA, data)
        except OSError:
            pass
        self.write(conn, CLOSE)
        try:
            sock.close()
        except OSError:
            pass

    def run(self):
        while True:
            conn, kind, n = HEADER.unpack(self.read(HEADER.size))
            data = self.read(n) if n else b""
            if kind == OPEN:
                try:
                    sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                    sock.settimeout(None)
                    self.sockets[conn] = sock
                    threading.Thread(target=self.pump, args=(conn, sock), daemon=True).start()
                except OSError:
                    self.write(conn, CLOSE)
            elif kind == DATA and conn in self.sockets:
                try:
                    self.sockets[conn].sendall(data)
                except OSError:
                    pass
            elif kind == CLOSE and conn in self.sockets:
                try:
                    self.sockets.pop(conn).shutdown(socket.SHUT_WR)
                except OSError:
                    pass


if __name__ == "__main__":
    Relay(int(sys.argv[1])).run()
