"""``python -m envkit.bridges.openenv_validate ARGS``: OpenEnv's own ``openenv validate ARGS``
with the graders of the ``openenv.validation.graders`` entry-point group loaded.

OpenEnv 0.10 declares that group (``GraderRegistry.load_entry_points``) but its runner builds
its registry with ``default_grader_registry`` and never calls it, so ``openenv validate`` alone
reports every third-party id as "grader not implemented in this build". This program wraps
that one function: the registry it returns also holds every installed entry-point grader
whose id OpenEnv does not grade itself (OpenEnv's own grader wins a shared id). Everything
else (arguments, output, report, exit codes) is OpenEnv's command, unchanged.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

from openenv.validation import runner
from openenv.validation.graders import ENTRY_POINT_GROUP, GraderRegistry
from openenv.validation.policy import SeverityPolicy


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
    """OpenEnv's default registry plus the entry-point graders (its drop-in replacement)."""
    registry = _openenv_registry(policy)
    add_entry_point_graders(registry)
    return registry


def main(argv: list[str] | None = None) -> None:
    """Run ``openenv validate`` with ``argv`` (default: this program's arguments)."""
    from openenv.cli.__main__ import main as openenv_main  # its import pulls gradio: slow

    runner.default_grader_registry = registry_with_entry_points
    sys.argv = ["openenv", "validate", *(sys.argv[1:] if argv is None else argv)]
    openenv_main()


if __name__ == "__main__":
    main()
