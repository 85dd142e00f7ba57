"""The field corpus: defects drawn from failure classes published outside envkit, reading and
playing them.

``tests/corpus/field/<class-slug>/<defect_NAME | nearmiss_NAME>/`` is a small real OpenEnv 0.10
environment written by someone given only an external failure class (a BGW entry of bohrin's
weakness list with its sources, a Terminal Wrench category, an rl-envdoctor policy, a paper's
example) and OpenEnv's protocol: never an envkit rule, its description or its code. Its
``case.toml`` holds ``kind`` (``defect`` or ``nearmiss``), ``external`` (the class, e.g.
``BGW-119``, ``TerminalWrench:keyword-gaming``, ``rl-envdoctor:empty-answer-tag``), ``source``
(a URL), ``mechanism`` and, added only by whoever triages the case after envkit has played it,
``code`` (the code envkit reported; empty or absent when it missed).

A case plays as a user runs envkit: every runtime rule (EK4xx, EK5xx). A defect must be
reported by a finding at warning or above (by ``code`` when it is set); a near-miss must get no
runtime error. The cases envkit misses are named in :data:`KNOWN_MISSES`, the near-misses it
reports anyway in :data:`KNOWN_NOISE`, each with the reason, so the suite stays green while
bench/field.py reports the figure.
"""

from __future__ import annotations

import re
import shutil
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.corpus.corpus import JOBS, servers_without_gradio

FIELD = Path(__file__).parent / "field"
#: ``--timeout`` of a field case's second play (its first was cut short): six times
#: validate's default, so every stage and the reward-design probes (a third of what is left,
#: :func:`envkit.validation.probing.probes_budget_s`) get six times the time. A grader that
#: gives each submission 30 s spends that much on every hanging hack: played alone,
#: bgw-108's near-miss needed 176 s of probes for its whole schedule.
RETRY_TIMEOUT_S = 3600.0
KINDS = ("defect", "nearmiss")
RUNTIME = ("EK4", "EK5")  # the rules a field case is played with: every runtime rule
_EXTERNAL = re.compile(r"BGW-1\d\d|[A-Za-z][\w.-]*:[a-z0-9][a-z0-9-]*")

_WRONG_PROGRAM = (
    "a plausible but wrong program passes the grader's tests; envkit's wrong programs are "
    "one-change mutants of the oracle's Python source (EK526), reported only when paid like "
    "the oracle"
)

#: case (``class-slug/case``) -> why envkit reports no finding on this defect yet.
KNOWN_MISSES: dict[str, str] = {
    "bgw-120-tests-too-narrow/defect_topo_order": "a correct answer in another valid order "
    "earns 0; envkit has no second correct solution to try (it plays the reference oracle)",
    "bgw-121-specification-contradicts-tests/defect_median_rule": "the grader expects a rule "
    "other than the prompt's; only a second solution written from the prompt shows it",
    "bgw-122-partial-credit-rewards-wrong-approach/defect_greedy_coins": _WRONG_PROGRAM
    + " (greedy is another algorithm, and it earns partial credit, not the oracle's)",
    "bgw-124-reference-solution-wrong/defect_factorial_zeros": "the oracle is the wrong "
    "reference itself; envkit trusts the declared oracle",
    "bgw-136-execution-equivalence-one-database/defect_dept_average": _WRONG_PROGRAM
    + " (here a wrong SQL query, which envkit does not mutate)",
    "twrench-keyword-gaming/defect_incident_cause_keywords": "a report listing every "
    "cause phrase is paid; the phrases are in no observation the policies read before "
    "they answer, and no policy gathers phrases from tool results into one report",
}

#: near-miss case -> why envkit reports a runtime error on it anyway (a false finding).
KNOWN_NOISE: dict[str, str] = {
    "bgw-114-shared-state-tampered-through-a-side-channel/nearmiss_verdict_cache_in_server_"
    "memory": "the feedback says whether the verdict came from the server's memo, so the "
    "same seed and actions read differently after an earlier episode (EK411); the reward "
    "is the same",
    "bgw-128-aggregation-defect/nearmiss_repeat_hits": "each step pays at most 0.25 while "
    "`reward.range` says [0, 1]; envkit measures the oracle by its best step reward "
    "against the range, which RFC 008 checks per step (EK506 says to lower `hi`)",
}


@dataclass(frozen=True)
class FieldCase:
    klass: str  # the class slug (its folder)
    name: str  # the case's folder
    kind: str  # "defect" or "nearmiss"
    external: str  # the external class id, e.g. "BGW-119"
    source: str
    mechanism: str
    code: str  # the code triage assigned ("" until triaged, or when envkit missed it)
    path: Path

    @property
    def key(self) -> str:
        return f"{self.klass}/{self.name}"


def field_cases(root: Path = FIELD) -> list[FieldCase]:
    """Every field case under ``root``, sorted by class then case."""
    found = []
    for toml in sorted(root.glob("*/*/case.toml")):
        meta = tomllib.loads(toml.read_text(encoding="utf-8"))
        found.append(
            FieldCase(
                klass=toml.parent.parent.name,
                name=toml.parent.name,
                kind=str(meta.get("kind", "")),
                external=str(meta.get("external", "")),
                source=str(meta.get("source", "")),
                mechanism=str(meta.get("mechanism", "")),
                code=str(meta.get("code", "") or ""),
                path=toml.parent,
            )
        )
    return found


