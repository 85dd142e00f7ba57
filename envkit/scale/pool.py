"""A local pool of environment replicas behind one URL (``envkit run --docker --replicas N``).

Shape (measured on Docker 20.10; see docs/scale.md): N containers of the environment's image
on a user-defined bridge network, all with one network alias, and one HAProxy container on
that network published on 127.0.0.1 only. Docker's embedded DNS resolves the alias to every
replica; HAProxy balances WebSocket sessions by least connections and health-checks each
replica (:mod:`envkit.container.haproxy`). Swarm is not used: its routing mesh needs IPVS,
cannot publish on loopback only, and ``docker swarm init`` changes the whole engine.

Everything a pool creates carries ``envkit.managed=true``, ``envkit.pool=NAME`` and
``envkit.role=replica|lb``; :func:`stop_pool` removes only what carries them.

A killed replica: Docker's restart policies do not restart a container after ``docker kill``
(docker-kill(1): "the restart policy is disabled until the next time the container is
started"; measured for ``always``, ``unless-stopped`` and ``on-failure`` on Docker 20.10), so
a watcher (:func:`watch_pool`) starts pool containers that exited. It runs in the
foreground ``envkit run`` process, or, with ``--detach``, in a small background process that
ends by itself once the pool's balancer is gone. ``unless-stopped`` still restarts replicas
that crash on their own and brings the pool back after an engine restart.
"""

from __future__ import annotations

import io
import os
import secrets
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from docker.errors import APIError, DockerException, NotFound

from envkit.container._engine import ENV_LABEL, MANAGED_LABEL, docker_client, listed_containers
from envkit.container.build_context import default_tag
from envkit.container.build_result import BuildEvent
from envkit.container.haproxy import (
    CONFIG_PATH,
    DEFAULT_BASES,
    DEFAULT_TUNNEL_S,
    FRONTEND_PORT,
    STATS_PORT,
    ensure_haproxy_image,
    parse_stats,
    render_config,
    slots_for,
)
from envkit.container.run import (
    CONTAINER_NAME,
    ROOT_LABEL,
    container_log_tail,
    ensure_image,
    missing_module_hint,
    stop_and_remove,
    wait_gone,
)
from envkit.envdir import EnvDir, EnvProject
from envkit.envdir.dockerfile import parse
from envkit.errors import ContainerError, UsageError
from envkit.scale.capacity import CapacityPlan, plan_capacity
from envkit.server import free_port, port_in_use
from envkit.wire import get_health

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container
    from docker.models.networks import Network

#: Label carrying the pool's name on its replicas, balancer and network.
POOL_LABEL = "envkit.pool"
#: Label carrying a pool container's role: ``replica`` or ``lb``.
ROLE_LABEL = "envkit.role"
#: Docker restart policy of pool containers (crashes and engine restarts; see the module
#: docstring for ``docker kill``).
RESTART_POLICY = {"Name": "unless-stopped"}
#: Seconds between two looks of the watcher.
WATCH_INTERVAL_S = 1.0


@dataclass(frozen=True)
class PoolRequest:
    """What ``envkit run --docker --replicas N`` asks for.

    Attributes:
        path: environment directory. replicas: N (>= 1).
        port: host port of the balancer on 127.0.0.1 (``None``: a free one).
        name: pool name (default ``envkit-<env>-pool-<6 hex>``).
        env: the replicas' environment variables (``MAX_CONCURRENT_ENVS`` sizes the pool).
        build: rebuild the environment's image first. tag: its reference (default
            ``NAME:VERSION`` as ``envkit run --docker``).
        labels: extra labels for every container and the network.
        timeout_s: seconds to wait for every replica to be up behind the balancer
            (``None``: the manifest's startup timeout plus 30 s).
    """

    path: Path
    replicas: int
    port: int | None = None
    name: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    build: bool = False
    tag: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float | None = None


