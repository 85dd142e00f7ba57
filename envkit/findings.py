"""Findings and rules: the data every check produces (docs/rules.md).

A :class:`Rule` is registered once, with a stable code (``EK`` + 3 digits, never reused), a
kebab-case name, a default severity and its documentation (What / Why / Example / Fix).
A check produces :class:`Finding` objects through :meth:`Rule.finding`; checks collect and keep
going, they never assert.

Families (fixed): EK1xx manifest, EK2xx project & packaging, EK3xx Dockerfile, EK4xx runtime &
protocol, EK5xx reward integrity, EK6xx deployment safety.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

DOCS_URL = "https://github.com/envkit/envkit/blob/main/docs/rules.md"


_CODE = re.compile(r"EK[1-7]\d\d")
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
CLASS_ID = re.compile(r"BGW-1\d\d|[A-Za-z][\w.-]*:[a-z0-9]+(-[a-z0-9]+)*")
"""An external failure class: an entry of bohrin's weakness list (``BGW-119``) or
``SOURCE:slug`` (``TerminalWrench:keyword-gaming``, ``rl-envdoctor:empty-ties-correct``)."""


class Stage(str, Enum):
    """When a rule is checked: ``static`` reads files only; ``runtime`` starts or contacts
    the environment's server (``envkit validate --static`` skips it); ``training`` imports the
    environment's training-side code (TRL adapter, client, inference script, tests) in its own
    interpreter and plays the adapter against a live server (skipped by ``--static`` and
    ``--no-train-path``)."""

    STATIC = "static"
    RUNTIME = "runtime"
    TRAINING = "training"


@dataclass(frozen=True)
class Family:
    """A family of rules: the first digit of their codes.

    Attributes:
        name: e.g. ``reward``; shown by ``envkit rules`` and in docs/rules.md headings.
        stage: the stage every rule of the family belongs to.
    """

    name: str
    stage: Stage


#: THE table of rule families and their stage (declared once).
#: Everything else (a rule's stage, the codes each stage runs) is derived from it.
FAMILIES: dict[str, Family] = {
    "1": Family("manifest", Stage.STATIC),
    "2": Family("project", Stage.STATIC),
    "3": Family("dockerfile", Stage.STATIC),
    "4": Family("runtime", Stage.RUNTIME),
    "5": Family("reward", Stage.RUNTIME),
    "6": Family("deployment", Stage.STATIC),
    "7": Family("training", Stage.TRAINING),
}


class Severity(str, Enum):
    """How bad a finding is. Only ``error`` findings fail ``envkit validate`` (exit 1)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


@dataclass(frozen=True)
class Location:
    """Where a static finding points: a path relative to the environment root, 1-based
    line and column when known."""

    file: str
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column}

    def __str__(self) -> str:
        out = self.file
        if self.line is not None:
            out += f":{self.line}"
            if self.column is not None:
                out += f":{self.column}"
        return out


@dataclass
class Finding:
    """One problem found by one rule.

    Attributes:
        code: the rule's stable code, e.g. ``EK503``.
        name: the rule's kebab-case name, e.g. ``reward-out-of-range``.
        severity: after configuration overrides.
        message: expectation first, then the actual value, then the likely cause.
        location: file/line/column for static findings, ``None`` for runtime ones.
        fix: an imperative hint.
        url: link to the rule's documentation.
        stage: ``static`` or ``runtime``.
        data: extra machine-readable context (the offending action, the two rewards, ...).
        hygiene: the rule is a generic layout warning (:attr:`Rule.hygiene`).
        rfc008: the RFC 008 check id of the rule (:attr:`Rule.rfc008`), or ``None``.
    """

    code: str
    name: str
    severity: Severity
    message: str
    location: Location | None = None
    fix: str = ""
    url: str = ""
    stage: str = "static"
    data: dict[str, Any] = field(default_factory=dict)
    hygiene: bool = False
    rfc008: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of a finding (the machine contract of ``--format json``)."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "location": self.location.to_dict() if self.location else None,
            "fix": self.fix,
            "url": self.url,
            "hygiene": self.hygiene,
            "rfc008": self.rfc008,
        }


