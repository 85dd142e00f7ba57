"""``python -m envkit.bridges.openenv_validate ARGS``: OpenEnv's own ``openenv validate ARGS``
with the graders of the ``openenv.validation.graders`` entry-point group loaded.

OpenEnv 0.10 declares that group (``GraderRegistry.load_entry_points``) but its runner builds
its registry with ``default_grader_registry`` and never calls it, so ``openenv validate`` alone
reports every third-party id as "grader not implemented in this build". This program wraps
that one function: the registry it returns also holds every installed entry-point grader
whose id OpenEnv does not grade itself (OpenEnv's own grader wins a shared id).

Offline, one more thing: OpenEnv's Docker provider reaches a subject declared
``network.mode: no-network`` only through a helper container of its own digest-pinned image
(``_netns.HELPER_IMAGE``), pulled from a registry at start, so without a registry the run
ends at ``runtime.startup`` before any check. When that image is neither present nor
pullable, this program starts the subject with OpenEnv's ``public`` launch (bridge network,
port published on 127.0.0.1 only) so every other check runs, and answers
``runtime.network_policy`` SKIP with the reason and the ``docker pull`` that enables it; the
manifest is not changed. Everything else (arguments, output, report, exit codes) is OpenEnv's
command, unchanged.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from typing import Any

from openenv.validation import runner
from openenv.validation.graders import ENTRY_POINT_GROUP, GraderRegistry
from openenv.validation.policy import SeverityPolicy
from openenv.validation.providers import ProviderError
from openenv.validation.providers import docker as docker_provider
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus

NETWORK_CHECK = "runtime.network_policy"
_offline: list[str] = []  # the helper image that could not be had, once a start needed it


def add_entry_point_graders(registry: GraderRegistry) -> list[str]:
    """Register the entry-point graders ``registry`` lacks.

    Returns:
        The check ids added (an entry point whose id is already registered is left out).
    """
    added = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        candidate = ep.load()
        grader = candidate() if isinstance(candidate, type) else candidate
        if registry.get(grader.check_id) is None:
            registry.register(grader)
            added.append(grader.check_id)
    return added


_openenv_registry = runner.default_grader_registry


def registry_with_entry_points(policy: SeverityPolicy) -> GraderRegistry:
    """OpenEnv's default registry plus the entry-point graders (its drop-in replacement);
    its ``runtime.network_policy`` grader skips with the reason when the no-network helper
    image could not be had (see the module's docstring)."""
    registry = _openenv_registry(policy)
    add_entry_point_graders(registry)
    grader = registry.get(NETWORK_CHECK)
    if grader is not None:
        grader.run = _skip_when_offline(grader.run)  # type: ignore[method-assign]
    return registry


def helper_available(image: str) -> bool:
    """Whether OpenEnv's helper ``image`` is present, pulling it when it is not (OpenEnv's
    own ``_ensure_image``: a reachable registry gives OpenEnv's full no-network check)."""
    try:
        docker_provider._ensure_image(image)
    except ProviderError:
        return False
    return True


def offline_reason(image: str) -> str:
    """Why ``runtime.network_policy`` was not measured (one evidence line)."""
    return (
        f"not measured: OpenEnv's no-network probe needs its helper image {image}, which is "
        "not present and could not be pulled (no registry reachable); the subject ran with "
        "OpenEnv's `public` launch (port published on 127.0.0.1) for the other checks"
    )


_openenv_start = docker_provider.DockerValidationProvider.start


def _start(self: Any, spec: Any) -> Any:
    """``DockerValidationProvider.start``: a ``no-network`` subject whose helper image cannot
    be had starts with the ``public`` launch (the declaration itself is then unchecked)."""
    if spec.network.mode == "no-network" and not helper_available(self.helper_image):
        _offline.append(self.helper_image)
        print(
            f"envkit: {offline_reason(self.helper_image)}; {NETWORK_CHECK} is skipped. "
            f"To check it, pull the image where a registry is reachable: "
            f"`docker pull {self.helper_image}`.",
            file=sys.stderr,
        )
        public = spec.network.model_copy(update={"mode": "public"})
        spec = spec.model_copy(update={"network": public})
    return _openenv_start(self, spec)


def _skip_when_offline(run: Any) -> Any:
    def skipped_or_run(subject: Any) -> CheckResult:
        if not _offline:
            return run(subject)
        return CheckResult(
            check_id=NETWORK_CHECK,
            status=CheckStatus.SKIP,
            evidence=[offline_reason(_offline[-1])],
            remediation=f"Pull the helper image where a registry is reachable: "
            f"`docker pull {_offline[-1]}`.",
            duration_s=0.0,
        )

    return skipped_or_run


def main(argv: list[str] | None = None) -> None:
    """Run ``openenv validate`` with ``argv`` (default: this program's arguments)."""
    from openenv.cli.__main__ import main as openenv_main  # its import pulls gradio: slow

    runner.default_grader_registry = registry_with_entry_points
    docker_provider.DockerValidationProvider.start = _start  # type: ignore[method-assign]
    sys.argv = ["openenv", "validate", *(sys.argv[1:] if argv is None else argv)]
    openenv_main()


if __name__ == "__main__":
    main()