def problems(case: FieldCase) -> list[str]:
    """What is wrong with ``case``'s layout or ``case.toml`` (empty when it is well formed)."""
    out = []
    if case.kind not in KINDS:
        out.append(f"kind {case.kind!r} is not one of {KINDS}")
    elif not case.name.startswith(f"{case.kind}_"):
        out.append(f"a {case.kind}'s folder starts with `{case.kind}_`")
    if not _EXTERNAL.fullmatch(case.external):
        out.append(f"external {case.external!r} is not a class id (BGW-1xx, SOURCE:slug)")
    if not case.source.startswith(("http://", "https://", "arXiv:", "arxiv:")):
        out.append(f"source {case.source!r} is not a URL")
    if not case.mechanism.strip():
        out.append("mechanism is empty")
    if case.code and not re.fullmatch(r"EK[45]\d\d", case.code):
        out.append(f"code {case.code!r} is not a runtime rule's code")
    for part in ("openenv.yaml", "server/__init__.py", "server/app.py"):
        if not (case.path / part).is_file():
            out.append(f"{part} is missing")
    return out


@dataclass(frozen=True)
class Played:
    """What envkit reported on a case.

    Attributes:
        codes: ``{code: severity}`` of its runtime findings.
        out_of_time: what the time left unplayed in the last play (the report's
            ``runtime.out_of_time``); empty when the whole schedule played.
        tries: plays (2 when the first ran out of time).
    """

    codes: dict[str, str]
    out_of_time: tuple[str, ...] = ()
    tries: int = 1

    @property
    def loud(self) -> set[str]:
        """Codes reported at warning or above (EK430, a check of envkit's own that crashed,
        says nothing about the environment)."""
        return {c for c, sev in self.codes.items() if sev in ("error", "warning")} - {"EK430"}

    @property
    def errors(self) -> set[str]:
        return {c for c, sev in self.codes.items() if sev == "error"} - {"EK430"}


def verdict(case: FieldCase, played: Played) -> str:
    """``found`` (by the triaged code, or by any finding when none is set; a finding stands
    even when the time cut the schedule short), else ``timed out`` when it was cut short (no
    verdict: what was not played might have reported it, or might have been noise), else
    ``other`` (a triaged defect reported by other codes only), ``missed``; ``quiet`` or
    ``noise`` for a near-miss."""
    if case.kind == "defect" and _found(case, played):
        return "found"
    if played.out_of_time:
        return "timed out"
    if case.kind == "nearmiss":
        return "noise" if played.errors else "quiet"
    return "other" if case.code and played.loud else "missed"


def _found(case: FieldCase, played: Played) -> bool:
    return case.code in played.loud if case.code else bool(played.loud)


def play(case: FieldCase, workdir: Path, python: str, timeout_s: float | None = None) -> Played:
    """Validate a copy of ``case`` with every runtime rule selected (validate's defaults
    otherwise, ``timeout_s`` its ``--timeout``). Call it inside
    :func:`tests.corpus.corpus.servers_without_gradio`."""
    from envkit.validation import validate

    suffix = "" if timeout_s is None else "__retry"
    copy = workdir / f"field__{case.key.replace('/', '__')}{suffix}"
    shutil.copytree(case.path, copy)
    report = validate(
        copy, python=python, select=list(RUNTIME), train_path=False, timeout_s=timeout_s
    )
    return Played(
        {f.code: f.severity.value for f in report.findings}, tuple(report.runtime.out_of_time)
    )


def play_all(
    chosen: list[FieldCase], workdir: Path, python: str, jobs: int = JOBS
) -> Iterator[tuple[FieldCase, Played | BaseException, float]]:
    """Play ``chosen``, ``jobs`` at once, and yield ``(case, what envkit reported or the
    exception it raised, seconds)``: first each case that has a verdict (:func:`verdict`), in
    ``chosen``'s order; then each case whose schedule the time cut short, played again alone
    with :data:`RETRY_TIMEOUT_S` (``tries=2``). A code grader that runs
    pytest on every step, played beside other cases on a busy machine, can spend the
    reward-design probes' whole budget before the last probe; a schedule cut short is no
    verdict, never "found nothing", and played alone it gets the machine the others had."""

    def one(
        case: FieldCase, timeout_s: float | None = None
    ) -> tuple[Played | BaseException, float]:
        t0 = time.perf_counter()
        try:
            found: Played | BaseException = play(case, workdir, python, timeout_s)
        except Exception as exc:  # noqa: BLE001 - reported by the caller, per case
            found = exc
        return found, time.perf_counter() - t0

    again: list[tuple[FieldCase, float]] = []
    with servers_without_gradio():
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for case, (found, secs) in zip(chosen, pool.map(one, chosen), strict=True):
                if isinstance(found, Played) and verdict(case, found) == "timed out":
                    again.append((case, secs))
                else:
                    yield case, found, secs
        for case, secs in again:
            found, more = one(case, RETRY_TIMEOUT_S)
            if isinstance(found, Played):
                found = Played(found.codes, found.out_of_time, tries=2)
            yield case, found, secs + more
