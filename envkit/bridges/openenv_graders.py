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

envkit steps aside where OpenEnv grades an id itself. OpenEnv 0.10 declares
``GraderRegistry.load_entry_points`` but its runner never calls it; a release whose runner
does would register its own grader and envkit's for one id, and ``register`` raises on the
duplicate, so plain ``openenv validate`` would crash for everyone with envkit installed. A
grader here therefore answers to :attr:`EnvkitGrader.check_id` only for an id the running
OpenEnv does not grade (:func:`openenv_grades` asks OpenEnv's own registry); for the others
it registers under a deferred id (``envkit.deferred:ID``) that applies to no manifest.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

from openenv.validation import runner
from openenv.validation.graders import Subject
from openenv.validation.manifest import NormalizedManifest
from openenv.validation.policy import load_policy
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus, Level, ProviderCapability

from envkit.bridges.rfc008 import IMPLEMENTED, decide
from envkit.errors import EnvkitError
from envkit.validation import ValidationReport, validate

_STATUS = {"pass": CheckStatus.PASS, "fail": CheckStatus.FAIL, "skip": CheckStatus.SKIP}

#: (package root, base URL) -> the envkit report, or the error that kept it from being made.
_RUNS: dict[tuple[str, str], ValidationReport | str] = {}

#: The prefix of the id a grader registers under where OpenEnv grades its RFC 008 id itself.
DEFERRED = "envkit.deferred:"

_probing = False  # True while :func:`openenv_grades` builds OpenEnv's registry


def openenv_grades() -> frozenset[str]:
    """The ids of :data:`IMPLEMENTED` that the running OpenEnv grades with graders of its own.

    Asks OpenEnv's registry as its runner builds it (``runner.default_grader_registry`` with
    the ``v2`` policy), once per process. While that registry is built every envkit grader
    answers to its deferred id, so a runner that loads the entry points itself sees no
    duplicate and does not call back here. A registry that cannot be built (a later
    OpenEnv changed the function) counts as grading nothing: OpenEnv 0.10's behaviour.
    """
    if _probing:
        return frozenset(IMPLEMENTED)
    return _openenv_grades()


@functools.cache
def _openenv_grades() -> frozenset[str]:
    global _probing
    _probing = True
    try:
        registry = runner.default_grader_registry(load_policy("v2"))
    except Exception:  # OpenEnv's internals, not envkit's: any failure means "no answer"
        return frozenset()
    finally:
        _probing = False
    return frozenset(
        cid
        for cid in IMPLEMENTED
        if (grader := registry.get(cid)) is not None and not isinstance(grader, EnvkitGrader)
    )


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
        answers: the RFC 008 id, one of :data:`envkit.bridges.rfc008.IMPLEMENTED`.
    """

    level = Level.RUNTIME
    requires_capabilities: frozenset[str] = frozenset()
    requires_provider: frozenset[ProviderCapability] = frozenset()
    depends_on: tuple[str, ...] = ("runtime.startup",)

    def __init__(self, check_id: str) -> None:
        if check_id not in IMPLEMENTED:
            raise ValueError(f"envkit does not grade {check_id!r}")
        self.answers = check_id

    @property
    def deferred(self) -> bool:
        """OpenEnv grades :attr:`answers` itself: this grader stands aside."""
        return self.answers in openenv_grades()

    @property
    def check_id(self) -> str:
        """The id OpenEnv's registry files this grader under: :attr:`answers`, or
        :data:`DEFERRED` + :attr:`answers` where OpenEnv grades that id itself."""
        return DEFERRED + self.answers if self.deferred else self.answers

    def applies_to(self, manifest: NormalizedManifest) -> bool:
        return not self.deferred

    def run(self, subject: Subject) -> CheckResult:
        started = time.monotonic()
        if subject.running is None:
            return self._result(CheckStatus.SKIP, ["no running subject"], started)
        report = envkit_run(subject.root, subject.running.base_url)
        if isinstance(report, str):
            return self._result(CheckStatus.SKIP, [report], started)
        decision = decide(report, self.answers)
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
            check_id=self.answers,
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
    g.answers: g
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
