"""The result of ``envkit validate`` and its renderings (text, json, github, junit).

:class:`ValidationReport` is data; the ``render_*`` functions turn it into text and never print
(the CLI writes the text to stdout or ``--output``). ``to_dict()`` is the machine contract of
``--format json``, validated by ``report.schema.json`` in the tests.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from junit_xml import TestCase, TestSuite, to_xml_report_string
from rich.text import Text

from envkit._version import __version__
from envkit.envdir.digest import Digests
from envkit.findings import (
    FAMILIES,
    RFC008_LOCAL,
    RFC008_OPENENV_010,
    RULES,
    Finding,
    Rule,
    Severity,
)
from envkit.fsutil import write_atomic  # noqa: F401 - re-exported for the CLI
from envkit.validation.config import RuleSelection

FORMATS = ("text", "json", "github", "junit")
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")

# -- why a check was skipped (``CheckResult.reason``; ``checks[].reason`` in JSON) ------------
# One home for these texts so every lane writes, and compares, the same words.
#: ``--static``: the runtime stage was not played.
STATIC_GIVEN = "--static was given"
#: ``--select``/``--ignore`` leave no runtime rule.
NO_RUNTIME_SELECTED = "no runtime rule is selected"
#: The rule itself is deselected (``--select``/``--ignore``/config).
DESELECTED = "deselected"
#: No stage said why (the fallback).
NOT_EVALUATED = "not evaluated"
#: A runtime rule the runtime stage did not reach this run.
NOT_EVALUATED_BY_RUNTIME = "not evaluated by the runtime stage"
#: The run's time (``--timeout``, or the reward-design probes' share of it) ran out first.
OUT_OF_TIME = "the time ran out before it played (raise --timeout)"
#: The runtime stage stopped early on a finding of its own (an observation over the size
#: limit, a hang, a crash) before this rule played.
STAGE_STOPPED = "the runtime stage stopped before it played: see {code}"
#: Why a report has no schema digest (``{why}``: why the runtime stage did not play).
NO_RUNTIME_STAGE = "the runtime stage did not run: {why}"
#: The manifest is unreadable, so whether an oracle is declared is unknown.
ORACLE_UNKNOWN = "openenv.yaml is invalid: the oracle is unknown"
#: Docker lane: the container never answered ``GET /health``, so nothing was played.
CONTAINER_NO_HEALTH = "the container did not answer GET /health (see EK44x)"
#: Docker lane: EK445 applies only to ``network.mode: no-network``.
NETWORK_NOT_ISOLATED = "declared network is not `no-network`"
#: ``--no-train-path``: the training-path lane (EK7xx) was not played.
NO_TRAIN_PATH = "--no-train-path was given"
#: The environment has no TRL adapter, so the adapter's checks have nothing to play.
NO_TRL_ADAPTER = "the environment has no TRL adapter (trl_env.py)"
#: ``--url`` without a directory: there is no training-side code to import.
TRAIN_PATH_NO_ROOT = "no environment directory (--url only): no training-side code to import"
#: A training-path check an earlier step's failure (or a server that never answered) kept
#: from being played.
TRAIN_PATH_NO_SERVER = "the environment's server did not start (see the runtime findings)"
TRAIN_PATH_NOT_REACHED = "not reached by the training path (an earlier step failed)"


def only_in_lanes(lanes: tuple[str, ...] | list[str]) -> str:
    """The skip reason of a rule evaluated only in ``lanes`` (e.g. ``("docker",)``)."""
    return (
        "only in the "
        + " and ".join(f"`{lane}`" for lane in lanes)
        + " lane (`envkit validate --docker`)"
    )


@dataclass
class CheckResult:
    """One rule's outcome in one run (a JUnit test case).

    Attributes:
        code: the rule's code.
        name: the rule's name.
        stage: ``static`` or ``runtime``.
        status: ``passed`` (no error finding), ``failed`` (an error finding) or ``skipped``
            (not evaluated: deselected, or a precondition was missing).
        reason: why it was skipped.
        findings: this rule's findings (any severity).
    """

    code: str
    name: str
    stage: str
    status: str
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)


@dataclass
class RuntimeNote:
    """Whether the runtime stage ran, and on what assumptions (it is never
    skipped silently).

    Attributes:
        ran: the runtime stage was played.
        reason: why it was not (``None`` when it ran).
        assumptions: what it assumed because the manifest could not be read (defaults
            used, the app started, checks not played); empty with a readable manifest.
        launch: how envkit started the server (e.g. "package form from
            the parent folder: uvicorn NAME.server.app:app"), ``None`` with ``--url`` or when
            it did not start.
        notes: what the runtime stage wants the reader to know beyond findings (e.g. a
            reward rule not judged on a sparse task, and why).
        out_of_time: what the time left unplayed (``"the runtime stage"``, or reward-design
            probes by name); empty when the stage played its whole schedule in time.
    """

    ran: bool = True
    reason: str | None = None
    assumptions: list[str] = field(default_factory=list)
    launch: str | None = None
    notes: list[str] = field(default_factory=list)
    out_of_time: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "reason": self.reason,
            "assumptions": list(self.assumptions),
            "launch": self.launch,
            "notes": list(self.notes),
            "out_of_time": list(self.out_of_time),
        }


def _sort_key(f: Finding) -> tuple:
    loc = f.location
    return (
        f.severity.rank,
        loc is None,
        loc.file if loc else "",
        (loc.line or 0) if loc else 0,
        (loc.column or 0) if loc else 0,
        f.code,
    )


@dataclass
class ValidationReport:
    """What ``envkit.validate()`` returns.

    Attributes:
        target: what was validated: the environment path, the URL, or ``"PATH @ URL"``.
        findings: after select/ignore and severity overrides, sorted by severity, file,
            line, code.
        checks: one :class:`CheckResult` per rule (selected or not).
        timings: seconds per stage, e.g. ``{"static": 0.04, "startup": 4.1, "total": 9.9}``.
        root: the environment directory (``None`` for ``--url`` only); not serialised.
        lane: how the runtime stage reached the environment: ``source`` (a
            server envkit started from the code), ``docker`` (the image, run hardened) or
            ``url`` (a running server).
        runtime: whether the runtime stage ran and what it assumed (:class:`RuntimeNote`).
        digests: the environment and schema digests (:class:`envkit.envdir.digest.Digests`,
            docs/versions.md); ``None`` until the run sets them.
    """

    target: str
    findings: list[Finding] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    root: Path | None = None
    lane: str = "source"
    runtime: RuntimeNote = field(default_factory=RuntimeNote)
    digests: Digests | None = None

    def __post_init__(self) -> None:
        self.findings.sort(key=_sort_key)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def infos(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.INFO]

    @property
    def passed(self) -> bool:
        """True when no error-severity finding remains."""
        return not self.errors

    @property
    def runtime_ran(self) -> bool:
        """Some runtime check was evaluated (a report whose every runtime check was skipped
        says so next to its verdict)."""
        return self.runtime.ran and any(
            c.stage == "runtime" and c.status != "skipped" for c in self.checks
        )

    @property
    def static_only_reason(self) -> str | None:
        """Why no runtime check ran, ``None`` when some did."""
        if self.runtime_ran:
            return None
        if self.runtime.reason:
            return self.runtime.reason
        reasons = {c.reason for c in self.checks if c.stage == "runtime" and c.reason}
        return "; ".join(sorted(reasons)) or "no runtime check was evaluated"

    @property
    def checks_run(self) -> int:
        return sum(1 for c in self.checks if c.status != "skipped")

    @property
    def summary(self) -> dict[str, int]:
        return {
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "infos": len(self.infos),
            "checks_run": self.checks_run,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``--format json``."""
        return {
            "envkit_version": __version__,
            "target": self.target,
            "lane": self.lane,
            "passed": self.passed,
            "runtime": self.runtime.to_dict()
            | {"ran": self.runtime_ran, "reason": self.static_only_reason},
            "summary": self.summary,
            "versions": (self.digests or Digests()).to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "checks": [
                {
                    "code": c.code,
                    "name": c.name,
                    "stage": c.stage,
                    "status": c.status,
                    "reason": c.reason,
                    "findings": len(c.findings),
                }
                for c in self.checks
            ],
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
        }


# -- renderers ---------------------------------------------------------------------------------
@dataclass
class Evaluated:
    """What the stages of one run evaluated, before selection and severity overrides.

    Attributes:
        findings: every finding the stages made (rule default severities).
        ran: codes of the rules evaluated (passed or failed).
        skipped: rule code -> why it was not evaluated (one of the reasons above, or a
            stage's own text).
        timings: seconds per stage (``static``, ``build``, ``startup``, ``runtime``, ...).
        out_of_time: what the time left unplayed (:attr:`RuntimeNote.out_of_time`).
    """

    findings: list[Finding] = field(default_factory=list)
    ran: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    out_of_time: list[str] = field(default_factory=list)


def assemble_report(
    target: str,
    lane: str,
    root: Path | None,
    evaluated: Evaluated,
    selection: RuleSelection,
    runtime: RuntimeNote | None = None,
) -> ValidationReport:
    """The one place a :class:`ValidationReport` is built, for every lane.

    Applies ``select``/``ignore`` and severity overrides to the findings, then gives every
    known rule (and any unknown code found) one :class:`CheckResult`: ``skipped``
    (:data:`DESELECTED`, or the reason in ``evaluated.skipped``, else
    :data:`NOT_EVALUATED`), ``failed`` (an error finding remains) or ``passed``.

    Args:
        target: what was validated (``PATH``, ``URL``, ``PATH @ URL`` or ``PATH @ IMAGE``).
        lane: ``source``, ``url`` or ``docker``.
        root: the environment directory, ``None`` for ``--url`` only.
        evaluated: what the stages found (findings are modified in place: severities).
        selection: the run's :class:`envkit.validation.config.RuleSelection`.
        runtime: the runtime stage's note (default: it ran, nothing assumed).

    Returns:
        The report; ``timings`` is ``evaluated.timings`` as given (the caller adds ``total``).
    """
    findings = evaluated.findings
    kept: list[Finding] = []
    for f in findings:
        if not selection.enabled(f.code):
            continue
        f.severity = selection.severity_of(f.code, f.severity)
        kept.append(f)
    checks: list[CheckResult] = []
    for code in sorted(set(RULES) | {f.code for f in findings}):
        rule = RULES.get(code)
        name = rule.name if rule else next(f.name for f in findings if f.code == code)
        stage = rule.stage if rule else "runtime"
        mine = [f for f in kept if f.code == code]
        if not selection.enabled(code):
            status, reason = "skipped", DESELECTED
        elif code in evaluated.ran or mine:
            failed = any(f.severity.value == "error" for f in mine)
            status, reason = ("failed" if failed else "passed"), ""
        else:
            status, reason = "skipped", evaluated.skipped.get(code, NOT_EVALUATED)
        checks.append(CheckResult(code, name, stage, status, reason, mine))
    runtime = runtime if runtime is not None else RuntimeNote()
    runtime.out_of_time = list(evaluated.out_of_time)
    return ValidationReport(
        target=target,
        findings=kept,
        checks=checks,
        timings=evaluated.timings,
        root=root,
        lane=lane,
        runtime=runtime,
    )


def _display_file(report: ValidationReport, file: str) -> str:
    """A finding's file as the user should see it: relative to the current directory when
    the environment is below it (so GitHub annotations land on the right file)."""
    if report.root is None:
        return file
    try:
        rel = os.path.relpath(report.root / file)
    except ValueError:  # pragma: no cover - other drive on Windows
        return file
    return file if rel.startswith("..") else Path(rel).as_posix()


def render_json(report: ValidationReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: ValidationReport) -> str:
    s = report.summary
    total = report.timings.get("total")
    took = f" in {total:.2f} s" if total is not None else ""
    verdict = "PASSED" if report.passed else "FAILED"
    why_static = report.static_only_reason
    if why_static is not None and report.checks:
        verdict += f" (static checks only: the runtime stage did not run because {why_static})"
    return (
        f"{verdict}: {_plural(s['errors'], 'error')}, {_plural(s['warnings'], 'warning')}, "
        f"{_plural(s['infos'], 'info')} ({s['checks_run']} checks run{took})."
    )


def _is_behaviour(f: Finding) -> bool:
    """EK4xx/EK5xx: what the environment does when played (the text report leads with them)."""
    return f.code[2:3] in ("4", "5")


def folded(report: ValidationReport, show_all: bool = False) -> list[Finding]:
    """The findings the text report folds: hygiene rules (:attr:`Rule.hygiene`) below error
    severity, unless ``show_all``. An error is never folded (a user may re-grade one), nor a
    single hygiene finding: folding one saves no lines and would hide the only thing it
    says (a README that still describes the template, EK224, is often the only warning)."""
    if show_all:
        return []
    hidden = [f for f in report.findings if f.hygiene and f.severity is not Severity.ERROR]
    return hidden if len(hidden) > 1 else []


# Styles of the text report on a terminal (rich style names). Plain text carries the same
# words: colour only repeats what the severity column already says.
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_SUMMARY_STYLE = {True: "bold green", False: "bold red"}

# One line of the text report: (text, rich style or "") segments.
_Line = list[tuple[str, str]]


def _finding_lines(f: Finding) -> list[_Line]:
    pos = ""
    if f.location and f.location.line is not None:
        pos = f"{f.location.line}:{f.location.column or 1}"
    style = SEVERITY_STYLE[f.severity]
    quiet = "dim" if f.severity is Severity.INFO else ""
    out: list[_Line] = [
        [
            (f"  {pos:>7}  ", "dim"),
            (f"{f.severity.value:<7}", style),
            ("  ", ""),
            (f"{f.code} {f.name}", quiet or "bold"),
        ],
        # every line of a multi-line message (a log tail, a library's error) sits under the
        # finding, not at the left margin among the file headings
        [(textwrap.indent(f.message, _MESSAGE_INDENT), quiet)],
    ]
    if f.fix:
        out.append([(f"           fix: {f.fix}", quiet or "cyan")])
    return out


_MESSAGE_INDENT = " " * 11  # under the finding's code


def _text_lines(report: ValidationReport, show_all: bool) -> list[_Line]:
    """The text report as styled lines (see :func:`render_text`)."""
    hidden = folded(report, show_all)
    hidden_ids = {id(f) for f in hidden}
    shown = [f for f in report.findings if id(f) not in hidden_ids]
    groups: dict[tuple[bool, str], list[Finding]] = {}
    for f in shown:
        where = _display_file(report, f.location.file) if f.location else f"({f.stage})"
        groups.setdefault((not _is_behaviour(f), where), []).append(f)
    lines: list[_Line] = [
        [(f"envkit validate {report.target}", "bold")],
        [(f"lane: {report.lane}", "dim")],
        *([(line, "dim")] for line in (report.digests.lines() if report.digests else [])),
        [],
    ]
    for key in sorted(groups, key=lambda k: (k[0], k[1].startswith("("), k[1])):
        lines.append([(key[1], "bold underline")])
        for f in sorted(
            groups[key],
            key=lambda f: ((f.location.line or 0) if f.location else 0, f.severity.rank, f.code),
        ):
            lines += _finding_lines(f)
        lines.append([])
    plain: list[str] = []
    if hidden:
        plain.append(
            f"{_plural(len(hidden), 'hygiene finding')} folded (generic layout "
            "warnings, not defects; `--show-all` lists them):"
        )
        by_family: dict[str, dict[str, int]] = {}
        for f in sorted(hidden, key=lambda f: f.code):
            fam = FAMILIES.get(f.code[2])
            counts = by_family.setdefault(fam.name if fam else "other", {})
            label = f"{f.code} {f.name}"
            counts[label] = counts.get(label, 0) + 1
        width = max(len(name) for name in by_family)
        for name, counts in by_family.items():
            total = sum(counts.values())
            parts = ", ".join(label + (f" x{n}" if n > 1 else "") for label, n in counts.items())
            plain.append(f"  {name:<{width}}  {total}: {parts}")
        plain.append("")
    plain += _trailer(report)
    plain += _skipped_lines(report, show_all)
    lines += [[(text, "")] if text else [] for text in plain]
    lines.append([(summary_line(report), _SUMMARY_STYLE[report.passed])])
    return lines


def _trailer(report: ValidationReport) -> list[str]:
    """The plain lines between the findings and the summary: checks not run here, the
    launch notes, the runtime stage's assumptions."""
    lines: list[str] = []
    in_repo = [c for c in report.checks if c.status == "skipped" and c.reason.startswith("in-repo")]
    if in_repo:
        lines.append("Not checked here:")
        lines += [f"  {c.code} {c.name}: {c.reason}" for c in in_repo]
        lines.append("")
    if not report.findings:
        lines.append("No findings.")
        lines.append("")
    if report.runtime.launch or report.runtime.notes:
        said = any(
            n.startswith(f"started with the {report.runtime.launch}") for n in report.runtime.notes
        )  # the note adds the ways that exited
        if report.runtime.launch and not said:
            lines.append(f"Server started with the {report.runtime.launch}.")
        lines += [f"Note: {n}" for n in report.runtime.notes]
        lines.append("")
    if report.runtime.assumptions:
        lines.append("The runtime stage ran without a readable manifest and assumed:")
        lines += [f"  - {a}" for a in report.runtime.assumptions]
        lines.append("")
    return lines


def _skipped_lines(report: ValidationReport, show_all: bool) -> list[str]:
    """The checks this run did not evaluate, with the reason of each (``show_all``), else
    their count and how to list them. Deselected rules and those listed as not checked in a
    repository are left out (the user chose them, or they are listed already)."""
    skipped = [
        c
        for c in report.checks
        if c.status == "skipped" and c.reason != DESELECTED and not c.reason.startswith("in-repo")
    ]
    if not skipped:
        return []
    if not show_all:
        line = (
            f"{_plural(len(skipped), 'check')} skipped, each for a reason "
            "(`--show-all` lists them; JSON: `checks[].reason`)."
        )
        return [line, ""]
    return [
        f"Skipped ({len(skipped)}):",
        *(f"  {c.code} {c.name}: {c.reason}" for c in skipped),
        "",
    ]


def render_text(report: ValidationReport, show_all: bool = False) -> str:
    """Behaviour findings (EK4xx/EK5xx) first, then the others grouped by file; generic
    hygiene warnings folded into one line per family with a count unless ``show_all``;
    checks skipped because the environment lives in a repository; the other skipped checks
    counted (listed with their reasons when ``show_all``); one summary line.
    Plain text: what ``--output`` writes and a pipe receives."""
    lines = _text_lines(report, show_all)
    return "\n".join("".join(text for text, _ in line) for line in lines) + "\n"


def render_text_styled(report: ValidationReport, show_all: bool = False) -> Text:
    """The text report as a ``rich.text.Text`` with the same characters as
    :func:`render_text`, styled by severity (:data:`SEVERITY_STYLE`): errors red, warnings
    yellow, infos dim, the summary green or red. A rich console drops the styles itself
    where colour does not belong (not a terminal, ``TERM=dumb``)."""
    out = Text(end="")
    for line in _text_lines(report, show_all):
        for text, style in line:
            out.append(text, style=style or None)
        out.append("\n")
    return out


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(report: ValidationReport) -> str:
    """GitHub Actions workflow commands, one annotation per finding, then a notice with the
    summary. Severity: error -> ``::error``, warning -> ``::warning``, info -> ``::notice``."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for f in report.findings:
        props = []
        if f.location:
            props.append(f"file={_gh_prop(_display_file(report, f.location.file))}")
            if f.location.line is not None:
                props.append(f"line={f.location.line}")
                if f.location.column is not None:
                    props.append(f"col={f.location.column}")
        props.append(f"title={_gh_prop(f'{f.code} {f.name}')}")
        msg = f.message + (f" Fix: {f.fix}" if f.fix else "")
        out.append(f"::{level[f.severity]} {','.join(props)}::{_gh_data(msg)}")
    if report.digests is not None:
        out.append(
            f"::notice title=envkit validate versions::{_gh_data(', '.join(report.digests.lines()))}"
        )
    out.append(
        f"::notice title=envkit validate ({report.lane} lane)::{_gh_data(summary_line(report))}"
    )
    return "\n".join(out) + "\n"


def render_junit(report: ValidationReport) -> str:
    """JUnit XML (``junit-xml``): one test suite per stage, one test case per check; a check
    fails on an error finding, warnings and infos go to its system-out."""
    suites: dict[str, list[TestCase]] = {}
    for c in report.checks:
        fam = FAMILIES.get(c.code[2])
        family = fam.name if fam else "other"
        case = TestCase(
            f"{c.code} {c.name}", classname=f"envkit.validate.{c.stage}.{family}", elapsed_sec=None
        )
        errors = [f for f in c.findings if f.severity is Severity.ERROR]
        others = [f for f in c.findings if f.severity is not Severity.ERROR]
        if c.status == "skipped":
            case.add_skipped_info(c.reason or NOT_EVALUATED)
        elif errors:
            case.add_failure_info(
                message="; ".join(f.message for f in errors)[:500],
                output="\n".join(f"{f.location or '-'}: {f.message} Fix: {f.fix}" for f in errors),
                failure_type=c.name,
            )
        if others:
            case.stdout = "\n".join(
                f"{f.severity.value}: {f.location or '-'}: {f.message}" for f in others
            )
        suites.setdefault(c.stage, []).append(case)
    props = {"lane": report.lane} | {
        k: v for k, v in (report.digests or Digests()).to_dict().items() if v is not None
    }
    ts = [
        TestSuite(f"envkit validate ({stage})", cases, package="envkit", properties=props)
        for stage, cases in suites.items()
    ]
    return to_xml_report_string(ts, encoding="utf-8")


def render(report: ValidationReport, fmt: str, show_all: bool = False) -> str:
    """Render ``report`` in one of :data:`FORMATS`. ``show_all`` expands the hygiene
    findings the text format folds; the other formats always carry every finding."""
    if fmt == "text":
        return render_text(report, show_all=show_all)
    return {"json": render_json, "github": render_github, "junit": render_junit}[fmt](report)


# -- rule documentation ------------------------------------------------------------------------
def rules_markdown(rules: list[Rule] | None = None) -> str:
    """docs/rules.md: every registered rule, grouped by family. Headings are
    ``## EK503 reward-out-of-range`` so GitHub's anchors match :attr:`Rule.url`.
    Regenerate with ``envkit rules --format markdown > docs/rules.md``."""
    rules = sorted(rules if rules is not None else RULES.values(), key=lambda r: r.code)
    out = [
        "# envkit validate rules",
        "",
        "<!-- Generated by `envkit rules --format markdown > docs/rules.md`; do not edit. -->",
        "",
        (
            "Codes are stable and never reused. Select, ignore and re-grade them with "
            "`--select`, `--ignore` and `[tool.envkit.validate]` in pyproject.toml; "
            "`envkit validate --explain CODE` prints one rule."
        ),
        "",
    ]
    for digit, family_of in FAMILIES.items():
        family = family_of.name
        fam = [r for r in rules if r.code[2] == digit]
        if not fam:
            continue
        out += [
            f"# EK{digit}xx {family}",
            "",
            "| code | name | severity | summary |",
            "|---|---|---|---|",
        ]
        out += [
            f"| [{r.code}](#{r.code.lower()}-{r.name}) | {r.name} | {r.severity.value} | "
            f"{r.summary.replace('|', '&#124;')} |"
            for r in fam
        ]
        out.append("")
        for r in fam:
            extra = (f" · *RFC 008:* `{r.rfc008}`" if r.rfc008 else "") + (
                " · *hygiene* (folded in the text report)" if r.hygiene else ""
            )
            out += [
                f"## {r.code} {r.name}",
                "",
                f"*Severity:* {r.severity.value} · *stage:* {r.stage} · *family:* {family}{extra}",
                "",
                r.summary,
                "",
                f"**What it checks.** {r.what}",
                "",
                f"**Why it matters.** {r.why}",
                "",
                f"**Example.** {r.example}",
                "",
                f"**Fix.** {r.fix}",
                "",
            ]
            if r.limits:
                out += [f"**Known limits.** {r.limits}", ""]
            if r.reported_as:
                out += [f"**Reported instead by.** {', '.join(r.reported_as)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def rules_table(rules: list[Rule] | None = None) -> list[dict[str, Any]]:
    """Every rule as a JSON-ready dict (``envkit rules --format json``)."""
    rules = sorted(rules if rules is not None else RULES.values(), key=lambda r: r.code)
    return [
        {
            "code": r.code,
            "name": r.name,
            "severity": r.severity.value,
            "family": r.family,
            "stage": r.stage,
            "summary": r.summary,
            "url": r.url,
            "hygiene": r.hygiene,
            "rfc008": r.rfc008,
            "limits": r.limits,
            "reported_as": list(r.reported_as),
            "classes": list(r.classes),
        }
        for r in rules
    ]


def rfc008_table(rules: list[Rule] | None = None) -> list[dict[str, Any]]:
    """RFC 008's 34 local-lane check ids with the envkit rules that implement each and
    whether ``openenv validate`` 0.10 grades it (``envkit rules --rfc008``).

    Returns:
        One dict per id, in the policy's order: ``check_id`` (``runtime.seed_control``),
        ``level`` (``static``, ``runtime`` or ``semantic``), ``envkit`` (codes, sorted) and
        ``openenv_0_10`` (bool). Source: openenv 0.10.0's ``severity-v2`` policy and the
        graders its runner registers (:data:`envkit.findings.RFC008_OPENENV_010`).
    """
    rules = sorted(rules if rules is not None else RULES.values(), key=lambda r: r.code)
    return [
        {
            "check_id": cid,
            "level": cid.split(".", 1)[0],
            "envkit": [r.code for r in rules if r.rfc008 == cid],
            "openenv_0_10": cid in RFC008_OPENENV_010,
        }
        for cid in RFC008_LOCAL
    ]
