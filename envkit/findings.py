"""Findings and rules: the data every check produces (docs/rules.md; issue #3).

A :class:`Rule` is registered once, with a stable code (``EK`` + 3 digits, never reused), a
kebab-case name, a default severity and its documentation (What / Why / Example / Fix).
A check produces :class:`Finding` objects through :meth:`Rule.finding`; checks collect and keep
going, they never assert.

Families (fixed): EK1xx manifest, EK2xx project & packaging, EK3xx Dockerfile, EK4xx runtime &
protocol, EK5xx reward integrity, EK6xx deployment safety. Source: issue #3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

DOCS_URL = "https://github.com/envkit/envkit/blob/main/docs/rules.md"


_CODE = re.compile(r"EK[1-6]\d\d")
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class Stage(str, Enum):
    """When a rule is checked: ``static`` reads files only; ``runtime`` starts or contacts
    the environment's server (``envkit validate --static`` skips it)."""

    STATIC = "static"
    RUNTIME = "runtime"


@dataclass(frozen=True)
class Family:
    """A family of rules: the first digit of their codes.

    Attributes:
        name: e.g. ``reward``; shown by ``envkit rules`` and in docs/rules.md headings.
        stage: the stage every rule of the family belongs to.
    """

    name: str
    stage: Stage


#: THE table of rule families and their stage (issue #3 families; issue #12: declared once).
#: Everything else (a rule's stage, the codes each stage runs) is derived from it.
FAMILIES: dict[str, Family] = {
    "1": Family("manifest", Stage.STATIC),
    "2": Family("project", Stage.STATIC),
    "3": Family("dockerfile", Stage.STATIC),
    "4": Family("runtime", Stage.RUNTIME),
    "5": Family("reward", Stage.RUNTIME),
    "6": Family("deployment", Stage.STATIC),
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
    """

    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fix: str

    @property
    def family(self) -> str:
        return FAMILIES[self.code[2]].name

    @property
    def stage(self) -> str:
        """``"static"`` or ``"runtime"``, from the family table."""
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
        **data: Any,
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
        )

    def explain(self) -> str:
        """The rule's documentation as Markdown."""
        return (
            f"# {self.code} {self.name} ({self.severity.value}, {self.family})\n\n"
            f"{self.summary}\n\n"
            f"## What it checks\n{self.what}\n\n"
            f"## Why it matters\n{self.why}\n\n"
            f"## Example\n{self.example}\n\n"
            f"## Fix\n{self.fix}\n"
        )


RULES: dict[str, Rule] = {}


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
) -> Rule:
    """Register a rule once and return it.

    Raises:
        ValueError: malformed code or name, an empty documentation section, or a code or name
            registered twice (codes are never reused).
    """
    if not _CODE.fullmatch(code):
        raise ValueError(f"rule code {code!r} must be EK followed by 3 digits, family 1-6")
    if not _NAME.fullmatch(name):
        raise ValueError(f"rule name {name!r} must be kebab-case")
    for label, text in (("summary", summary), ("what", what), ("why", why),
                        ("example", example), ("fix", fix)):
        if not text or not text.strip():
            raise ValueError(f"rule {code} has an empty {label!r} section")
    if code in RULES:
        raise ValueError(f"rule code {code} registered twice")
    if any(r.name == name for r in RULES.values()):
        raise ValueError(f"rule name {name} registered twice")
    rule = Rule(code, name, Severity(severity), summary.strip(), what.strip(), why.strip(),
                example.strip(), fix.strip())
    RULES[code] = rule
    return rule
