"""EK522 feedback leaks the answer: text first shown after a wrong answer earns the maximum
when sent as the answer."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from envkit.envdir.pysource import literal_value
from envkit.findings import Severity, register
from envkit.validation.engine import EPS, is_number
from envkit.validation.probing import CODE_FIELD, Probes, field_schema, fits, fmt, text_fields
from envkit.validation.reveal import text_parts
from envkit.validation.rules import grader_hacks, integrity

FEEDBACK_LEAKS = register(
    "EK522",
    "feedback-leaks-answer",
    Severity.WARNING,
    summary="Text an observation first shows after a wrong answer (the expected value, a "
    "hidden test) earns the maximum when sent as the answer.",
    what="In the episodes envkit played on the seeds the oracle wins, it collects the text "
    "an observation shows for the first time after a step that did not win (string fields "
    "whose value no earlier field had, whole: a one-letter `correct_choice` counts though "
    "every option holds the letter; the text after `expected`/`the answer was`/`should "
    "be`, quoted parts and numbers, when no earlier text holds them), leaving out what the "
    "agent sent. Each, sent as the oracle's one text answer at the same point of a fresh "
    "episode of the same seed, must not earn `hi` of `validation.reward.range` (at most "
    "12 texts, shortest first). When the answer is source code (EK521's source field), the "
    "tests that text quotes with their expected value (`solve([1, 2]) returned None, "
    "expected 5`) become a lookup table (the oracle's function answering each quoted "
    "input with its expected value), sent the same way; it must not earn `hi` either. "
    "Terminal observations are left out when EK509 already reported a leak (a reveal at "
    "the end, reused by the next episode of the seed, is EK509's). Heuristic: feedback "
    "meant to teach (a tutoring task whose reward discounts later attempts) is reported "
    "too.",
    why="A policy that can read the answer after failing once learns to fail on purpose "
    "and copy it (within the episode when attempts remain, or across episodes of the "
    "same seed), instead of solving the task.",
    example="`feedback=f'Wrong: the expected answer was {target}.'` on the first of three "
    "attempts.",
    fix="Say whether the answer was right (and how close) without the expected value; show "
    "failing test inputs, not expected outputs, or only after the episode ends.",
    limits="A reveal in the terminal observation of a lost episode, reused by the next episode "
    "of the seed, is EK509's (solution-leak). Quoted hidden tests become a lookup table only "
    "when their arguments and expected values are Python literals on one line.",
    reported_as=("EK509",),
    classes=("BGW-105", "BGW-115"),
)


MAX_LEAK_TRIES = 12  # candidate answers replayed, all seeds together


def _strings(value: object) -> list[str]:
    """Every string leaf of an observation (``metadata`` included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def revealed(before: Sequence[object], after: object, sent: list[str]) -> list[str]:
    """Candidate answers in ``after`` that no observation in ``before`` showed and no
    sent action held, shortest first: new string leaves whole (a leaf is new when no earlier
    leaf had the same text: a one-letter ``correct_choice`` is new although the letter is in
    every option's text), and the parts of them :func:`reveal.text_parts` finds (the text
    after a cue, quoted parts, numbers) that no earlier text contains."""
    leaves = {s.strip() for obs in before for s in _strings(obs)}
    known = "\n".join(s for obs in before for s in _strings(obs))
    out: list[str] = []
    for text in _strings(after):
        whole = text.strip()
        if not whole or whole in leaves:
            continue
        if whole not in sent and whole not in out:
            out.append(whole)
        for part in text_parts(text):
            if part not in known and part not in sent and part not in out:
                out.append(part)
    return sorted(out, key=len)


def quoted_tests(text: str, func: str) -> list[tuple[tuple[Any, ...], Any]]:
    """The tests ``text`` quotes with their expected value, as ``(args, expected)``: lines
    like ``solve([1, 2]) returned None, expected 5``, ``solve(3): expected 9, got 6`` or
    ``assert solve(2) == 4``, the arguments and the value Python literals; other lines are
    left out."""
    name = re.escape(func)
    after_call = rf"\b{name}\((?P<args>.*?)\)"
    forms = (
        re.compile(after_call + r".*?\bexpected\s*:?\s*(?P<want>.+?)\s*$", re.IGNORECASE),
        re.compile(after_call + r"\s*==\s*(?P<want>.+?)\s*$"),
    )
    out: list[tuple[tuple[Any, ...], Any]] = []
    for line in text.splitlines():
        for form in forms:
            m = form.search(line)
            if m is None:
                continue
            want = _literal(m.group("want"))
            args = _literal(f"({m.group('args')},)") if m.group("args").strip() else ()
            if want is not _NOT and isinstance(args, tuple):
                out.append((args, want))
                break
    return out


_NOT = object()


def _literal(text: str) -> object:
    """``text`` as a Python literal, trying it whole then cut at ``, got``/``, but``/a final
    full stop; :data:`_NOT` when none parses."""
    tries = [text, re.split(r",\s*(?:but\s+)?(?:got|returned|was)\b", text)[0]]
    tries += [t.rstrip(" .") for t in tries]
    for t in tries:
        try:
            return literal_value(t.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return _NOT


def lookup_source(func: str, tests: list[tuple[tuple[Any, ...], Any]]) -> str:
    """A program that solves nothing: ``func`` answers each quoted test's arguments with
    its expected value from a table (keyed by the arguments' ``repr``), ``None`` otherwise."""
    table = {repr(args): want for args, want in tests}
    return (
        f"_ANSWERS = {table!r}\n\n\n"
        f"def {func}(*args, **kwargs):\n"
        "    return _ANSWERS.get(repr(args))\n"
    )


def _tables(probes: Probes, terminal_judged: bool) -> list[tuple[int | None, str, str, int]]:
    """Per seed the oracle wins with a source-code field (EK521's), the lookup table
    (:func:`lookup_source`) of every test the observations quote with its expected value
    after a step that did not win: ``(seed, field, source, tests)``."""
    name = grader_hacks.source_field(probes)
    if name is None:
        return []
    tests: dict[int | None, dict[str, tuple[tuple[Any, ...], Any]]] = {}
    funcs: dict[int | None, str] = {}
    for ep in list(probes.engine.episodes):
        win = probes.wins.get(ep.seed)
        if win is None or ep.policy == "oracle" or ep.policy.startswith("probe:"):
            continue
        source = win.actions[-1].get(name)
        if not isinstance(source, str):
            continue
        m = grader_hacks.FUNCTION.search(source)
        funcs[ep.seed] = func = m.group(1) if m else "solve"
        obs = ep.observations()
        for i, res in enumerate(ep.steps):
            if is_number(res.reward) and res.reward >= probes.engine.settings.hi - EPS:
                break
            if res.done and terminal_judged:
                continue
            for text in revealed(obs[: i + 1], res.observation, []):
                for args, want in quoted_tests(text, func):
                    tests.setdefault(ep.seed, {}).setdefault(repr(args), (args, want))
    return [
        (seed, name, lookup_source(funcs[seed], list(got.values())), len(got))
        for seed, got in tests.items()
        if got
    ]


def feedback_leaks(probes: Probes) -> None:
    """EK522: text that first appears in an observation after a step that did not win,
    sent as the oracle's answer in a fresh episode of the same seed (single-text-field
    answers), must not earn the maximum."""
    engine, settings = probes.engine, probes.engine.settings
    tries: list[tuple[int | None, str, str]] = []  # (seed, field, candidate)
    terminal_judged = engine.has(integrity.SOLUTION_LEAK)
    for ep in list(engine.episodes):
        win = probes.wins.get(ep.seed)
        if win is None or ep.policy == "oracle" or ep.policy.startswith("probe:leak"):
            continue
        fields = [f for f in text_fields(probes, win.actions[-1]) if not CODE_FIELD.search(f)]
        if len(fields) != 1:
            continue
        obs = ep.observations()
        for i, res in enumerate(ep.steps):
            if is_number(res.reward) and res.reward >= settings.hi - EPS:
                break  # a won step reveals nothing that was hidden
            if res.done and terminal_judged:
                continue  # EK509 already reported what a terminal observation gives away
            sent = [v for a in ep.actions[: i + 1] for v in _strings(a)]
            for cand in revealed(obs[: i + 1], res.observation, sent):
                if fits(field_schema(probes, fields[0]), cand):
                    tries.append((ep.seed, fields[0], cand))
    seen: set[tuple[Any, str]] = set()
    found: list[dict[str, Any]] = []
    tried = 0
    for seed, name, source, count in _tables(probes, terminal_judged)[:2]:
        if not probes.time_left("feedback leak probe"):
            return
        win = probes.wins[seed]
        ep = probes.play(seed, win.actions[:-1] + [{**win.actions[-1], name: source}], "probe:leak")
        tried += 1
        paid = ep.rewards[-1] if len(ep.steps) == len(win.steps) else None
        if is_number(paid) and paid >= settings.hi - EPS:
            what = f"a lookup table of those {count} test(s)"
            found.append(
                {"seed": seed, "field": name, "sent": source, "what": what, "reward": paid}
            )
    for seed, name, cand in sorted(tries, key=lambda t: len(t[2])):
        if (seed, cand) in seen or tried >= MAX_LEAK_TRIES:
            continue
        if not probes.time_left("feedback leak probe"):
            return  # judged only when every text was replayed
        seen.add((seed, cand))
        win = probes.wins[seed]
        ep = probes.play(seed, win.actions[:-1] + [{**win.actions[-1], name: cand}], "probe:leak")
        tried += 1
        paid = ep.rewards[-1] if len(ep.steps) == len(win.steps) else None
        if is_number(paid) and paid >= settings.hi - EPS:
            found.append({"seed": seed, "field": name, "sent": cand, "reward": paid})
    if not probes.wins:
        return  # no oracle win to replay a text against
    engine.ran(FEEDBACK_LEAKS)  # nothing revealed after a wrong answer: nothing leaks
    if found:
        e = found[0]
        sent = (
            f"`{fmt(e['sent'])}` first appeared after a step that did not win, and sent"
            if "what" not in e
            else "tests and their expected values were quoted after a step that did not win, "
            f"and {e['what']}, sent"
        )
        engine.add(
            FEEDBACK_LEAKS,
            f"What an observation shows after a wrong answer should not be the answer; "
            f"with seed {e['seed']}, {sent} as `{e['field']}` in a fresh episode of the same seed it "
            f"earned the maximum {e['reward']:g} ({len(found)} of {tried} such text(s)). A "
            "policy learns to fail once and copy the feedback. This could be wrong when the "
            "feedback is meant to teach (a tutoring task) and the reward discounts a second "
            "attempt.",
            cases=found,
        )
