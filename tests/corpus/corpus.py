"""The independent corpora of envkit's runtime rules: reading and playing them.

``tests/corpus/<rule-name>/<case>/`` is a small real OpenEnv 0.10 environment written from the
rule's one-paragraph description by someone who had not read the rule's code: ``case.toml``
says whether it is a ``defect`` (the rule must report it) or a ``nearmiss`` (it looks like the
defect but is correct: the rule must stay quiet) and by which mechanism. A rule must find at
least :data:`MIN_CAUGHT` of its defects; the ones it misses are named in :data:`KNOWN_MISSES`
(and in the rule's docs as known limits) until a probe catches them.
"""

from __future__ import annotations

import os
import shutil
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import path_without_gradio

HERE = Path(__file__).parent
MIN_CAUGHT = 4  # of each rule's defects (at least 5)

#: case directory (``rule-name/case``) -> why no rule reports it yet.
KNOWN_MISSES: dict[str, str] = {
    "no-training-signal/defect_format_gated_partial_credit": (
        "the oracle's tags with a wrong number (a near miss of the oracle, counted as a weak "
        "policy) earn the closeness credit; a prompt that does not state the tags looks the same"
    ),
    "oracle-below-max/defect_weighted_sum_float_rounding": (
        "0.7 + 0.2 + 0.1 = 0.9999999999999999 is within envkit's float tolerance (judged equal)"
    ),
    "reward-ignores-action/defect_reward_from_pre_move_state": (
        "the reward follows the previous action: rewards vary with the actions played, one "
        "step late"
    ),
    "answer-in-state/defect_state_row_label_index": (
        "the answer as an option index (`label: 2`) beside letter answers: neither named as an "
        "answer nor submitted in the answer's form"
    ),
    "format-over-correctness/defect_json_rubric_weighted": (
        "the wrong-value variant rewrites the JSON keys too, which the rubric pays less"
    ),
    "brittle-verifier/defect_unicode_not_normalized": (
        "no variation envkit tries changes the Unicode form (NFC vs NFD)"
    ),
    "observation-grows/defect_score_curve_in_obs": (
        "+5 bytes a step beside a question over 8 steps: the observation grows by 40 %, as the "
        "guess template's list of earlier guesses does"
    ),
    "stalling-pays/defect_shaping_not_potential": (
        "shaping paid for moving closer and not taken back for moving away: no policy tried "
        "steps away and back"
    ),
    "memory-grows-per-reset/defect_module_replay_log": (
        "about 2 KB kept per reset: under the 8 KB a reset the probe counts"
    ),
}

#: near-miss case -> why its rule reports it anyway (a false finding still to remove).
KNOWN_NOISE: dict[str, str] = {
    "brittle-verifier/nearmiss_camelcase_exact_on_purpose": (
        "the task asks for an exact lowerCamelCase identifier: case-exact on purpose, and EK516 "
        "cannot tell"
    ),
}

#: case directory -> (the codes that report it instead of its rule, why): the defect is
#: reported by a rule its own rule's documentation names for it (``Rule.reported_as``, with
#: the case in its known limits). It counts as reported instead, apart from the rule's own
#: catches: a rule meets :data:`MIN_CAUGHT` with its own code only.
REPORTED_AS: dict[str, tuple[tuple[str, ...], str]] = {
    "reward-hackable/defect_http_step_fresh_empty": (
        ("EK510",),
        "a never-reset instance pays: fresh-instance-pays, not a degenerate policy",
    ),
    "feedback-leaks-answer/defect_reference_in_metadata_after_loss": (
        ("EK509",),
        "a terminal reveal reused by the seed's next episode is solution-leak's",
    ),
    "seed-ignored/defect_instance_randomstate_seed_recorded": (
        ("EK411", "EK412"),
        "episodes are random under one seed",
    ),
    "seed-ignored/defect_seeds_wrong_library": (
        ("EK411", "EK412"),
        "episodes are random under one seed",
    ),
    "rewards-not-deterministic/defect_illegal_move_random_fallback": (
        ("EK411",),
        "the random fallback move shows in the observation (EK411); rewards differ in some runs",
    ),
    "reward-ignores-action/defect_loop_variable_shadows_answer": (
        ("EK504",),
        "every action earns 1.0: a constant reward",
    ),
    "reward-ignores-action/defect_rubric_arguments_swapped": (
        ("EK504",),
        "every action earns 1.0: a constant reward",
    ),
    "reward-ignores-action/defect_reward_memo_per_seed_step": (
        ("EK504",),
        "the first policy's rewards are cached for every later one: a constant reward",
    ),
    "answer-in-state/defect_state_expected_answer": (
        ("EK509",),
        "the named field scores when submitted: solution-leak, the stronger finding",
    ),
    "answer-in-state/defect_reset_metadata_ground_truth": (
        ("EK509",),
        "the named field scores when submitted: solution-leak, the stronger finding",
    ),
    "answer-in-state/defect_state_extra_solution_word": (
        ("EK509",),
        "the named field scores when submitted: solution-leak, the stronger finding",
    ),
    "answer-in-state/defect_state_accepted_answers_list": (
        ("EK509",),
        "the named field scores when submitted: solution-leak, the stronger finding",
    ),
}

#: rule -> why it finds fewer than MIN_CAUGHT of its corpus under its own code (the gap to
#: close next).
BELOW_TARGET: dict[str, str] = {
    "answer-in-state": (
        "4 of its 5 defects score when the named field is submitted: EK509 reports them, the "
        "stronger finding"
    ),
    "reward-ignores-action": (
        "3 of its 5 defects pay every action alike: EK504 (constant reward) reports them"
    ),
    "seed-ignored": (
        "2 of its 5 defects make episodes random under one seed: EK411/EK412 report them"
    ),
}

