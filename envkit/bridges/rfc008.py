"""RFC 008 check ids that envkit decides, and their verdicts from one envkit report.

OpenEnv 0.10 reserves 46 RFC 008 check ids (``openenv/validation/policies/severity-v2.json``)
and grades six. Each envkit rule names the id it corresponds to (``rfc008=`` on
:func:`envkit.findings.register`); this module reads those declarations, so a new rule with an
id joins its check here without an edit. :func:`decide` turns one
:class:`~envkit.validation.report.ValidationReport` into a pass / fail / skip per id, with the
findings (codes, messages, the seeds and actions in their data) as evidence. Severity is
never decided here: OpenEnv's policy assigns it per id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from envkit.findings import RULES, Finding, Severity
from envkit.validation.report import ValidationReport

#: The ids envkit grades for OpenEnv, in OpenEnv's policy order.
IMPLEMENTED: tuple[str, ...] = (
    "runtime.seed_control",
    "runtime.episode_determinism",
    "runtime.resource_bounds",
    "runtime.episode_isolation",
    "semantic.oracle_max",
    "semantic.floor_gap",
    "semantic.canary_floor",
    "semantic.no_solution_leakage",
    "semantic.verifier_determinism",
    "semantic.replayability",
)

#: Codes that decide an id without declaring it. RFC 008's canaries are trajectories known
#: to be wrong that must score at the floor (the empty answer that got 1.0 on the Hub,
#: huggingface/OpenEnv#778); envkit's canaries are the degenerate policies EK505 plays
#: (empty, minimal, maximal and repeated actions), generated from the action schema.
EXTRA_CODES: dict[str, tuple[str, ...]] = {"semantic.canary_floor": ("EK505",)}

#: Info findings that mean "not decided" rather than "fine": EK507, no oracle declared, so
#: the oracle's maximum was never played.
UNDECIDED = frozenset({"EK507"})

#: At most this many evidence lines per check, each at most ``_LINE`` characters.
_LINES = 12
_LINE = 600

Status = Literal["pass", "fail", "skip"]


@dataclass(frozen=True)
class Decision:
    """One check id's outcome from an envkit report.

    Attributes:
        check_id: the RFC 008 id, e.g. ``"semantic.floor_gap"``.
        status: ``pass`` (a rule of the id ran and found nothing at warning or error),
            ``fail`` (a warning or error finding of the id), ``skip`` (no rule of the id was
            evaluated, or only an undecided info finding such as EK507).
        evidence: human-readable lines: ``EK505 reward-hackable: message {data}``.
        codes: the envkit codes that decide the id.
    """

    check_id: str
    status: Status
    evidence: list[str] = field(default_factory=list)
    codes: tuple[str, ...] = ()


def codes_for(check_id: str) -> tuple[str, ...]:
    """The envkit finding codes that decide ``check_id`` (sorted; empty for an id envkit
    does not decide)."""
    declared = [code for code, rule in RULES.items() if rule.rfc008 == check_id]
    return tuple(sorted({*declared, *EXTRA_CODES.get(check_id, ())}))


def mapping() -> dict[str, tuple[str, ...]]:
    """Every implemented id and its codes, e.g. ``{"semantic.floor_gap": ("EK505",), ...}``."""
    return {check_id: codes_for(check_id) for check_id in IMPLEMENTED}


def _line(finding: Finding) -> str:
    text = f"{finding.code} {finding.name} ({finding.severity.value}): {finding.message}"
    if finding.data:
        text += " " + json.dumps(finding.data, default=str, sort_keys=True)
    return text if len(text) <= _LINE else text[: _LINE - 1] + "…"


def decide(report: ValidationReport, check_id: str) -> Decision:
    """The outcome of ``check_id`` in ``report``.

    Args:
        report: one ``envkit validate`` run (any lane) of the subject.
        check_id: an id of :data:`IMPLEMENTED` (another id has no codes: always ``skip``).

    Returns:
        A :class:`Decision`; its evidence names the codes, messages and data (seeds,
        actions, rewards) of the findings, or the rules that passed, or why none ran.
    """
    codes = codes_for(check_id)
    if not codes:
        return Decision(check_id, "skip", ["envkit has no rule for this check"], codes)
    findings = [f for f in report.findings if f.code in codes]
    bad = [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    if bad:
        return Decision(check_id, "fail", [_line(f) for f in bad][:_LINES], codes)
    undecided = [f for f in findings if f.code in UNDECIDED]
    if undecided:
        return Decision(check_id, "skip", [_line(f) for f in undecided][:_LINES], codes)
    checks = [c for c in report.checks if c.code in codes]
    ran = [c for c in checks if c.status != "skipped" and c.code not in UNDECIDED]
    if ran:
        lines = [f"{c.code} {c.name}: passed" for c in ran]
        lines += [_line(f) for f in findings]  # info findings still tell something
        return Decision(check_id, "pass", lines[:_LINES], codes)
    reasons = [f"{c.code} {c.name}: skipped ({c.reason or 'not evaluated'})" for c in checks]
    return Decision(check_id, "skip", reasons[:_LINES] or ["no envkit rule ran"], codes)
