"""How many replicas of an environment a number of concurrent sessions needs.

A trainer holds S WebSocket sessions at once (TRL 1.16: its ``generation_batch_size``, which
already counts every process; verl: rollout workers x the agent loops each runs; docs/scale.md,
"What S is"). One server process accepts C
of them (``max_concurrent_envs``, read from the app module or ``MAX_CONCURRENT_ENVS``), so
a pool needs ``N = ceil(S x (1 + headroom) / C)`` replicas. The headroom covers sessions a
balancer places unevenly and slots held by dropped connections until the server frees them.
Replicas per node follow from the manifest's ``validation.resources`` (cores and MiB per
replica). Every command that sizes a pool (``envkit capacity``, ``envkit run --docker
--replicas``, ``envkit deploy``) prints these same numbers.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from envkit.envdir import EnvDir
from envkit.errors import UsageError

#: Default headroom: 10% spare slots under a least-connections balancer.
DEFAULT_HEADROOM = 0.1
#: The environment variable the generated app reads its capacity from.
CAPACITY_VARIABLE = "MAX_CONCURRENT_ENVS"


@dataclass(frozen=True)
class CapacityPlan:
    """A pool's size.

    Attributes:
        per_replica: C, sessions one replica accepts (>= 2).
        replicas: N, the number of replicas (>= 1).
        sessions: S, the concurrent sessions asked for, or ``None`` when N was given.
        headroom: the fraction of spare slots N was sized with (>= 0).
        per_node: replicas that fit one node by the manifest's ``resources``, or ``None``
            when the manifest declares none.
        node_cpu: the node's cores used for ``per_node``.
        node_memory_mb: the node's memory (MiB) used for ``per_node``.
    """

    per_replica: int
    replicas: int
    sessions: int | None = None
    headroom: float = DEFAULT_HEADROOM
    per_node: int | None = None
    node_cpu: float | None = None
    node_memory_mb: int | None = None

    @property
    def total(self) -> int:
        """N x C: the sessions the whole pool accepts at once."""
        return self.replicas * self.per_replica

    @property
    def nodes(self) -> int | None:
        """Nodes of the given size the replicas need, or ``None`` without ``per_node``."""
        if not self.per_node:
            return None
        return math.ceil(self.replicas / self.per_node)

    def summary(self) -> str:
        """One line: ``3 replicas x 4 sessions = 12 concurrent sessions``."""
        unit = "replica" if self.replicas == 1 else "replicas"
        return (
            f"{self.replicas} {unit} x {self.per_replica} sessions "
            f"({CAPACITY_VARIABLE}) = {self.total} concurrent sessions"
        )

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``--format json``)."""
        return {
            "sessions": self.sessions,
            "headroom": self.headroom,
            "per_replica": self.per_replica,
            "replicas": self.replicas,
            "total": self.total,
            "per_node": self.per_node,
            "nodes": self.nodes,
            "node_cpu": self.node_cpu,
            "node_memory_mb": self.node_memory_mb,
        }


def replicas_for(sessions: int, per_replica: int, headroom: float = DEFAULT_HEADROOM) -> int:
    """``ceil(sessions x (1 + headroom) / per_replica)``, at least 1.

    Raises:
        UsageError: ``sessions`` < 1, ``per_replica`` < 1 or ``headroom`` < 0.
    """
    if sessions < 1:
        raise UsageError(f"--sessions must be at least 1, not {sessions}.")
    if per_replica < 1:
        raise UsageError(f"{CAPACITY_VARIABLE} must be at least 1, not {per_replica}.")
    if headroom < 0:
        raise UsageError(f"--headroom must be 0 or more, not {headroom}.")
    # Rounded before ceil so that 12 x 1.1 (13.200000000000001) / 4.4 is not one too many.
    return max(1, math.ceil(round(sessions * (1 + headroom) / per_replica, 9)))


