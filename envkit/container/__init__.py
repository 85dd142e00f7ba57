"""Build, run and stop environment images on a real Docker engine.

The names below are imported lazily, so that ``import envkit.container.hardening`` or
``envkit.container.dockerfile`` (read by ``envkit deploy k8s`` and the Dockerfile rules) does
not import docker's SDK; the modules that talk to the engine import it at their top.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envkit.container._engine import MANAGED_LABEL, docker_client, docker_host
    from envkit.container.build import build_image
    from envkit.container.build_result import BuildEvent, BuildResult, BuildStep
    from envkit.container.hardening import HardenedOptions, container_facts
    from envkit.container.lane import validate_docker
    from envkit.container.run import (
        RunningContainer,
        StoppedContainer,
        run_container,
        stop_containers,
    )

# public name -> module holding it
_LAZY = {
    "MANAGED_LABEL": "envkit.container._engine",
    "docker_client": "envkit.container._engine",
    "docker_host": "envkit.container._engine",
    "build_image": "envkit.container.build",
    "BuildEvent": "envkit.container.build_result",
    "BuildResult": "envkit.container.build_result",
    "BuildStep": "envkit.container.build_result",
    "HardenedOptions": "envkit.container.hardening",
    "container_facts": "envkit.container.hardening",
    "validate_docker": "envkit.container.lane",
    "RunningContainer": "envkit.container.run",
    "StoppedContainer": "envkit.container.run",
    "run_container": "envkit.container.run",
    "stop_containers": "envkit.container.run",
}

__all__ = [
    "MANAGED_LABEL",
    "BuildEvent",
    "BuildResult",
    "BuildStep",
    "HardenedOptions",
    "RunningContainer",
    "StoppedContainer",
    "build_image",
    "container_facts",
    "docker_client",
    "docker_host",
    "run_container",
    "stop_containers",
    "validate_docker",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'envkit.container' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