@dataclass
class RunningPool:
    """A pool that answered through its balancer with every replica up.

    Attributes:
        name: the pool's name (``envkit stop NAME`` removes it). url: the one URL.
        plan: its :class:`envkit.scale.capacity.CapacityPlan` (N, C, N x C).
        replicas: replica container names. balancer: the HAProxy container's name.
        network: the bridge network's name. image: the environment's image.
        stats_url: HAProxy's statistics page on 127.0.0.1 (CSV at ``;csv``).
        ready_s: seconds from the first container start until healthy.
        tunnel_s: HAProxy's WebSocket idle timeout, seconds.
    """

    name: str
    url: str
    plan: CapacityPlan
    replicas: list[str]
    balancer: str
    network: str
    image: str
    stats_url: str
    ready_s: float = 0.0
    tunnel_s: float = DEFAULT_TUNNEL_S
    _client: DockerClient | None = field(default=None, repr=False)

    @property
    def stop_command(self) -> str:
        return f"envkit stop {self.name}"

    def servers(self) -> list[dict[str, str]]:
        """HAProxy's rows for the replica slots (``status``, ``scur``, ``addr``); ``[]`` when
        the balancer does not answer."""
        return read_servers(self.stats_url)

    def stop(self, timeout_s: float = 3.0) -> list[str]:
        """Remove the balancer, the replicas and the network (idempotent)."""
        return stop_pool(self.name, timeout_s=timeout_s)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def read_servers(stats_url: str) -> list[dict[str, str]]:
    """The replica rows of the balancer's ``/stats;csv`` (``[]`` on any HTTP failure)."""
    try:
        r = httpx.get(stats_url + ";csv", timeout=2.0)
    except httpx.HTTPError:
        return []
    return parse_stats(r.text) if r.status_code == 200 else []


