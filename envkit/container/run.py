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
from typing import Any

from envkit.container._engine import ENV_LABEL, MANAGED_LABEL, MANIFEST_SHA_LABEL, docker_client
from envkit.container.build import BuildEvent, BuildResult, _pyproject, build_image, default_tag
from envkit.envdir.constants import MANIFEST_NAME
from envkit.errors import ContainerError, UsageError

#: Label holding the environment directory a container was started from.
ROOT_LABEL = "envkit.root"
_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$")
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
    _client: Any = field(default=None, repr=False)
    _relay: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:32768``."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.host_port}"

    @property
    def stop_command(self) -> str:
        """The exact command that stops it: ``envkit stop <name>``."""
        return f"envkit stop {self.name}"

    def _container(self) -> Any:
        return self._client.containers.get(self.id)

    def status(self) -> str:
        """``running``, ``exited``, ... or ``removed``."""
        from docker.errors import NotFound

        try:
            return str(self._container().status)
        except NotFound:
            return "removed"

    def exit_code(self) -> int | None:
        """The exit code once the container stopped, else ``None``."""
        from docker.errors import NotFound

        try:
            c = self._container()
        except NotFound:
            return None
        state = c.attrs.get("State", {})
        return None if state.get("Running") else int(state.get("ExitCode", 0))

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the container's output ('' when it is gone)."""
        return _log_tail(self._client, self.id, lines)

    def follow_logs(self) -> Iterator[str]:
        """Lines of the container's output from its start, following until it stops."""
        from docker.errors import NotFound

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
        _stop_and_remove(self._client, self.id, timeout_s)

    def close(self) -> None:
        """Close the engine connection (the container keeps running)."""
        if self._client is not None:
            self._client.close()


def _log_tail(client: Any, cid: str, lines: int) -> str:
    from docker.errors import DockerException

    try:
        data = client.containers.get(cid).logs(tail=lines)
    except DockerException:
        return ""
    return data.decode("utf-8", "replace").rstrip()


