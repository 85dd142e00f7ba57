"""What a running container shows from inside (read with ``docker exec`` as the lane's user,
no traffic sent): the addresses its server listens on, its network interfaces."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from docker.errors import DockerException

from envkit.container.hardening import HARDENED_USER

if TYPE_CHECKING:
    from docker.models.containers import Container


def _exec(container: Container, argv: list[str]) -> tuple[int, str]:
    """Run ``argv`` in the container as the lane's user; (exit code, output)."""
    try:
        code, out = container.exec_run(argv, user=HARDENED_USER, demux=False)
    except DockerException as exc:
        return 126, str(exc)
    return int(code if code is not None else 1), (out or b"").decode("utf-8", "replace")


def listening_addresses(container: Container, port: int) -> set[str]:
    """Addresses the container listens on for TCP ``port`` (``0.0.0.0``, ``127.0.0.1``,
    ``::``, ``::1``, ...), read from ``/proc/net/tcp{,6}`` inside it (no traffic sent)."""
    code, out = _exec(container, ["cat", "/proc/net/tcp", "/proc/net/tcp6"])
    if code != 0 and not out.strip().startswith("sl"):
        code, out = _exec(
            container,
            [
                "python3",
                "-c",
                (
                    "import sys\nfor f in ('/proc/net/tcp',"
                    "'/proc/net/tcp6'):\n try: sys.stdout.write(open(f)."
                    "read())\n except OSError: pass"
                ),
            ],
        )
    found: set[str] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[3] != "0A" or ":" not in parts[1]:  # 0A = LISTEN
            continue
        addr, _, hexport = parts[1].rpartition(":")
        try:
            if int(hexport, 16) != port:
                continue
            raw = bytes.fromhex(addr)
        except ValueError:
            continue
        if len(raw) == 4:
            found.add(".".join(str(b) for b in reversed(raw)))
        elif len(raw) == 16:
            words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
            found.add(str(ipaddress.IPv6Address(b"".join(words))))
    return found


def loopback_only(addrs: set[str]) -> bool:
    return bool(addrs) and all(a.startswith("127.") or a == "::1" for a in addrs)


def network_interfaces(container: Container) -> list[str] | None:
    """Interface names inside the container (``/proc/net/dev``), ``None`` if unreadable."""
    code, out = _exec(container, ["cat", "/proc/net/dev"])
    if code != 0:
        return None
    return [ln.split(":", 1)[0].strip() for ln in out.splitlines()[2:] if ":" in ln]
