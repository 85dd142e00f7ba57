"""envkit's checks as OpenEnv 0.10 graders (entry-point group ``openenv.validation.graders``).

Only OpenEnv loads this module (it imports ``openenv`` at the top; envkit itself never
depends on openenv). Each grader answers one RFC 008 id of :data:`envkit.bridges.rfc008.IMPLEMENTED`
from ONE ``envkit validate`` run against the sandbox OpenEnv started (``Subject.running``'s
``base_url``), with the package root for the manifest, the oracle and the probe plan: the run
is made by the first grader and cached for the others (keyed by root and URL).

Every grader declares ``level = Level.RUNTIME``, the semantic ones too: OpenEnv 0.10's runner
executes static and runtime graders only (``run_validation`` never runs a grader selected at
``Level.SEMANTIC``; it reports it as SKIP), and a started sandbox exists only in the runtime
lane. Severity is OpenEnv's: a grader returns pass, fail or skip, never a severity.
"""

from __future__ import annotations

import time
from pathlib import Path

from openenv.validation.graders import Subject
from openenv.validation.manifest import NormalizedManifest
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus, Level, ProviderCapability

from envkit.bridges.rfc008 import IMPLEMENTED, decide
from envkit.errors import EnvkitError
from envkit.validation import ValidationReport, validate

_STATUS = {"pass": CheckStatus.PASS, "fail": CheckStatus.FAIL, "skip": CheckStatus.SKIP}

#: (package root, base URL) -> the envkit report, or the error that kept it from being made.
_RUNS: dict[tuple[str, str], ValidationReport | str] = {}


def envkit_run(root: Path, base_url: str) -> ValidationReport | str:
    """envkit's report on the sandbox at ``base_url`` (made once per root and URL).

    Plays envkit's runtime stage against the URL with ``root``'s manifest, oracle (run in
    ``root/.venv``'s interpreter when there is one, else this one) and probe plan; the
    training-path lane is not played (it starts a server of its own).

    Returns:
        The report, or a one-line reason when envkit refused the subject (an
        :class:`~envkit.errors.EnvkitError`'s message).
    """
    key = (str(Path(root).resolve()), base_url)
    if key not in _RUNS:
        try:
            _RUNS[key] = validate(root, url=base_url, oracle_with_url=True, train_path=False)
        except EnvkitError as exc:
            _RUNS[key] = f"envkit validate could not run: {exc}"
    return _RUNS[key]


class EnvkitGrader:
    """One RFC 008 id answered by envkit (see the module docstring).

    Attributes:
        check_id: the id, one of :data:`envkit.bridges.rfc008.IMPLEMENTED`.
    """

    level = Level.RUNTIME
    requires_capabilities: frozenset[str] = frozenset()
    requires_provider: frozenset[ProviderCapability] = frozenset()
    depends_on: tuple[str, ...] = ("runtime.startup",)

    def __init__(self, check_id: str) -> None:
        if check_id not in IMPLEMENTED:
            raise ValueError(f"envkit does not grade {check_id!r}")
        self.check_id = check_id

    def applies_to(self, manifest: NormalizedManifest) -> bool:
        return True

    def run(self, subject: Subject) -> CheckResult:
        started = time.monotonic()
        if subject.running is None:
            return self._result(CheckStatus.SKIP, ["no running subject"], started)
        report = envkit_run(subject.root, subject.running.base_url)
        if isinstance(report, str):
            return self._result(CheckStatus.SKIP, [report], started)
        decision = decide(report, self.check_id)
        measured = {"envkit_codes": list(decision.codes)}
        return self._result(
            _STATUS[decision.status],
            decision.evidence,
            started,
            measured=measured,
            remediation=(
                "Run `envkit validate` in the package and fix the findings named above "
                "(`envkit validate --explain CODE` tells how)."
                if decision.status == "fail"
                else None
            ),
        )

    def _result(
        self,
        status: CheckStatus,
        evidence: list[str],
        started: float,
        *,
        measured: dict[str, object] | None = None,
        remediation: str | None = None,
    ) -> CheckResult:
        return CheckResult(
            check_id=self.check_id,
            status=status,
            evidence=evidence,
            measured=measured or {},
            remediation=remediation,
            duration_s=time.monotonic() - started,
        )


seed_control = EnvkitGrader("runtime.seed_control")
episode_determinism = EnvkitGrader("runtime.episode_determinism")
resource_bounds = EnvkitGrader("runtime.resource_bounds")
episode_isolation = EnvkitGrader("runtime.episode_isolation")
oracle_max = EnvkitGrader("semantic.oracle_max")
floor_gap = EnvkitGrader("semantic.floor_gap")
canary_floor = EnvkitGrader("semantic.canary_floor")
no_solution_leakage = EnvkitGrader("semantic.no_solution_leakage")
verifier_determinism = EnvkitGrader("semantic.verifier_determinism")
replayability = EnvkitGrader("semantic.replayability")

#: Every grader of this module, by check id (the entry points name the same objects).
GRADERS: dict[str, EnvkitGrader] = {
    g.check_id: g
    for g in (
        seed_control,
        episode_determinism,
        resource_bounds,
        episode_isolation,
        oracle_max,
        floor_gap,
        canary_floor,
        no_solution_leakage,
        verifier_determinism,
        replayability,
    )
}
