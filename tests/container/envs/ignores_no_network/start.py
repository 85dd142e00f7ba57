"""Declares `network: {mode: no-network}` but opens an outbound socket when it starts.

UDP `connect()` only picks a route and sends nothing; 192.0.2.1 is TEST-NET-1 (RFC 5737),
never routed. Under `--network none` there is no route: `OSError: [Errno 101] Network is
unreachable`.
"""

import socket

import uvicorn

with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
    probe.connect(("192.0.2.1", 9))

uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