def per_replica_capacity(env: EnvDir, env_vars: dict[str, str] | None = None) -> int:
    """C: the sessions one replica accepts, from ``MAX_CONCURRENT_ENVS`` in ``env_vars``
    (what the replicas are started with) or else the app module's default.

    Raises:
        UsageError: the value is not an integer, cannot be read from the app module, or is
            1 (the environment does not support concurrent sessions, so replicas cannot
            share a URL's load per session).
    """
    raw = (env_vars or {}).get(CAPACITY_VARIABLE)
    if raw is not None:
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(
                f"{CAPACITY_VARIABLE}={raw!r} is not an integer.",
                hint=f"Pass -e {CAPACITY_VARIABLE}=N with N >= 2.",
            ) from None
        where = f"-e {CAPACITY_VARIABLE}={raw}"
    else:
        cap = env.capacity
        if cap.sessions is None:
            where_file = cap.file or "the app module"
            raise UsageError(
                f"Cannot read `max_concurrent_envs` from {where_file} without running it.",
                hint=f"Pass -e {CAPACITY_VARIABLE}=N, or set "
                f"`max_concurrent_envs=int(os.environ.get('{CAPACITY_VARIABLE}', 'N'))` "
                "in `create_app(...)`.",
            )
        value = cap.sessions
        where = f"{cap.file}:{cap.line}" if cap.line else str(cap.file)
    if value < 2:
        raise UsageError(
            f"The environment accepts {value} session per server ({where}), so it does "
            "not support concurrent sessions and a pool cannot share load by session.",
            hint="Keep episode state on the environment instance, set "
            "`SUPPORTS_CONCURRENT_SESSIONS = True` and `max_concurrent_envs` >= 2 "
            "(see `envkit rules EK211`).",
        )
    return value


def node_size() -> tuple[float, int]:
    """This machine's cores and memory (MiB), the default node for ``per_node``."""
    cpu = float(os.cpu_count() or 1)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        memory = 0
    return cpu, int(memory)


def replicas_per_node(
    cpu: float | None, memory_mb: int | None, node_cpu: float, node_memory_mb: int
) -> int | None:
    """How many replicas fit a node: the smaller of cores and memory over one replica's
    declared ``resources`` (``None`` when neither is declared). At least 1: a node smaller
    than one replica's request still runs one, over-committed."""
    fits: list[int] = []
    if cpu:
        fits.append(int(node_cpu // cpu))
    if memory_mb and node_memory_mb:
        fits.append(int(node_memory_mb // memory_mb))
    return max(1, min(fits)) if fits else None


def plan_capacity(
    env: EnvDir,
    *,
    sessions: int | None = None,
    replicas: int | None = None,
    env_vars: dict[str, str] | None = None,
    headroom: float = DEFAULT_HEADROOM,
    node: tuple[float, int] | None = None,
) -> CapacityPlan:
    """Size a pool of ``env``: N from ``sessions`` (S) or as given by ``replicas``.

    Args:
        env: the environment directory (its app module and manifest are read).
        sessions: S, concurrent sessions the trainer holds; exclusive with ``replicas``.
        replicas: N as the user asked for it (>= 1).
        env_vars: the replicas' environment variables (``MAX_CONCURRENT_ENVS`` wins over
            the app module's default).
        headroom: spare fraction for ``sessions`` (default 0.1).
        node: ``(cores, MiB)`` of one node; default :func:`node_size`.

    Raises:
        UsageError: both or neither of ``sessions`` and ``replicas``; a value out of range;
            the environment does not support concurrent sessions (see
            :func:`per_replica_capacity`).
    """
    if (sessions is None) == (replicas is None):
        raise UsageError("Give exactly one of --sessions S and --replicas N.")
    per_replica = per_replica_capacity(env, env_vars)
    if replicas is not None:
        if replicas < 1:
            raise UsageError(f"--replicas must be at least 1, not {replicas}.")
        count = replicas
    else:
        count = replicas_for(int(sessions or 0), per_replica, headroom)
    node_cpu, node_memory = node or node_size()
    spec = env.spec
    return CapacityPlan(
        per_replica=per_replica,
        replicas=count,
        sessions=sessions,
        headroom=headroom,
        per_node=replicas_per_node(spec.cpu, spec.memory_mb, node_cpu, node_memory),
        node_cpu=node_cpu,
        node_memory_mb=node_memory,
    )
