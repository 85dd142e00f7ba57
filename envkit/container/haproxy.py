"""The balancer of a replica pool: HAProxy from Debian's package, and its configuration.

No image is pulled from a registry. :func:`ensure_haproxy_image` builds a one-step image
``FROM`` a local Debian-based image (``python:3.11-slim``, the base envkit's templates use,
else the environment's own base) with ``apt-get install haproxy`` (HAProxy 2.6 on Debian 12,
about 11 s), labelled ``envkit.managed=true`` and reused by every later pool built on the
same base. :func:`render_config` writes the configuration the balancer runs.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docker.errors import ImageNotFound

from envkit.container._engine import MANAGED_LABEL
from envkit.container.build_result import BuildEvent
from envkit.errors import BuildError, UserError

if TYPE_CHECKING:
    from docker import DockerClient

#: Image repository of the balancer image (tagged with the HAProxy package version).
HAPROXY_REPO = "envkit-haproxy"
#: Label marking the balancer image; its value is the id of the base image it was built on.
HAPROXY_BASE_LABEL = "envkit.haproxy-base"
#: Local bases tried in order (the environment's own base is appended by the caller).
DEFAULT_BASES = ("python:3.11-slim",)
#: Port HAProxy listens on inside its container for the pool's traffic.
FRONTEND_PORT = 8080
#: Port of HAProxy's statistics page (CSV at ``/stats;csv``) inside its container.
STATS_PORT = 8404
#: Where Debian's package reads its configuration.
CONFIG_PATH = "/etc/haproxy/haproxy.cfg"
#: Tunnel timeout (seconds) when the manifest declares no ``episode_timeout_s``.
DEFAULT_TUNNEL_S = 3600.0

_DOCKERFILE = """\
FROM {base}
RUN apt-get update \\
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy \\
    && rm -rf /var/lib/apt/lists/* \\
    && haproxy -v
USER haproxy
CMD ["haproxy", "-db", "-f", "{config}"]
"""
_VERSION = re.compile(r"HAProxy version (\S+)")

_TEMPLATE = """\
global
    maxconn 4096

resolvers docker
    nameserver dns 127.0.0.11:53
    resolve_retries 3
    timeout resolve 1s
    timeout retry 1s
    hold valid 2s
    hold other 2s
    hold refused 2s
    hold nx 2s
    hold timeout 2s
    hold obsolete 0s

defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout http-request 10s
    timeout queue 5s
    timeout client-fin 5s
    timeout server-fin 5s
    timeout tunnel {tunnel_s}s
    retries 2
    option redispatch 1

frontend pool
    bind :{frontend_port}
    default_backend replicas

backend replicas
    balance leastconn
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 1s fall 2 rise 2 resolvers docker init-addr none resolve-prefer ipv4
    server-template r {slots} {alias}:{port}

frontend stats
    bind :{stats_port}
    stats enable
    stats uri /stats
"""


def render_config(*, alias: str, port: int, slots: int, tunnel_s: float) -> str:
    """The HAProxy configuration of a pool.

    What the directives do (HAProxy 2.6 configuration manual, sections 3-5):

    - ``resolvers docker`` / ``nameserver dns 127.0.0.11:53``: resolve replica names with
      Docker's embedded DNS, which answers a network alias with every container holding it;
      ``hold valid 2s`` re-resolves soon, so a restarted replica (new address) rejoins, and
      ``hold obsolete 0s`` drops an address the moment DNS stops returning it.
    - ``server-template r SLOTS ALIAS:PORT ... init-addr none``: SLOTS server slots filled
      from the alias's addresses at run time (none at start: no failure before DNS answers).
    - ``balance leastconn``: a new connection goes to the replica with the fewest open ones.
      A WebSocket session is one connection, so it stays on its replica (sticky by nature)
      and sessions spread evenly.
    - ``option httpchk GET /health`` with ``check inter 1s fall 2 rise 2``: each replica is
      probed directly every second; two failures take it out, two successes bring it back.
    - ``timeout tunnel``: idle time allowed on an upgraded (WebSocket) connection; at least
      the manifest's episode timeout (OpenEnv's client pings every 20 s, so a live idle
      session is never cut). Without it an idle WebSocket dies after ``timeout client``.
    - No per-server ``maxconn``: HAProxy never queues a session; a full replica answers
      ``CAPACITY_REACHED`` itself, at once. ``timeout queue 5s`` and ``timeout connect 2s``
      bound anything that would wait anyway; ``retries 2`` with ``option redispatch`` send a
      connection that fails on a dead replica to another one.
    - ``frontend stats``: the statistics page (``/stats;csv``) envkit reads to see which
      replicas are up and how many sessions each holds.

    Args:
        alias: the replicas' network alias. port: their (manifest) port.
        slots: server slots, at least the number of replicas.
        tunnel_s: WebSocket idle timeout, seconds (rounded up to a whole second).

    Returns:
        The configuration text.
    """
    return _TEMPLATE.format(
        alias=alias,
        port=port,
        slots=slots,
        tunnel_s=max(1, int(-(-tunnel_s // 1))),
        frontend_port=FRONTEND_PORT,
        stats_port=STATS_PORT,
    )


def slots_for(replicas: int) -> int:
    """Server slots for ``replicas``: ``max(16, 2N)``, so replacements and added replicas
    find free slots."""
    return max(16, 2 * replicas)


def ensure_haproxy_image(
    client: DockerClient,
    bases: tuple[str, ...],
    labels: dict[str, str] | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
) -> str:
    """The balancer image's reference: an existing one built on the first local base, else
    a new build (``apt-get install haproxy``, about 11 s with a warm apt mirror).

    Args:
        client: an open ``docker.DockerClient``.
        bases: base image references, in order of preference; the first present locally
            is used.
        labels: extra labels for a new image.
        on_event: build progress (``step``/``output`` :class:`BuildEvent` s).

    Raises:
        UserError: none of ``bases`` is present locally (no registry is used).
        BuildError: the build failed (e.g. no Debian package mirror reachable); ``details``
            holds its last output lines.
    """
    base, base_id = _local_base(client, bases)
    found = client.images.list(
        filters={"label": [f"{MANAGED_LABEL}=true", f"{HAPROXY_BASE_LABEL}={base_id}"]}
    )
    for image in found:
        if image.tags:
            return str(image.tags[0])
    return _build(client, base, base_id, dict(labels or {}), on_event or (lambda _e: None))


def _local_base(client: DockerClient, bases: tuple[str, ...]) -> tuple[str, str]:
    for base in bases:
        try:
            return base, str(client.images.get(base).id)
        except ImageNotFound:
            continue
    raise UserError(
        f"No local base image for the balancer: none of {', '.join(bases)} is present.",
        hint="Build the environment's image first (`envkit build`), or make python:3.11-slim "
        "available locally.",
    )


@dataclass
class _Built:
    lines: list[str]
    version: str | None = None
    image_id: str | None = None
    error: str | None = None


def _build(
    client: DockerClient,
    base: str,
    base_id: str,
    labels: dict[str, str],
    emit: Callable[[BuildEvent], None],
) -> str:
    """Build the balancer image on ``base`` and tag it ``envkit-haproxy:<version>``."""
    dockerfile = _DOCKERFILE.format(base=base, config=CONFIG_PATH).encode()
    all_labels = {MANAGED_LABEL: "true", HAPROXY_BASE_LABEL: base_id, **labels}
    state = _Built(lines=[])
    stream = client.api.build(
        fileobj=io.BytesIO(dockerfile),
        labels=all_labels,
        rm=True,
        forcerm=True,
        decode=True,
    )
    for chunk in stream:
        _take(chunk, state, emit)
    if state.error or not state.image_id:
        raise BuildError(
            f"Building the balancer image (HAProxy on {base}) failed: "
            f"{state.error or 'no image was produced'}.",
            details="\n".join(state.lines[-30:]) or None,
            hint="The build runs `apt-get install haproxy`: check that Debian's package "
            "mirror is reachable from containers.",
        )
    version = re.sub(r"[^\w.-]", "-", state.version or "latest")
    tag = f"{HAPROXY_REPO}:{version}"
    client.images.get(state.image_id).tag(HAPROXY_REPO, version)
    return tag


def _take(chunk: dict[str, Any], state: _Built, emit: Callable[[BuildEvent], None]) -> None:
    """Fold one decoded build-stream chunk into ``state`` and report it."""
    if "error" in chunk:
        state.error = str(chunk["error"]).strip()
        return
    aux = chunk.get("aux")
    if isinstance(aux, dict) and aux.get("ID"):
        state.image_id = str(aux["ID"])
    for line in str(chunk.get("stream", "")).splitlines():
        line = line.rstrip()
        if not line:
            continue
        state.lines.append(line)
        m = re.match(r"^Step (\d+)/(\d+) : (.*)$", line)
        if m:
            emit(BuildEvent("step", m.group(3), int(m.group(1)), int(m.group(2))))
            continue
        v = _VERSION.search(line)
        if v:
            state.version = v.group(1)
        emit(BuildEvent("output", line))


def parse_stats(csv_text: str) -> list[dict[str, str]]:
    """The server rows of HAProxy's ``/stats;csv`` for the ``replicas`` backend.

    Returns:
        One dict per configured server slot (``svname``, ``status`` such as ``UP``, ``DOWN``,
        ``MAINT (resolution)``, ``scur`` current sessions, ``addr`` when resolved).
    """
    lines = csv_text.splitlines()
    if not lines:
        return []
    header = lines[0].lstrip("# ").split(",")
    rows = []
    for values in csv.reader(lines[1:]):
        row = dict(zip(header, values, strict=False))
        if row.get("pxname") == "replicas" and row.get("svname") not in ("FRONTEND", "BACKEND"):
            rows.append(row)
    return rows
