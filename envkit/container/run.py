"""``run_container`` and ``stop_containers``: run an environment image the way a Hugging Face
Docker Space runs it, on 127.0.0.1, and stop only what envkit started."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from envkit.container._engine import (
    ENV_LABEL,
    MANAGED_LABEL,
    MANIFEST_SHA_LABEL,
    docker_client,
    listed_containers,
)
from envkit.container.build import build_image
from envkit.container.build_context import default_tag
from envkit.container.build_result import BuildEvent, BuildResult
from envkit.container.hardening import HardenedOptions, container_facts
from envkit.container.relay import ExecRelay
from envkit.envdir import EnvProject
from envkit.envdir.constants import MANIFEST_NAME
from envkit.envdir.launch import root_cause
from envkit.errors import ContainerError, UsageError
from envkit.server import free_port, port_in_use
from envkit.wire import get_health

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container
    from docker.models.images import Image

#: Label holding the environment directory a container was started from.
ROOT_LABEL = "envkit.root"
#: Docker's rule for a container name (also a pool's name, which prefixes its containers').
CONTAINER_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$")
_PORT_BUSY = ("port is already allocated", "address already in use", "bind for")


@dataclass
class RunningContainer:
    """A container envkit started and saw healthy.

    Attributes:
        id: full container id.
        name: container name (``envkit stop NAME`` stops it).
        image: image reference it runs.
        host: address the port is published on (``127.0.0.1`` unless asked otherwise).
        host_port: published TCP port on ``host``.
        container_port: the manifest's port inside the container.
        ready_s: seconds from start until healthy.
        build: the build done first, or ``None`` when an existing image was used.
        docker_run: with ``hardened``, the equivalent ``docker run`` line.
    """

    id: str
    name: str
    image: str
    host: str
    host_port: int
    container_port: int
    ready_s: float = 0.0
    build: BuildResult | None = None
    docker_run: str = ""
    _client: DockerClient | None = field(default=None, repr=False)
    _relay: ExecRelay | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:32768``."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.host_port}"

    @property
    def stop_command(self) -> str:
        """The exact command that stops it: ``envkit stop <name>``."""
        return f"envkit stop {self.name}"

    def _container(self) -> Container:
        return self._client.containers.get(self.id)

    def status(self) -> str:
        """``running``, ``exited``, ... or ``removed``."""
        try:
            return str(self._container().status)
        except NotFound:
            return "removed"

    def exit_code(self) -> int | None:
        """The exit code once the container stopped, else ``None``."""
        try:
            c = self._container()
        except NotFound:
            return None
        state = c.attrs.get("State", {})
        return None if state.get("Running") else int(state.get("ExitCode", 0))

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the container's output ('' when it is gone)."""
        return container_log_tail(self._client, self.id, lines)

    def follow_logs(self) -> Iterator[str]:
        """Lines of the container's output from its start, following until it stops."""
        try:
            stream = self._container().logs(stream=True, follow=True)
        except NotFound:
            return
        pending = ""
        for chunk in stream:
            pending += chunk.decode("utf-8", "replace")
            *lines, pending = pending.split("\n")
            yield from lines
        if pending:
            yield pending

    def stop(self, timeout_s: float = 3.0) -> None:
        """Stop (SIGTERM, then SIGKILL after ``timeout_s`` seconds) and remove. Idempotent."""
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        stop_and_remove(self._client, self.id, timeout_s)

    def close(self) -> None:
        """Close the engine connection (the container keeps running)."""
        if self._client is not None:
            self._client.close()


def container_log_tail(client: DockerClient, cid: str, lines: int) -> str:
    """The last ``lines`` lines of container ``cid``'s output, stdout and stderr ('' when
    the engine does not have it any more)."""
    try:
        data = client.containers.get(cid).logs(tail=lines)
    except DockerException:
        return ""
    return data.decode("utf-8", "replace").rstrip()


def stop_and_remove(client: DockerClient, cid: str, timeout_s: float) -> None:
    """Stop container ``cid`` (SIGTERM, SIGKILL after ``timeout_s`` seconds), remove it and
    wait until the engine has (:func:`wait_gone`). Nothing happens when it is already gone.

    Raises:
        docker.errors.APIError: the engine refused the removal (other than "in progress").
    """
    try:
        c = client.containers.get(cid)
    except NotFound:
        return
    try:
        if c.status == "running":
            c.stop(timeout=max(0, round(timeout_s)))
    except (NotFound, APIError):
        pass
    try:
        c.remove(force=True)
    except NotFound:
        return
    except APIError as exc:  # "removal already in progress": an auto-remove is under way
        if "in progress" not in str(exc):
            raise
    wait_gone(client, cid)