#: The whole run's budget of a case's second play, after its first ran out of time (the
#: machine was busy): twice validate's default 600 s, so every stage, and the reward-design
#: probes' third of what is left (:func:`envkit.validation.probing.probes_budget_s`), get
#: twice the time.
RETRY_TIMEOUT_S = 1200.0


@dataclass(frozen=True)
class Case:
    rule: str  # the rule's name (its folder)
    name: str  # the case's folder
    kind: str  # "defect" or "nearmiss"
    code: str  # the rule's code, e.g. "EK505"
    mechanism: str
    path: Path

    @property
    def key(self) -> str:
        return f"{self.rule}/{self.name}"


def cases() -> list[Case]:
    """Every case of every corpus, sorted by rule then case."""
    found = []
    for toml in sorted(HERE.glob("*/*/case.toml")):
        meta = tomllib.loads(toml.read_text(encoding="utf-8"))
        found.append(
            Case(
                rule=toml.parent.parent.name,
                name=toml.parent.name,
                kind=str(meta["kind"]),
                code=str(meta["code"]),
                mechanism=str(meta.get("mechanism", "")),
                path=toml.parent,
            )
        )
    return found


JOBS = int(os.environ.get("ENVKIT_CORPUS_JOBS", "4"))
"""Cases played at once: a case is ~3.5 s of CPU in ~7 s of wall (start-up, reply timeouts),
so a few at a time keep two cores busy."""


@contextmanager
def servers_without_gradio() -> Iterator[None]:
    """``PYTHONPATH`` for the processes validate starts (they inherit this process's
    environment): :data:`tests.helpers.WITHOUT_GRADIO` first (the suite's conftest has put it
    there already; bench/corpus.py runs outside pytest), restored afterwards. Gradio is most
    of a case's cost. Set it around a whole batch of cases, not per case, when cases play on
    several threads."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = path_without_gradio(before)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


@dataclass(frozen=True)
class Played:
    """What validating one case gave.

    Attributes:
        codes: the codes reported (its rule's and its :data:`REPORTED_AS` stand-ins, the
            only ones selected).
        out_of_time: what the time left unplayed in the last play (the report's
            ``runtime.out_of_time``); empty when the whole schedule played.
        tries: plays (2 when the first ran out of time).
    """

    codes: frozenset[str]
    out_of_time: tuple[str, ...] = ()
    tries: int = 1


def play(case: Case, workdir: Path, python: str, timeout_s: float | None = None) -> Played:
    """Validate a copy of ``case`` (runtime stage, only its rule and its :data:`REPORTED_AS`
    stand-ins selected; validate's defaults otherwise, ``timeout_s`` its ``--timeout``) and
    say what it reported and whether the time ran out. The copy keeps the corpus free of
    anything a run writes. Call it inside :func:`servers_without_gradio`."""
    from envkit.validation import validate

    copy = workdir / (case.key.replace("/", "__") + ("" if timeout_s is None else "__retry"))
    shutil.copytree(case.path, copy)
    select = [case.code, *REPORTED_AS.get(case.key, ((), ""))[0]]
    report = validate(copy, python=python, select=select, train_path=False, timeout_s=timeout_s)
    return Played(frozenset(f.code for f in report.findings), tuple(report.runtime.out_of_time))


def play_timed(case: Case, workdir: Path, python: str) -> Played:
    """:func:`play`, and once more with :data:`RETRY_TIMEOUT_S` when the time ran out: a
    schedule cut short is no verdict, so a busy machine never turns a timeout into "found
    nothing" (:func:`verdict` says ``timed out`` when the second play ran out too)."""
    first = play(case, workdir, python)
    if not first.out_of_time:
        return first
    again = play(case, workdir, python, timeout_s=RETRY_TIMEOUT_S)
    return Played(again.codes, again.out_of_time, tries=2)


#: The verdicts of a case, in the order the figures print them.
VERDICTS = ("found", "instead", "missed", "quiet", "noise", "timed out")


def verdict(case: Case, played: Played) -> str:
    """What ``played`` says of ``case``: ``timed out`` (its schedule was cut short twice: no
    verdict), else for a defect ``found`` (its rule's code), ``instead`` (a
    :data:`REPORTED_AS` stand-in's code only) or ``missed``, for a near-miss ``quiet`` or
    ``noise``."""
    if played.out_of_time:
        return "timed out"
    if case.kind == "nearmiss":
        return "noise" if case.code in played.codes else "quiet"
    if case.code in played.codes:
        return "found"
    if played.codes & set(REPORTED_AS.get(case.key, ((), ""))[0]):
        return "instead"
    return "missed"


def timed_out_message(key: str, retry_s: float, out_of_time: tuple[str, ...]) -> str:
    """Why a case has no verdict: the time cut both of its plays short (the second with
    ``--timeout retry_s``), and what it left unplayed."""
    return (
        f"{key} timed out: the time ran out in both plays (the second with --timeout "
        f"{retry_s:g}); not played: {', '.join(out_of_time)}"
    )


def play_all(
    chosen: list[Case], workdir: Path, python: str, jobs: int = JOBS
) -> Iterator[tuple[Case, Played | BaseException, float]]:
    """Play ``chosen`` (``jobs`` at once, each by :func:`play_timed`) and yield ``(case, what
    it gave or the exception it raised, seconds)`` in ``chosen``'s order."""

    def one(case: Case) -> tuple[Case, Played | BaseException, float]:
        t0 = time.perf_counter()
        try:
            found: Played | BaseException = play_timed(case, workdir, python)
        except Exception as exc:  # noqa: BLE001 - reported by the caller, per case
            found = exc
        return case, found, time.perf_counter() - t0

    with servers_without_gradio(), ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(one, chosen)