def up_servers(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows HAProxy routes to (status ``UP``)."""
    return [r for r in rows if r.get("status", "").startswith("UP")]


def run_pool(
    req: PoolRequest,
    on_event: Callable[[BuildEvent], None] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> RunningPool:
    """Build what is missing, start N replicas and the balancer, and wait until every
    replica answers through it.

    Args:
        req: the :class:`PoolRequest`.
        on_event: build progress of the environment's and the balancer's images.
        on_progress: one line per stage (``Starting 3 replicas…``).

    Returns:
        The :class:`RunningPool`; it owns an engine connection (``close()``).

    Raises:
        UsageError: the environment does not support concurrent sessions, the port is busy,
            the name is invalid or already used by a pool or container (exit 2).
        BuildError, SpecError: building an image failed (exit 1 / 2).
        ContainerError: a replica exited or the pool was not healthy in time; everything
            started is removed first (exit 1).
        DockerUnavailableError: no engine answers (exit 2).
    """

    say = on_progress or (lambda _m: None)
    project = EnvProject.load(req.path)
    envdir = project.envdir
    plan = plan_capacity(envdir, replicas=req.replicas, env_vars=dict(req.env))
    manifest = project.manifest
    name = (
        req.name or f"envkit-{manifest.name.replace('_', '-').lower()}-pool-{secrets.token_hex(3)}"
    )
    _check_request(req, name)
    tag = req.tag
    if tag is None:
        version = envdir.project_table.get("version")
        tag = default_tag(manifest.name, version if isinstance(version, str) else None)
    client = docker_client()
    try:
        _refuse_taken(client, name, req.replicas)
        say(f"Environment image {tag}…")
        ensure_image(client, project, tag, build=req.build, labels=req.labels, on_event=on_event)
        bases = DEFAULT_BASES + tuple(b for b in _env_bases(envdir) if b not in DEFAULT_BASES)
        say("Balancer image (HAProxy from Debian's package)…")
        lb_image = ensure_haproxy_image(client, bases, on_event=on_event)
        pool = _launch(client, req, name, tag, lb_image, project, plan, say)
    except BaseException:
        client.close()
        raise
    return pool


def _check_request(req: PoolRequest, name: str) -> None:

    if req.replicas < 1:
        raise UsageError(f"--replicas must be at least 1, not {req.replicas}.")
    if not CONTAINER_NAME.match(name) or len(name) > 100:
        raise UsageError(
            f"--name {name!r} is not a valid pool name.",
            hint="Use letters, digits, `_`, `.` and `-`, starting with a letter or digit.",
        )
    if req.port is not None and port_in_use("127.0.0.1", req.port):
        raise UsageError(
            f"Port {req.port} on 127.0.0.1 is already in use.",
            hint="Stop what listens there or pass another --port (or none: a free one).",
        )


def _env_bases(envdir: EnvDir) -> list[str]:
    """The final ``FROM`` of the environment's Dockerfile (a second choice of base for the
    balancer: it is present locally once the environment's image is built)."""

    try:
        text = envdir.dockerfile_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    stages = parse(text).stages
    return [stages[-1].resolved] if stages else []


def _refuse_taken(client: DockerClient, name: str, replicas: int) -> None:
    """Refuse a pool name that labels anything, or whose container/network names are taken."""
    selector = {"label": [f"{POOL_LABEL}={name}"]}
    if listed_containers(client, selector) or client.networks.list(filters=selector):
        raise UsageError(
            f"A pool named {name} already exists.",
            hint=f"Stop it with `envkit stop {name}` or choose another --name.",
        )
    for cname in [balancer_name(name)] + [replica_name(name, i) for i in range(replicas)]:
        try:
            client.containers.get(cname)
        except NotFound:
            continue
        raise UsageError(
            f"A container named {cname} already exists.", hint="Choose another --name."
        )


def balancer_name(pool: str) -> str:
    return f"{pool}-lb"


def replica_name(pool: str, index: int) -> str:
    """``POOL-r1`` ... (``index`` is 0-based)."""
    return f"{pool}-r{index + 1}"


def _labels(req: PoolRequest, name: str, role: str, env_name: str, root: Path) -> dict[str, str]:
    return {
        **dict(req.labels),
        MANAGED_LABEL: "true",
        POOL_LABEL: name,
        ROLE_LABEL: role,
        ENV_LABEL: env_name,
        ROOT_LABEL: str(root),
    }


def _launch(
    client: DockerClient,
    req: PoolRequest,
    name: str,
    tag: str,
    lb_image: str,
    project: EnvProject,
    plan: CapacityPlan,
    say: Callable[[str], None],
) -> RunningPool:
    """Network, replicas, balancer, wait; the whole pool is removed on any failure."""

    manifest = project.manifest
    network = f"{name}-net"
    alias = f"{name}-replicas"
    root = project.root
    episode = EnvDir(root).spec.episode_timeout_s
    tunnel = float(episode) if episode else DEFAULT_TUNNEL_S
    try:
        client.networks.create(
            network, driver="bridge", labels=_labels(req, name, "network", manifest.name, root)
        )
        say(f"Starting {req.replicas} replica(s) on network {network}…")
        started = time.monotonic()
        replicas = []
        for i in range(req.replicas):
            rname = replica_name(name, i)
            labels = _labels(req, name, "replica", manifest.name, root)
            _start_replica(client, rname, tag, network, alias, dict(req.env), labels)
            replicas.append(rname)
        port = req.port if req.port is not None else free_port("127.0.0.1")
        config = render_config(
            alias=alias, port=manifest.port, slots=slots_for(req.replicas), tunnel_s=tunnel
        )
        say(f"Starting the balancer on 127.0.0.1:{port}…")
        stats_port = _start_balancer(
            client, lb_image, network, port, config, _labels(req, name, "lb", manifest.name, root)
        )
        pool = RunningPool(
            name=name,
            url=f"http://127.0.0.1:{port}",
            plan=plan,
            replicas=replicas,
            balancer=balancer_name(name),
            network=network,
            image=tag,
            stats_url=f"http://127.0.0.1:{stats_port}/stats",
            tunnel_s=tunnel,
            _client=client,
        )
        timeout = req.timeout_s
        if timeout is None:
            timeout = manifest.spec.startup_timeout_s + 30.0
        say(f"Waiting until {req.replicas} replica(s) answer through the balancer…")
        _wait_pool_healthy(client, pool, timeout)
        pool.ready_s = time.monotonic() - started
    except BaseException:
        stop_pool(name, timeout_s=0, client=client)
        raise
    return pool


def _start_replica(
    client: DockerClient,
    rname: str,
    tag: str,
    network: str,
    alias: str,
    env: dict[str, str],
    labels: dict[str, str],
) -> None:
    """Create and start one replica: on ``network`` under ``alias``, no published port."""
    endpoint = client.api.create_endpoint_config(aliases=[alias])
    container = client.containers.create(
        tag,
        name=rname,
        detach=True,
        environment=env,
        labels=labels,
        network=network,
        networking_config={network: endpoint},
        restart_policy=RESTART_POLICY,
    )
    container.start()


def _start_balancer(
    client: DockerClient, image: str, network: str, port: int, config: str, labels: dict[str, str]
) -> int:
    """Create the HAProxy container, copy its configuration in, start it; return the host
    port of its statistics page.

    Raises:
        UsageError: the engine could not publish ``port`` (taken meanwhile).
    """
    container = client.containers.create(
        image,
        name=balancer_name(labels[POOL_LABEL]),
        detach=True,
        labels=labels,
        network=network,
        restart_policy=RESTART_POLICY,
        # 127.0.0.1 only: the pool is as private as `envkit run --docker`.
        ports={
            f"{FRONTEND_PORT}/tcp": ("127.0.0.1", port),
            f"{STATS_PORT}/tcp": ("127.0.0.1", None),
        },
    )
    data = config.encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(os.path.basename(CONFIG_PATH))
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    container.put_archive(os.path.dirname(CONFIG_PATH), buf.getvalue())
    try:
        container.start()
    except APIError as exc:
        if "allocated" in str(exc) or "in use" in str(exc):
            raise UsageError(
                f"Port {port} on 127.0.0.1 is already in use (the engine could not publish it).",
                hint="Pass another --port, or none to get a free one.",
            ) from None
        raise
    container.reload()
    binding = container.attrs["NetworkSettings"]["Ports"][f"{STATS_PORT}/tcp"][0]
    return int(binding["HostPort"])


def _wait_pool_healthy(client: DockerClient, pool: RunningPool, timeout_s: float) -> None:
    """Return once HAProxy reports every replica UP and ``GET /health`` answers through it.

    Raises:
        ContainerError: a replica or the balancer exited (its log tail in ``details``), or
            not every replica was up within ``timeout_s`` seconds.
    """

    deadline = time.monotonic() + timeout_s
    want = len(pool.replicas)
    up: list[dict[str, str]] = []
    while time.monotonic() < deadline:
        for cname in [pool.balancer, *pool.replicas]:
            _raise_if_exited(client, cname)
        up = up_servers(pool.servers())
        if len(up) >= want and get_health(pool.url).healthy:
            return
        time.sleep(0.3)
    raise ContainerError(
        f"The pool {pool.name} was not healthy within {timeout_s:g} s: "
        f"{len(up)} of {want} replica(s) up behind the balancer.",
        details=container_log_tail(client, pool.replicas[0], 30) or None,
        hint="Check the first replica's log above (`envkit run --docker` runs one alone), "
        "or raise --startup-timeout.",
    )


def _raise_if_exited(client: DockerClient, cname: str) -> None:
    c = client.containers.get(cname)
    state = c.attrs.get("State", {})
    if state.get("Status") in ("exited", "dead") or state.get("Restarting"):
        tail = container_log_tail(client, cname, 30)
        raise ContainerError(
            f"The container {cname} exited with code {state.get('ExitCode')} before the pool "
            "was healthy.",
            details=tail or None,
            hint=missing_module_hint(tail) or "Fix the error in its log above, then run again.",
        )


def pool_exists(name: str, client: DockerClient | None = None) -> bool:
    """Whether any container or network carries ``envkit.pool=name`` (and envkit's label)."""
    own = client is None
    client = client or docker_client()
    try:
        selector = {"label": [f"{MANAGED_LABEL}=true", f"{POOL_LABEL}={name}"]}
        return bool(listed_containers(client, selector) or client.networks.list(filters=selector))
    finally:
        if own:
            client.close()


def stop_pool(
    name: str, *, timeout_s: float = 3.0, client: DockerClient | None = None
) -> list[str]:
    """Remove a pool's balancer, replicas and network (only what carries its labels).

    The balancer goes first: the watcher ends once it is gone, so it restarts nothing
    while the replicas are removed.

    Args:
        name: the pool's name. timeout_s: seconds between SIGTERM and SIGKILL.
        client: an open ``docker.DockerClient`` (default: a new one, closed after).

    Returns:
        The names removed: containers, then the network.
    """
    own = client is None
    client = client or docker_client()
    try:
        selector = {"label": [f"{MANAGED_LABEL}=true", f"{POOL_LABEL}={name}"]}
        containers = listed_containers(client, selector)
        removed = [c.name for c in containers]
        lb = [c for c in containers if (c.labels or {}).get(ROLE_LABEL) == "lb"]
        for c in lb:
            # At once (HAProxy holds no state): the watcher ends when it sees it gone.
            _force_remove(client, c)
        rest = [c for c in containers if c not in lb]
        if rest:
            # In parallel: each replica may take its grace period to stop.
            with ThreadPoolExecutor(max_workers=min(8, len(rest))) as pool:
                list(pool.map(lambda c: stop_and_remove(client, c.id, timeout_s), rest))
        for net in client.networks.list(filters=selector):
            _remove_network(net)
            removed.append(net.name)
        return removed
    finally:
        if own:
            client.close()


def _force_remove(client: DockerClient, container: Container) -> None:
    try:
        container.remove(force=True)
    except NotFound:
        return
    except APIError as exc:  # "removal already in progress"
        if "in progress" not in str(exc):
            raise
    wait_gone(client, container.id)


def remove_orphan_networks(client: DockerClient | None = None) -> list[str]:
    """Remove pool networks (envkit's labels) no container is attached to any more: what
    ``envkit stop`` without names leaves after removing every envkit container."""
    own = client is None
    client = client or docker_client()
    try:
        removed = []
        nets = client.networks.list(filters={"label": [f"{MANAGED_LABEL}=true", POOL_LABEL]})
        for net in nets:
            net.reload()
            if not net.attrs.get("Containers"):
                _remove_network(net)
                removed.append(net.name)
        return removed
    finally:
        if own:
            client.close()


def _remove_network(net: Network) -> None:
    try:
        net.remove()
    except NotFound:
        pass


@dataclass
class WatchEvent:
    """Something the watcher saw or did.

    Attributes:
        kind: ``restarted`` (it started an exited container), ``failed`` (the start was
            refused), ``gone`` (the balancer disappeared: the watcher ends).
        container: the container's name ('' for ``gone``). text: details.
    """

    kind: str
    container: str = ""
    text: str = ""


def watch_once(client: DockerClient, name: str) -> tuple[bool, list[WatchEvent]]:
    """One look at pool ``name``: start its containers that exited or were killed.

    Returns:
        ``(alive, events)``: ``alive`` is false once the balancer is gone (the pool was
        stopped): nothing is started then.
    """
    selector = {"label": [f"{MANAGED_LABEL}=true", f"{POOL_LABEL}={name}"]}
    containers = listed_containers(client, selector)
    if not any((c.labels or {}).get(ROLE_LABEL) == "lb" for c in containers):
        return False, [WatchEvent("gone")]
    events = []
    for c in containers:
        # "restarting" is Docker's own policy at work; "exited" after `docker kill`/`stop`.
        if c.status not in ("exited", "created"):
            continue
        try:
            c.start()
            events.append(WatchEvent("restarted", c.name, f"was {c.status}"))
        except NotFound:
            continue
        except APIError as exc:
            if "removal" in str(exc):  # `envkit stop` is removing the pool
                continue
            events.append(WatchEvent("failed", c.name, str(exc)[:200]))
    return True, events


def watch_pool(
    name: str,
    *,
    on_event: Callable[[WatchEvent], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    interval_s: float = WATCH_INTERVAL_S,
) -> None:
    """Keep pool ``name``'s containers running until its balancer is gone or ``should_stop``.

    Raises:
        DockerUnavailableError: no engine answers when it starts.
    """
    client = docker_client()
    emit = on_event or (lambda _e: None)
    try:
        while not (should_stop and should_stop()):
            try:
                alive, events = watch_once(client, name)
            except DockerException as exc:  # the engine restarts: try again
                events, alive = [WatchEvent("failed", "", str(exc)[:200])], True
            for event in events:
                emit(event)
            if not alive:
                return
            time.sleep(interval_s)
    finally:
        client.close()


def watcher_log(name: str) -> Path:
    """Where a detached pool's watcher writes what it did."""
    return Path(tempfile.gettempdir()) / f"envkit-pool-{name}.log"


def start_watcher(name: str) -> int:
    """Start the background watcher of a detached pool; return its process id.

    It runs ``python -m envkit.scale._pool_watch NAME`` in its own session (so Ctrl-C in
    the shell does not reach it), logs to :func:`watcher_log`, and ends by itself within
    :data:`WATCH_INTERVAL_S` once ``envkit stop NAME`` removed the balancer.
    """
    log = watcher_log(name).open("ab")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "envkit.scale._pool_watch", name],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    return proc.pid
