"""Connecting to the Docker engine, and the labels envkit puts on what it creates.

docker's Python SDK is imported at the top of the modules of :mod:`envkit.container` that talk to
the engine; the CLI imports them inside the commands that use Docker, so ``envkit --help``
does not import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import docker
from docker.errors import DockerException
from docker.models.containers import Container

from envkit.errors import DockerUnavailableError

#: Label on every container ``envkit run --docker`` starts; ``envkit stop`` selects on it and
#: never touches a container without it.
MANAGED_LABEL = "envkit.managed"
#: Label carrying the environment's name on images and containers.
ENV_LABEL = "envkit.env"
#: Label carrying the SHA-256 of the ``openenv.yaml`` an image was built from.
MANIFEST_SHA_LABEL = "envkit.manifest-sha256"


def docker_host() -> str:
    """The engine address docker's SDK will use: ``$DOCKER_HOST`` or the default socket."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def docker_client(timeout_s: float = 60.0) -> docker.DockerClient:
    """A connected ``docker.DockerClient`` (API version negotiated, never pinned).

    Args:
        timeout_s: seconds for each HTTP call to the engine (not for a whole build).

    Raises:
        DockerUnavailableError: no engine answers at ``$DOCKER_HOST`` / the default socket
            (``docker.from_env()`` raises at once when nothing listens).
    """
    host = docker_host()
    try:
        client = docker.from_env(timeout=int(timeout_s))
        client.ping()
    except (DockerException, OSError) as exc:
        raise DockerUnavailableError(
            f"Docker engine not reachable at {host}: {_short_cause(exc)}.",
            hint="Start it (e.g. `sudo systemctl start docker` or `dockerd`) or set DOCKER_HOST.",
        ) from None
    return client


def listed_containers(
    client: docker.DockerClient, filters: Mapping[str, object]
) -> list[Container]:
    """Every container (running or not) matching ``filters`` (the engine's ``/containers/json``
    filters, e.g. ``{"label": ["envkit.managed=true"]}``).

    docker's SDK lists ids, then inspects each one; a container removed in between (by
    ``--rm``, a pool's watcher, the reaper) is skipped rather than raising
    ``docker.errors.NotFound``.
    """
    return client.containers.list(all=True, filters=dict(filters), ignore_removed=True)


def _short_cause(exc: BaseException) -> str:
    """The innermost useful sentence of a docker/requests error chain."""
    text = str(exc).strip().rstrip(".")
    # docker-py wraps requests errors: "Error while fetching server API version: (...)".
    for marker in ("Failed to establish a new connection: ", "Connection aborted.', "):
        if marker in text:
            text = text.split(marker, 1)[1].rstrip("')\"").strip()
    return text[:300] or type(exc).__name__