@dataclass(frozen=True)
class Rule:
    """A registered check with its documentation.

    Attributes:
        code: ``EK`` + 3 digits; the first digit is the family.
        name: kebab-case, names the problem (``reward-out-of-range``).
        severity: default severity; users may re-grade it in ``[tool.envkit.validate]``.
        summary: one line, shown by ``envkit rules``.
        what, why, example, fix: the rule's documentation (``envkit validate --explain CODE``).
        hygiene: a generic layout or packaging warning (``.gitignore``, BuildKit syntax, ...)
            rather than a defect of this environment: the text report folds these into one
            line per family unless ``--show-all``. Declared where the rule
            is registered.
        rfc008: the RFC 008 check id the rule corresponds to (one of :data:`RFC008_LOCAL`
            or :data:`RFC008_HUB`), ``None`` when none does.
        limits: defects of the rule's kind it is known not to find (measured on its
            independent corpus, ``tests/corpus/<name>/``); ``""`` when none is known.
        reported_as: codes of the rules that report some defects of this rule's kind
            instead of it, where theirs is the more exact finding (a reward that ignores every
            action is constant: EK504, not also EK511); ``limits`` says which. A defect of the
            rule's corpus reported by one of them counts as found.
        classes: the external failure classes the rule finds defects of (:data:`CLASS_ID`:
            bohrin's weakness list, Terminal Wrench's categories, rl-envdoctor's checks), so
            that docs/coverage.md maps the field's classes to the code; ``()`` when none.
    """

    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fix: str
    hygiene: bool = False
    rfc008: str | None = None
    limits: str = ""
    reported_as: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return FAMILIES[self.code[2]].name

    @property
    def stage(self) -> str:
        """``"static"``, ``"runtime"`` or ``"training"``, from the family table."""
        return FAMILIES[self.code[2]].stage.value

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"

    def finding(
        self,
        message: str,
        *,
        location: Location | None = None,
        fix: str | None = None,
        severity: Severity | None = None,
        **data: object,
    ) -> Finding:
        """Make a finding of this rule. ``fix`` defaults to the rule's documented fix."""
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            location=location,
            fix=fix if fix is not None else self.fix,
            url=self.url,
            stage=self.stage,
            data=dict(data),
            hygiene=self.hygiene,
            rfc008=self.rfc008,
        )

    def explain(self) -> str:
        """The rule's documentation as Markdown."""
        rfc = (
            f"RFC 008 check: `{self.rfc008}`"
            + (" (graded by `openenv validate` 0.10)" if self.rfc008 in RFC008_OPENENV_010 else "")
            if self.rfc008
            else "RFC 008 check: none"
        )
        kind = (
            "\nHygiene: a generic layout warning, folded in the text report unless `--show-all`.\n"
            if self.hygiene
            else ""
        )
        return (
            f"# {self.code} {self.name} ({self.severity.value}, {self.family})\n\n"
            f"{self.summary}\n\n{rfc}\n{kind}\n"
            f"## What it checks\n{self.what}\n\n"
            f"## Why it matters\n{self.why}\n\n"
            f"## Example\n{self.example}\n\n"
            f"## Fix\n{self.fix}\n"
            + (f"\n## Known limits\n{self.limits}\n" if self.limits else "")
            + (
                f"\nReported instead by: {', '.join(self.reported_as)} (see Known limits).\n"
                if self.reported_as
                else ""
            )
        )


RULES: dict[str, Rule] = {}


# -- RFC 008 check ids ---------------------------------------------------------------------------
#: The 34 local-lane check ids of RFC 008 (huggingface/OpenEnv#1041), in the order of openenv
#: 0.10.0's severity policy ``severity-v2`` (level 1 static, 2 runtime, 3 semantic).
#: Every envkit rule names the one it corresponds to (``rfc008=``).
RFC008_LOCAL: tuple[str, ...] = (
    "static.manifest",
    "static.reproducible_build",
    "static.image_hygiene",
    "static.layout",
    "static.sbom",
    "static.oci_labels",
    "static.resource_declaration",
    "static.timeout_ceiling",
    "static.dependency_pinning",
    "static.task_distribution_pinning",
    "runtime.startup",
    "runtime.reward_well_formed",
    "runtime.rubric_introspectable",
    "runtime.observation_schema",
    "runtime.state_contract",
    "runtime.trajectory_record",
    "runtime.reward_attribution",
    "runtime.tool_declaration_accuracy",
    "runtime.task_declaration_accuracy",
    "runtime.seed_control",
    "runtime.episode_determinism",
    "runtime.network_policy",
    "runtime.host_containment",
    "runtime.resource_bounds",
    "runtime.episode_isolation",
    "runtime.oracle_containment",
    "semantic.oracle_max",
    "semantic.floor_gap",
    "semantic.canary_floor",
    "semantic.no_solution_leakage",
    "semantic.verifier_determinism",
    "semantic.verifier_portability",
    "semantic.resource_envelope",
    "semantic.replayability",
)
#: The 12 hub-lane ids of the same policy (run by the Hub, not by a local validator).
RFC008_HUB: tuple[str, ...] = (
    "hub.layer_isolation",
    "hub.time_to_first_work",
    "hub.cosign_signature",
    "hub.cross_host_determinism",
    "hub.immutable_versioning",
    "statistical.reward_reachability",
    "statistical.difficulty_separation",
    "statistical.headroom",
    "statistical.variance_bound",
    "statistical.training_signal",
    "statistical.adversarial_floor",
    "statistical.gameability_gap",
)
#: The local-lane ids ``openenv validate`` 0.10.0 actually grades: its runner registers the
#: graders of ``static.manifest``, ``runtime.reward_well_formed``,
#: ``runtime.observation_schema``, ``runtime.state_contract`` and ``runtime.network_policy``,
#: and reports ``runtime.startup`` itself. The other 28 are reserved (policy entries only).
RFC008_OPENENV_010: frozenset[str] = frozenset(
    {
        "static.manifest",
        "runtime.startup",
        "runtime.reward_well_formed",
        "runtime.observation_schema",
        "runtime.state_contract",
        "runtime.network_policy",
    }
)


