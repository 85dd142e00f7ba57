"""The hardened run options of the container lane and the manifest facts they use.

The options copy the semantics of OpenEnv 0.10's Docker validator (``docker create --init
--user 65532:65532 --read-only --cap-drop ALL --security-opt no-new-privileges --pids-limit
256``, ``--memory``/``--memory-swap``/``--cpus`` from ``validation.resources``, ``/tmp`` as a
tmpfs, ``--network none`` for ``no-network``, the port published on 127.0.0.1, no host
environment variables); see docs/rules.md, EK440-EK446.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.envdir.constants import DEFAULT_STARTUP_TIMEOUT_S, MANIFEST_NAME
from envkit.envdir.manifest import load_yaml

#: uid:gid the lane runs as (OpenEnv 0.10's validator; Spaces use 1000, also non-root).
HARDENED_USER = "65532:65532"
PIDS_LIMIT = 256
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPU = 1.0
DEFAULT_DISK_MB = 1024
#: ``/dev/shm`` size cap, bytes; it shares the declared disk allowance with ``/tmp``.
SHM_CAP_BYTES = 64 * 1024 * 1024
#: The only variables the container gets (never the host's).
CONTAINER_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


@dataclass(frozen=True)
class ContainerFacts:
    """What the lane needs from ``openenv.yaml``.

    Attributes:
        name: environment name. port: the server's port inside the container.
        memory_mb: memory limit, MiB (``validation.resources.memory_mb``).
        cpu: CPUs (``validation.resources.cpu``).
        disk_mb: writable bytes allowance for ``/tmp`` + ``/dev/shm``, MiB.
        network_mode: ``public``, ``no-network`` or ``allowlist`` (``validation.network.mode``).
        startup_timeout_s: seconds to wait for ``GET /health`` (``envkit.startup_timeout_s``).
        declared: which of the above came from the manifest (the rest are defaults).
    """

    name: str
    port: int = 8000
    memory_mb: int = DEFAULT_MEMORY_MB
    cpu: float = DEFAULT_CPU
    disk_mb: int = DEFAULT_DISK_MB
    network_mode: str = "public"
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    declared: frozenset[str] = frozenset()


def _number(value: object, *, whole: bool = False) -> float | None:
    """``value`` as a finite positive number, else ``None`` (the caller's default). With
    ``whole``, a count of MiB: below 1 it is ``None`` too, since ``int()`` would make it 0,
    which Docker (``--memory 0``) and a tmpfs (``size=0``) read as "no limit"."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value <= 0 or (whole and value < 1):
        return None
    return float(value)


def container_facts(root: Path) -> ContainerFacts:
    """Read the lane's facts from the raw ``openenv.yaml`` mapping, with defaults.

    The one place that knows where they live: RFC 008's ``validation.resources`` and
    ``validation.network.mode``, envkit's ``envkit.startup_timeout_s`` (the layout of issue
    #11), then the legacy ``validation.startup_timeout_s``. Values of the wrong type fall
    back to the defaults (the EK1xx rules report them).

    Raises:
        SpecError: no readable ``openenv.yaml`` (see :func:`envkit.envdir.manifest.load_yaml`).
    """

    data = load_yaml(root / MANIFEST_NAME).data
    data = data if isinstance(data, dict) else {}
    validation = data.get("validation") if isinstance(data.get("validation"), dict) else {}
    resources = validation.get("resources") if isinstance(validation.get("resources"), dict) else {}
    network = validation.get("network") if isinstance(validation.get("network"), dict) else {}
    envkit = data.get("envkit") if isinstance(data.get("envkit"), dict) else {}
    declared: set[str] = set()
    kw: dict[str, Any] = {}
    port = data.get("port")
    if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
        kw["port"] = port
    for key, cast in (("memory_mb", int), ("cpu", float), ("disk_mb", int)):
        value = _number(resources.get(key), whole=cast is int)
        if value is not None:
            kw[key] = cast(value)
            declared.add(key)
    if network.get("mode") in ("public", "no-network", "allowlist"):
        kw["network_mode"] = network["mode"]
        declared.add("network_mode")
    startup = _number(envkit.get("startup_timeout_s"))
    if startup is None:
        startup = _number(validation.get("startup_timeout_s"))
    if startup is not None:
        kw["startup_timeout_s"] = startup
        declared.add("startup_timeout_s")
    name = data.get("name") if isinstance(data.get("name"), str) else root.name
    return ContainerFacts(name=name, declared=frozenset(declared), **kw)


@dataclass(frozen=True)
class HardenedOptions:
    """The run options of the container lane, as docker-py keyword arguments and as the
    equivalent ``docker run`` flags (printed in findings so users can reproduce them).

    Attributes:
        facts: the manifest's facts the options come from.
    """

    facts: ContainerFacts

    @property
    def isolated(self) -> bool:
        """``--network none`` (``network.mode: no-network``): nothing is published; the lane
        reaches the server through :class:`envkit.container.relay.ExecRelay`."""
        return self.facts.network_mode == "no-network"

    def _sizes(self) -> tuple[int, int]:
        budget = self.facts.disk_mb * 1024 * 1024
        shm = min(SHM_CAP_BYTES, budget // 2)
        return shm, budget - shm

    def create_kwargs(self, host_port: int | None, host: str = "127.0.0.1") -> dict[str, Any]:
        """Keyword arguments for ``client.containers.create`` (without image, name, labels).

        Args:
            host_port: TCP port to publish on ``host``; ``None`` lets the engine pick one.
            host: address to publish on (loopback by default).
        """
        shm, tmp = self._sizes()
        mem = f"{self.facts.memory_mb}m"
        kw: dict[str, Any] = {
            "init": True,
            "user": HARDENED_USER,
            "read_only": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "pids_limit": PIDS_LIMIT,
            "mem_limit": mem,
            "memswap_limit": mem,
            "nano_cpus": int(self.facts.cpu * 1e9),
            "shm_size": shm,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={tmp},mode=1777"},
            "environment": dict(CONTAINER_ENV),
            "stop_signal": "SIGTERM",
        }
        if self.isolated:
            kw["network_mode"] = "none"
        else:  # host_port None: the engine picks a free port (no race with a probe)
            kw["ports"] = {f"{self.facts.port}/tcp": (host, host_port)}
        return kw

    def flags(self, host_port: int | None = None, host: str = "127.0.0.1") -> list[str]:
        """The ``docker run`` flags equal to :meth:`create_kwargs`."""
        shm, tmp = self._sizes()
        mem = f"{self.facts.memory_mb}m"
        out = [
            "--init",
            "--user",
            HARDENED_USER,
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            str(PIDS_LIMIT),
            "--memory",
            mem,
            "--memory-swap",
            mem,
            "--cpus",
            f"{self.facts.cpu:g}",
            "--shm-size",
            str(shm),
            "--tmpfs",
            f"/tmp:rw,nosuid,nodev,size={tmp},mode=1777",
        ]
        for k, v in CONTAINER_ENV.items():
            out += ["--env", f"{k}={v}"]
        if self.isolated:
            out += ["--network", "none"]
        else:
            out += ["--publish", f"{host}:{host_port or ''}:{self.facts.port}"]
        return out

    def command(self, image: str, host_port: int | None = None) -> str:
        """``docker run --rm ... IMAGE`` as one shell-quoted line."""
        return shlex.join(["docker", "run", "--rm", *self.flags(host_port), image])
