"""Build, run and stop environment images on a real Docker engine.

``import envkit.container`` does not import docker's SDK; the functions do, when called.
"""

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