def family_digits(stage: Stage) -> str:
    """The family digits of ``stage``, e.g. ``"45"`` for :attr:`Stage.RUNTIME`."""
    return "".join(digit for digit, fam in FAMILIES.items() if fam.stage is stage)


def codes_of(stage: Stage) -> list[str]:
    """The registered codes of ``stage``, sorted (register the rules first: import
    :mod:`envkit.validation.rules`)."""
    return sorted(code for code, rule in RULES.items() if FAMILIES[code[2]].stage is stage)


def register(
    code: str,
    name: str,
    severity: Severity | str,
    *,
    summary: str,
    what: str,
    why: str,
    example: str,
    fix: str,
    hygiene: bool = False,
    rfc008: str | None = None,
    limits: str = "",
    reported_as: tuple[str, ...] = (),
    classes: tuple[str, ...] = (),
) -> Rule:
    """Register a rule once and return it.

    Args:
        hygiene: a generic layout warning, folded in the text report (:attr:`Rule.hygiene`).
        rfc008: the RFC 008 check id the rule corresponds to (:attr:`Rule.rfc008`).
        limits: what the rule is known to miss (:attr:`Rule.limits`).
        reported_as: rules that report some defects of its kind instead
            (:attr:`Rule.reported_as`); they need not be registered yet.
        classes: external failure classes it finds (:attr:`Rule.classes`).

    Raises:
        ValueError: malformed code or name, an empty documentation section, a code or name
            registered twice (codes are never reused), an unknown RFC 008 check id, a
            malformed code in ``reported_as``, ``reported_as`` without ``limits``, or a
            class that is not a :data:`CLASS_ID`.
    """
    if not _CODE.fullmatch(code):
        raise ValueError(f"rule code {code!r} must be EK followed by 3 digits, family 1-7")
    if not _NAME.fullmatch(name):
        raise ValueError(f"rule name {name!r} must be kebab-case")
    for label, text in (
        ("summary", summary),
        ("what", what),
        ("why", why),
        ("example", example),
        ("fix", fix),
    ):
        if not text or not text.strip():
            raise ValueError(f"rule {code} has an empty {label!r} section")
    if code in RULES:
        raise ValueError(f"rule code {code} registered twice")
    if any(r.name == name for r in RULES.values()):
        raise ValueError(f"rule name {name} registered twice")
    if rfc008 is not None and rfc008 not in RFC008_LOCAL + RFC008_HUB:
        raise ValueError(f"rule {code}: {rfc008!r} is not an RFC 008 check id")
    if bad := [c for c in reported_as if not _CODE.fullmatch(c) or c == code]:
        raise ValueError(f"rule {code}: reported_as holds {bad}")
    if reported_as and not limits.strip():
        raise ValueError(f"rule {code}: reported_as needs limits saying when")
    if bad := [c for c in classes if not CLASS_ID.fullmatch(c)]:
        raise ValueError(f"rule {code}: classes holds {bad} (BGW-1xx or SOURCE:slug)")
    rule = Rule(
        code,
        name,
        Severity(severity),
        summary.strip(),
        what.strip(),
        why.strip(),
        example.strip(),
        fix.strip(),
        hygiene=hygiene,
        rfc008=rfc008,
        limits=limits.strip(),
        reported_as=tuple(reported_as),
        classes=tuple(classes),
    )
    RULES[code] = rule
    return rule
