"""``python -m tests.bridges.future_openenv ARGS``: ``openenv validate ARGS`` as a later OpenEnv
release could run it. OpenEnv 0.10 declares ``GraderRegistry.load_entry_points`` but its runner
never calls it; here the runner's registry grades two ids envkit grades too, with graders of its
own, and then loads the ``openenv.validation.graders`` entry points itself (envkit's among them).

``--registry`` instead prints, as JSON, which grader each RFC 008 id envkit implements
(its class name) and the ids the registry holds.
"""

from __future__ import annotations

import json
import sys
import time

from openenv.validation import runner
from openenv.validation.graders import GraderRegistry, Subject
from openenv.validation.manifest import NormalizedManifest
from openenv.validation.policy import SeverityPolicy
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus, Level, ProviderCapability

from envkit.bridges.rfc008 import IMPLEMENTED

#: The ids this OpenEnv grades itself that envkit grades too.
OWN_IDS = ("runtime.seed_control", "semantic.floor_gap")


class OwnGrader:
    """OpenEnv's own grader for one id: passes, saying whose it is."""

    level = Level.RUNTIME
    requires_capabilities: frozenset[str] = frozenset()
    requires_provider: frozenset[ProviderCapability] = frozenset()
    depends_on: tuple[str, ...] = ("runtime.startup",)

    def __init__(self, check_id: str) -> None:
        self.check_id = check_id

    def applies_to(self, manifest: NormalizedManifest) -> bool:
        return True

    def run(self, subject: Subject) -> CheckResult:
        started = time.monotonic()
        return CheckResult(
            check_id=self.check_id,
            status=CheckStatus.PASS,
            evidence=["graded by OpenEnv itself"],
            duration_s=time.monotonic() - started,
        )


_shipped = runner.default_grader_registry


def future_registry(policy: SeverityPolicy) -> GraderRegistry:
    """OpenEnv 0.10's registry, its own graders for :data:`OWN_IDS`, then the entry points."""
    registry = _shipped(policy)
    for check_id in OWN_IDS:
        registry.register(OwnGrader(check_id))
    registry.load_entry_points()
    return registry


def main() -> None:
    runner.default_grader_registry = future_registry
    if sys.argv[1:] == ["--registry"]:
        registry = runner.default_grader_registry(runner.load_policy("v2"))
        graders = {cid: type(registry.get(cid)).__name__ for cid in IMPLEMENTED}
        print(json.dumps({"graded_by": graders, "ids": sorted(registry._graders)}))
        return
    from openenv.cli.__main__ import main as openenv_main  # its import pulls gradio: slow

    sys.argv = ["openenv", "validate", *sys.argv[1:]]
    openenv_main()


if __name__ == "__main__":
    main()