def _stop_and_remove(client: Any, cid: str, timeout_s: float) -> None:
    from docker.errors import APIError, NotFound

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
        pass
    except APIError as exc:  # "removal already in progress" is fine
        if "in progress" not in str(exc):
            raise


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
    from docker.errors import APIError, ImageNotFound

    from envkit.project import EnvProject
    from envkit.server import free_port, port_in_use

    emit = on_event or (lambda _e: None)
    project = EnvProject.load(path)
    manifest = project.manifest
    probe_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if port is not None and port_in_use(probe_host, port):
        raise UsageError(
            f"Port {port} on {host} is already in use.",
            hint="Stop what listens there or pass another --port "
            "(or none: envkit picks a free one).",
        )
    if name is not None and not _NAME.match(name):
        raise UsageError(
            f"--name {name!r} is not a valid container name.",
            hint="Use letters, digits, `_`, `.` and `-`, starting with a letter or digit.",
        )
    if tag is None:
        version = _pyproject(project.root).get("version")
        tag = default_tag(manifest.name, version if isinstance(version, str) else None)
    client = docker_client()
    ok = False
    try:
        if name is not None:
            _refuse_taken_name(client, name)
        built: BuildResult | None = None
        image = None
        if not build:
            try:
                image = client.images.get(tag)
            except ImageNotFound:
                image = None
        if image is None:
            built = build_image(
                project.root, tag=tag, labels=labels, on_event=on_event, **dict(build_options or {})
            )
        else:
            sha = hashlib.sha256((project.root / MANIFEST_NAME).read_bytes()).hexdigest()
            have = (image.labels or {}).get(MANIFEST_SHA_LABEL)
            if have and have != sha:
                emit(
                    BuildEvent(
                        "warning",
                        f"The image {tag} was built from another "
                        "openenv.yaml than the current one; pass --build to rebuild.",
                    )
                )
        if port is None:
            port = free_port(probe_host)
        variables = dict(env or {})
        if web:
            variables["ENABLE_WEB_INTERFACE"] = "true"
        cname = name or f"envkit-{manifest.name.replace('_', '-').lower()}-{secrets.token_hex(3)}"
        container_labels = {
            MANAGED_LABEL: "true",
            ENV_LABEL: manifest.name,
            ROOT_LABEL: str(project.root),
            **dict(labels or {}),
        }
        options = None
        create: dict[str, Any] = {
            "environment": variables,
            "ports": {f"{manifest.port}/tcp": (host, port)},
        }
        if hardened:
            from envkit.container.hardening import HardenedOptions, container_facts

            options = HardenedOptions(container_facts(project.root))
            create = options.create_kwargs(port, host)
            create["environment"] = {**create["environment"], **variables}
        container = client.containers.create(
            tag, name=cname, detach=True, labels=container_labels, **create
        )
        running = RunningContainer(
            id=container.id,
            name=cname,
            image=tag,
            host=host,
            host_port=port,
            container_port=manifest.port,
            build=built,
            _client=client,
        )
        if options is not None:
            running.docker_run = options.command(tag, port)
        try:
            try:
                container.start()
                if options is not None and options.isolated:
                    from envkit.container.relay import ExecRelay

                    running._relay = ExecRelay(container.id, manifest.port, bind_port=port)
                    running._relay.start()
            except APIError as exc:
                text = str(exc).lower()
                if any(m in text for m in _PORT_BUSY):
                    raise UsageError(
                        f"Port {port} on {host} is already in use (the engine could not "
                        "publish it).",
                        hint="Pass another --port, or none to get a free one.",
                    ) from None
                raise ContainerError(
                    f"The container {cname} did not start: "
                    f"{getattr(exc, 'explanation', None) or exc}.",
                    hint="Check the image's CMD and the engine log.",
                ) from None
            timeout = timeout_s if timeout_s is not None else manifest.spec.startup_timeout_s
            try:
                running.ready_s = _wait_healthy(client, running, timeout)
            except ContainerError as exc:
                if running.docker_run:
                    exc.hint = f"{exc.hint} Reproduce by hand: `{running.docker_run}`."
                raise
            ok = True
            return running
        finally:
            if not ok:
                running.stop(0)
    finally:
        if not ok:
            client.close()


def _refuse_taken_name(client: Any, name: str) -> None:
    from docker.errors import NotFound

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


def _wait_healthy(client: Any, running: RunningContainer, timeout_s: float) -> float:
    """Seconds until healthy; raises ContainerError (after which the caller removes it)."""
    import httpx
    from docker.errors import NotFound

    from envkit.wire import get_health

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
                raise ContainerError(
                    f"The container {running.name} exited with code {code} before it was healthy.",
                    details=_log_tail(client, running.id, 30) or None,
                    hint="Fix the error in its log above (`envkit run` without --docker "
                    "shows it faster), then run again with --build.",
                )
            health = (state.get("Health") or {}).get("Status")
            if health == "healthy":
                return time.monotonic() - start
            if health == "unhealthy":
                raise ContainerError(
                    f"The container {running.name} is unhealthy: its HEALTHCHECK failed.",
                    details=_log_tail(client, running.id, 30) or None,
                    hint="Check that the server binds 0.0.0.0 on the manifest's port.",
                )
            if get_health(running.url, client=http).healthy:  # the one definition
                return time.monotonic() - start
            if time.monotonic() >= deadline:
                raise ContainerError(
                    f"The container {running.name} did not answer GET /health within "
                    f"{timeout_s:g} s.",
                    details=_log_tail(client, running.id, 30) or None,
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
    from docker.errors import NotFound

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
            targets = client.containers.list(all=True, filters={"label": filters})
        out = []
        for c in targets:
            image = (c.attrs.get("Config") or {}).get("Image", "")
            out.append(StoppedContainer(name=c.name, id=c.id, image=image, status=c.status))
            _stop_and_remove(client, c.id, timeout_s)
        return out
    finally:
        client.close()
