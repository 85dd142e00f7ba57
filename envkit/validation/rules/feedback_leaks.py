"""EK522 feedback leaks the answer: text first shown after a wrong answer earns the maximum
when sent as the answer."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from envkit.findings import Severity, register
from envkit.validation.engine import EPS, is_number
from envkit.validation.probing import CODE_FIELD, Probes, field_schema, fits, fmt, text_fields
from envkit.validation.rules import integrity

FEEDBACK_LEAKS = register(
    "EK522",
    "feedback-leaks-answer",
    Severity.WARNING,
    summary="Text an observation first shows after a wrong answer (the expected value, a "
    "hidden test) earns the maximum when sent as the answer.",
    what="In the episodes envkit played on the seeds the oracle wins, it collects the text "
    "an observation shows for the first time after a step that did not win (whole "
    "string fields, the text after `expected`/`the answer was`/`should be`, quoted "
    "parts, numbers), leaving out what earlier observations showed and what the agent "
    "sent. Each, sent as the oracle's one text answer at the same point of a fresh "
    "episode of the same seed, must not earn `hi` of `validation.reward.range` (at most "
    "12 texts, shortest first; terminal observations are left out when EK509 already "
    "reported a leak). Heuristic: feedback meant to teach (a tutoring task whose reward discounts later "
    "attempts) is reported too.",
    why="A policy that can read the answer after failing once learns to fail on purpose "
    "and copy it (within the episode when attempts remain, or across episodes of the "
    "same seed), instead of solving the task.",
    example="`feedback=f'Wrong: the expected answer was {target}.'` on the first of three "
    "attempts.",
    fix="Say whether the answer was right (and how close) without the expected value; show "
    "failing test inputs, not expected outputs, or only after the episode ends.",
)


QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`")
#: "expected 73", "the answer was: Paris", "should be 4.5" (the text after them, to the end of
#: the clause).
AFTER_CUE = re.compile(
    r"(?:expected(?: answer| value| output)?|(?:correct )?answer|solution|should (?:be|return))"
    r"(?:\s+(?:is|was))?\s*[:=]?\s*([^\s;,.!?][^;\n]{0,120}?)\s*(?:[;\n]|[.!?](?:\s|$)|$)",
    re.IGNORECASE,
)
#: A number in running text (a full stop after it ends the sentence).
LEAK_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")
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
    sent action held: new string leaves whole, the text after a cue (``expected``, ``the
    answer was``), quoted parts and numbers of them; shortest first."""
    known = "\n".join(s for obs in before for s in _strings(obs))
    out: list[str] = []
    for text in _strings(after):
        if not text.strip() or text in known:
            continue
        parts = [text.strip()]
        parts += [m.group(1).strip() for m in AFTER_CUE.finditer(text)]
        parts += [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]
        parts += [m.group() for m in LEAK_NUMBER.finditer(text)]
        for part in parts:
            if part and part not in known and part not in sent and part not in out:
                out.append(part)
    return sorted(out, key=len)


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
        engine.add(
            FEEDBACK_LEAKS,
            f"What an observation shows after a wrong answer should not be the answer; "
            f"with seed {e['seed']}, `{fmt(e['sent'])}` first appeared after a step that did "
            f"not win, and sent as `{e['field']}` in a fresh episode of the same seed it "
            f"earned the maximum {e['reward']:g} ({len(found)} of {tried} such text(s)). A "
            "policy learns to fail once and copy the feedback. This could be wrong when the "
            "feedback is meant to teach (a tutoring task) and the reward discounts a second "
            "attempt.",
            cases=found,
        )