#: Seconds to wait for the engine to finish removing a container (auto-remove runs after the
#: stop returns, so a caller that lists containers right away can still see it otherwise).
REMOVAL_WAIT_S = 15.0


def wait_gone(client: DockerClient, cid: str, wait_s: float = REMOVAL_WAIT_S) -> None:
    """Return once the engine no longer knows container ``cid``, or after ``wait_s`` seconds
    (the engine then finishes on its own; nothing is raised)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            client.containers.get(cid)
        except NotFound:
            return
        except APIError:
            return
        time.sleep(0.1)


@dataclass(frozen=True)
class _RunOptions:
    """``run_container``'s keyword options, exactly as given (see its docstring)."""

    tag: str | None
    host: str
    port: int | None
    env: Mapping[str, str] | None
    web: bool
    build: bool
    name: str | None
    labels: Mapping[str, str] | None
    timeout_s: float | None
    build_options: Mapping[str, Any] | None
    on_event: Callable[[BuildEvent], None] | None
    hardened: bool

    @property
    def probe_host(self) -> str:
        """Where to look for a listener: a wildcard ``host`` is probed on loopback."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host


def run_container(
    path: str | os.PathLike[str] = ".",
    *,
    tag: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    web: bool = False,
    build: bool = False,
    name: str | None = None,
    labels: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    build_options: Mapping[str, Any] | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
    hardened: bool = False,
) -> RunningContainer:
    """Start the environment's image detached and wait until it is healthy.

    Builds first when the image is missing or ``build`` is true. Publishes the manifest's
    port on ``host:port``. Healthy means the container's HEALTHCHECK reports ``healthy`` or
    ``GET /health`` answers 200 through the published port, whichever comes first.

    Args:
        path: environment directory.
        tag: image reference (default: as :func:`envkit.container.build_image`).
        host: address to publish on; loopback by default.
        port: host TCP port; ``None`` picks a free one.
        env: environment variables for the container.
        web: set ``ENABLE_WEB_INTERFACE=true`` (OpenEnv mounts its web UI at ``/web``).
        build: build even when the image exists.
        name: container name (default ``envkit-<env>-<6 hex>``).
        labels: extra labels for the container (and for the image if it is built).
        timeout_s: seconds to wait for health (default: the manifest's
            ``envkit.startup_timeout_s``, 60).
        build_options: extra keyword arguments for ``build_image`` (``no_cache``, ...).
        on_event: build progress and warnings (see :class:`BuildEvent`).
        hardened: run with the container lane's options (see
            :class:`envkit.container.hardening.HardenedOptions`): read-only, uid 65532, no
            capabilities, declared memory/CPU, ``/tmp`` tmpfs. With ``network.mode:
            no-network`` the container gets ``--network none`` and ``host:port`` is served
            by an exec relay living in this process (so it stops with it).

    Returns:
        The :class:`RunningContainer`; stop it with ``.stop()`` or ``envkit stop NAME``.

    Raises:
        UsageError: the port is busy, or the name is invalid or taken (exit 2).
        BuildError, SpecError, UserError: see :func:`build_image`.
        ContainerError: the container exited early, was reported unhealthy or did not become
            healthy in time; ``details`` holds its last 30 log lines (exit 1). The container
            is removed first: nothing is left running on any failure.
        DockerUnavailableError: no engine answers (exit 2).
    """

    opts = _RunOptions(
        tag=tag,
        host=host,
        port=port,
        env=env,
        web=web,
        build=build,
        name=name,
        labels=labels,
        timeout_s=timeout_s,
        build_options=build_options,
        on_event=on_event,
        hardened=hardened,
    )
    project = EnvProject.load(path)
    _check_request(opts)
    if tag is None:
        version = project.envdir.project_table.get("version")
        tag = default_tag(project.manifest.name, version if isinstance(version, str) else None)
    client = docker_client()
    try:
        return _launch(client, project, opts, tag)
    except BaseException:
        # On success the RunningContainer owns the connection; on any failure nobody does.
        client.close()
        raise


def _check_request(opts: _RunOptions) -> None:
    """Refuse a busy ``--port`` or an invalid ``--name`` before touching the engine.

    Raises:
        UsageError: the port answers on ``opts.probe_host``, or the name breaks Docker's rule.
    """

    if opts.port is not None and port_in_use(opts.probe_host, opts.port):
        raise UsageError(
            f"Port {opts.port} on {opts.host} is already in use.",
            hint="Stop what listens there or pass another --port "
            "(or none: envkit picks a free one).",
        )
    if opts.name is not None and not CONTAINER_NAME.match(opts.name):
        raise UsageError(
            f"--name {opts.name!r} is not a valid container name.",
            hint="Use letters, digits, `_`, `.` and `-`, starting with a letter or digit.",
        )


def _launch(
    client: DockerClient, project: EnvProject, opts: _RunOptions, tag: str
) -> RunningContainer:
    """Image, create, start, wait: the container is removed again if any step fails.

    Args:
        client: an open ``docker.DockerClient``; the caller closes it on failure.
        project: the loaded :class:`envkit.envdir.EnvProject`.
        opts: the caller's options. tag: the image reference, already resolved.

    Raises:
        UsageError, ContainerError, BuildError, ...: as :func:`run_container`.
    """

    if opts.name is not None:
        _refuse_taken_name(client, opts.name)
    built = _ensure_image(client, project, opts, tag)
    port = opts.port if opts.port is not None else free_port(opts.probe_host)
    container, running, hardening = _create(client, project, opts, tag, port)
    running.build = built
    try:
        _start(container, running, hardening)
        timeout = opts.timeout_s
        if timeout is None:
            timeout = project.manifest.spec.startup_timeout_s
        try:
            running.ready_s = _wait_healthy(client, running, timeout)
        except ContainerError as exc:
            if running.docker_run:
                exc.hint = f"{exc.hint} Reproduce by hand: `{running.docker_run}`."
            raise
    except BaseException:
        # Nothing is left running on any failure, Ctrl-C included.
        running.stop(0)
        raise
    return running


def ensure_image(
    client: DockerClient,
    project: EnvProject,
    tag: str,
    *,
    build: bool = False,
    labels: Mapping[str, str] | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
) -> BuildResult | None:
    """Build the environment's image ``tag`` when it is missing or ``build`` is true, as
    ``envkit run --docker`` does (a replica pool runs the same image).

    Args:
        client: an open ``docker.DockerClient``. project: the loaded
            :class:`envkit.envdir.EnvProject`. tag: the image reference.
        build: rebuild even when it exists. labels: extra labels for a new image.
        on_event: build progress and warnings.

    Returns:
        The build done, or ``None`` when the existing image is used.

    Raises:
        BuildError, SpecError, UserError: see :func:`build_image`.
    """
    opts = _RunOptions(
        tag=tag,
        host="127.0.0.1",
        port=None,
        env=None,
        web=False,
        build=build,
        name=None,
        labels=labels,
        timeout_s=None,
        build_options=None,
        on_event=on_event,
        hardened=False,
    )
    return _ensure_image(client, project, opts, tag)


def _ensure_image(
    client: DockerClient, project: EnvProject, opts: _RunOptions, tag: str
) -> BuildResult | None:
    """Build ``tag`` when it is missing or ``opts.build``; else warn on a stale manifest.

    Returns:
        The build done, or ``None`` when the existing image is used.
    """
    image: Image | None = None
    if not opts.build:
        try:
            image = client.images.get(tag)
        except ImageNotFound:
            image = None
    if image is None:
        return build_image(
            project.root,
            tag=tag,
            labels=opts.labels,
            on_event=opts.on_event,
            **dict(opts.build_options or {}),
        )
    # The image records the sha256 of the openenv.yaml it was built from (build.py's label).
    sha = hashlib.sha256((project.root / MANIFEST_NAME).read_bytes()).hexdigest()
    have = (image.labels or {}).get(MANIFEST_SHA_LABEL)
    if have and have != sha and opts.on_event is not None:
        opts.on_event(
            BuildEvent(
                "warning",
                f"The image {tag} was built from another "
                "openenv.yaml than the current one; pass --build to rebuild.",
            )
        )
    return None


def _create(
    client: DockerClient, project: EnvProject, opts: _RunOptions, tag: str, port: int
) -> tuple[Container, RunningContainer, HardenedOptions | None]:
    """Create (not start) the labelled container publishing the manifest's port on ``port``.

    Returns:
        ``(container, running, hardening)``: the engine's container object, its
        :class:`RunningContainer` (``ready_s`` still 0), and the lane's options when
        ``opts.hardened`` (else ``None``).
    """
    manifest = project.manifest
    variables = dict(opts.env or {})
    if opts.web:
        variables["ENABLE_WEB_INTERFACE"] = "true"
    cname = opts.name or (
        f"envkit-{manifest.name.replace('_', '-').lower()}-{secrets.token_hex(3)}"
    )
    container_labels = {
        MANAGED_LABEL: "true",
        ENV_LABEL: manifest.name,
        ROOT_LABEL: str(project.root),
        **dict(opts.labels or {}),
    }
    hardening = None
    create: dict[str, Any] = {
        "environment": variables,
        "ports": {f"{manifest.port}/tcp": (opts.host, port)},
    }
    if opts.hardened:
        hardening = HardenedOptions(container_facts(project.root))
        create = hardening.create_kwargs(port, opts.host)
        create["environment"] = {**create["environment"], **variables}
    container = client.containers.create(
        tag, name=cname, detach=True, labels=container_labels, **create
    )
    running = RunningContainer(
        id=container.id,
        name=cname,
        image=tag,
        host=opts.host,
        host_port=port,
        container_port=manifest.port,
        _client=client,
    )
    if hardening is not None:
        running.docker_run = hardening.command(tag, port)
    return container, running, hardening


def _start(
    container: Container, running: RunningContainer, hardening: HardenedOptions | None
) -> None:
    """Start the created container, plus the exec relay for an isolated hardened run.

    Raises:
        UsageError: the engine could not publish the port (it was taken meanwhile).
        ContainerError: the engine refused to start it for another reason.
    """
    try:
        container.start()
        if hardening is not None and hardening.isolated:
            running._relay = ExecRelay(
                container.id, running.container_port, bind_port=running.host_port
            )
            running._relay.start()
    except APIError as exc:
        text = str(exc).lower()
        if any(m in text for m in _PORT_BUSY):
            raise UsageError(
                f"Port {running.host_port} on {running.host} is already in use (the engine "
                "could not publish it).",
                hint="Pass another --port, or none to get a free one.",
            ) from None
        raise ContainerError(
            f"The container {running.name} did not start: "
            f"{getattr(exc, 'explanation', None) or exc}.",
            hint="Check the image's CMD and the engine log.",
        ) from None


def _refuse_taken_name(client: DockerClient, name: str) -> None:
    try:
        other = client.containers.get(name)
    except NotFound:
        return
    if (other.labels or {}).get(MANAGED_LABEL) == "true":
        raise UsageError(
            f"A container named {name} already exists ({other.status}).",
            hint=f"Stop it with `envkit stop {name}` or choose another --name.",
        )
    raise UsageError(
        f"A container named {name} already exists and envkit did not start it.",
        hint="Choose another --name.",
    )


#: Modules of the OpenEnv layout itself: missing in the image means a layout or copy problem,
#: not an undeclared dependency.
_LAYOUT_MODULES = frozenset({"server", "models", "client"})
_NO_MODULE = re.compile(r"No module named '(?P<name>[^'.]+)")


def missing_module_hint(log: str) -> str | None:
    """The next step when a container exited on ``ModuleNotFoundError``, from its log tail.

    A ``ModuleNotFoundError`` for a third-party module means the image lacks a dependency
    the local venv has (installed by hand, or added to ``pyproject.toml`` without
    ``uv lock``: the image installs the lock). Running without ``--docker`` would then use
    that venv and hide the error, so the hint names the fix instead.

    Args:
        log: the container's last lines (stdout and stderr).

    Returns:
        One line for :attr:`envkit.errors.EnvkitError.hint`, or ``None`` when the log's root
        cause (:func:`envkit.envdir.launch.root_cause`) is not a missing module.
    """

    cause = root_cause(log)
    if cause is None or cause.exc_type not in ("ModuleNotFoundError", "ImportError"):
        return None
    m = _NO_MODULE.search(cause.line)
    if m is None:
        return None
    name = m.group("name")
    if name in _LAYOUT_MODULES:
        return (
            f"`{name}` is the environment's own module: check that the Dockerfile copies it "
            "and that the CMD runs from the folder holding it (`envkit validate` checks "
            "the Dockerfile), then run again with --build."
        )
    return (
        f"The image lacks `{name}`: declare its distribution in pyproject.toml "
        "`[project] dependencies`, run `uv lock`, then run again with --build. "
        "`envkit run` without --docker uses your local venv, where it may be installed by hand, "
        "so it would not show the error; `envkit validate --static` lists such imports (EK223) "
        "and a stale uv.lock (EK222)."
    )


def _wait_healthy(client: DockerClient, running: RunningContainer, timeout_s: float) -> float:
    """Seconds until healthy; raises ContainerError (after which the caller removes it)."""
    start = time.monotonic()
    deadline = start + timeout_s
    with httpx.Client(timeout=2.0) as http:
        while True:
            try:
                c = client.containers.get(running.id)
            except NotFound:
                raise ContainerError(
                    f"The container {running.name} disappeared while "
                    "starting (removed by someone else?).",
                    hint="Run it again.",
                ) from None
            state = c.attrs.get("State", {})
            if state.get("Status") in ("exited", "dead"):
                code = state.get("ExitCode")
                tail = container_log_tail(client, running.id, 30)
                raise ContainerError(
                    f"The container {running.name} exited with code {code} before it was healthy.",
                    details=tail or None,
                    hint=missing_module_hint(tail)
                    or "Fix the error in its log above (`envkit run` without --docker shows "
                    "it faster), then run again with --build.",
                )
            health = (state.get("Health") or {}).get("Status")
            if health == "healthy":
                return time.monotonic() - start
            if health == "unhealthy":
                raise ContainerError(
                    f"The container {running.name} is unhealthy: its HEALTHCHECK failed.",
                    details=container_log_tail(client, running.id, 30) or None,
                    hint="Check that the server binds 0.0.0.0 on the manifest's port.",
                )
            if get_health(running.url, client=http).healthy:  # the one definition
                return time.monotonic() - start
            if time.monotonic() >= deadline:
                raise ContainerError(
                    f"The container {running.name} did not answer GET /health within "
                    f"{timeout_s:g} s.",
                    details=container_log_tail(client, running.id, 30) or None,
                    hint="Raise --startup-timeout (or `startup_timeout_s`), or look for "
                    "slow work at import time.",
                )
            time.sleep(0.2)


@dataclass(frozen=True)
class StoppedContainer:
    """A container ``stop_containers`` stopped and removed.

    Attributes:
        name: its name. id: its id. image: its image. status: its status before stopping.
    """

    name: str
    id: str
    image: str
    status: str


def stop_containers(
    names: list[str] | None = None,
    *,
    timeout_s: float = 3.0,
    labels: Mapping[str, str] | None = None,
) -> list[StoppedContainer]:
    """Stop and remove containers envkit started (label ``envkit.managed=true``).

    Args:
        names: names or ids; ``None`` or empty means every envkit container.
        timeout_s: seconds between SIGTERM and SIGKILL.
        labels: only containers that also carry these labels (when ``names`` is empty).

    Returns:
        What was stopped (empty when nothing matched).

    Raises:
        UsageError: a name matches no container, or a container envkit did not start
            (envkit never stops those); nothing is stopped then.
        DockerUnavailableError: no engine answers.
    """
    client = docker_client()
    try:
        targets = []
        if names:
            for n in names:
                try:
                    c = client.containers.get(n)
                except NotFound:
                    raise UsageError(
                        f"No container named {n}.",
                        hint="`envkit stop` with no name stops every container envkit "
                        f"started; `docker ps --filter label={MANAGED_LABEL}=true` lists "
                        "them.",
                    ) from None
                if (c.labels or {}).get(MANAGED_LABEL) != "true":
                    raise UsageError(
                        f"{n} is not a container envkit started; envkit stop never touches "
                        "other containers.",
                        hint=f"Use `docker stop {n}` if you mean it.",
                    )
                targets.append(c)
        else:
            filters = [f"{MANAGED_LABEL}=true"] + [f"{k}={v}" for k, v in (labels or {}).items()]
            targets = listed_containers(client, {"label": filters})
        out = []
        for c in targets:
            image = (c.attrs.get("Config") or {}).get("Image", "")
            out.append(StoppedContainer(name=c.name, id=c.id, image=image, status=c.status))
            stop_and_remove(client, c.id, timeout_s)
        return out
    finally:
        client.close()
