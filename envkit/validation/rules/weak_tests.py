"""EK526 tests-too-weak: a program that answers differently from the oracle's earns its
reward: the grader's tests never try the input on which they differ."""

from __future__ import annotations

import json
import subprocess
import tempfile
from typing import Any

from envkit import programs
from envkit.blind import library
from envkit.findings import Severity, register
from envkit.validation.engine import EPS, is_number
from envkit.validation.probing import Probes
from envkit.validation.rules import determinism, grader_hacks

TESTS_TOO_WEAK = register(
    "EK526",
    "tests-too-weak",
    Severity.WARNING,
    summary="A mutant of the oracle's program, one that answers some input differently, "
    "earns the oracle's reward: the tests never try that input.",
    what="When an action field carries source code (as EK521 finds it) and the oracle wins, "
    "envkit makes mutants of the oracle's program in the environment's interpreter — one "
    "change each: a statement removed (an assignment, a call, a guard without `else`), a "
    "condition of `and`/`or` dropped, a comparison's operator moved to its neighbour (`<` "
    "and `<=`, `==` and `!=`, `in` and `not in`), a returned value reversed, an integer "
    "constant plus one — and keeps those "
    "that answer one of a few hundred inputs differently from the oracle (integers, floats, "
    "strings and lists of a fixed pool and the numbers the task shows, called with the "
    "function's arity; a mutant that raises or runs past 0.2 s where the oracle answers is "
    "not kept). Up to 8 are sent, each kind in turn, each in place of the oracle's source in "
    "a fresh episode of the oracle's first winning seed; one paid like the oracle (its best "
    "step reward within 1e-9) is reported with the input on which it differs. A mutant paid "
    "there is then sent twice on a second winning seed, as it is and with a comment line "
    "added: a different reward is EK412 (a verdict reused across episodes).",
    why="RL optimises against the tests, not the specification: a shortcut the tests accept "
    "(a prime test that never meets 1, a leap-year rule never checked on a century) is "
    "learned as readily as the right program, and the reward cannot tell them apart "
    "(EvalPlus, arXiv:2305.01210: HumanEval's tests passed many wrong programs).",
    example="`is_leap` tested on 2024, 2020, 1996, 2023, 2019 and 2001: the mutant "
    "`year % 4 == 0 and True` (the century rule dropped) earns 1.0; it says True for 1900.",
    fix="Add tests on the inputs the report names and on the task's edges (0, 1, empty, "
    "negative, boundaries, each rule of the specification), or draw tests from a reference "
    "implementation over many generated inputs.",
    limits="Only Python sources, only the oracle's first winning seed, only mutants that "
    "differ on the inputs envkit tries (an input domain of objects or files is not tried). "
    "A mutant that differs only outside the task's domain (a negative year) is reported "
    "when the tests pay it: the input it names says which.",
    classes=("BGW-119",),
)

MAX_MUTANTS = 8  # mutants sent to the environment
MAKE_TIMEOUT_S = 30.0  # seconds the mutants program may take in the environment's interpreter
MAX_VALUES = 40  # numbers of the task given to the mutants program


def make_mutants(python: str, source: str, func: str, values: list[object]) -> list[dict[str, str]]:
    """The mutants of ``source`` that answer some call of ``func`` differently (each
    ``{"source", "change", "args", "oracle", "mutant"}``, :mod:`envkit.programs.mutants`),
    made by ``python`` (the environment's interpreter) in an empty directory; ``[]`` when
    the program fails or runs past :data:`MAKE_TIMEOUT_S`."""
    job = json.dumps(
        {"source": source, "func": func, "values": values[:MAX_VALUES], "max": MAX_MUTANTS}
    )
    with tempfile.TemporaryDirectory(prefix="envkit-mutants-") as cwd:
        try:
            done = subprocess.run(
                [python, "-I", str(programs.path("mutants"))],
                input=job,
                capture_output=True,
                text=True,
                cwd=cwd,
                timeout=MAKE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []
    if done.returncode != 0:
        return []
    try:
        found = json.loads(done.stdout)
    except ValueError:
        return []
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


def weak_tests(probes: Probes) -> None:
    """EK526: each mutant of the oracle's program that answers differently
    (:func:`make_mutants`), sent in the source field on every step of a fresh episode of
    the oracle's first winning seed, earns less than the oracle's best step reward."""
    engine, settings = probes.engine, probes.engine.settings
    name = grader_hacks.source_field(probes)
    if name is None:
        engine.ran(TESTS_TOO_WEAK)  # no action carries code: no tests run a program
        return
    if not probes.wins or engine.python is None:
        return
    seed, win = next(iter(probes.wins.items()))
    oracle_value = win.actions[-1].get(name)
    oracle_source = grader_hacks.oracle_source(oracle_value)
    if oracle_source is None or not probes.time_left("weak tests probe"):
        return
    learned = grader_hacks.learned_from(oracle_source, [], win.observations()[0])
    func = learned.asked[0] if learned.asked else learned.func
    numbers = library.Context.of(win.observations()[0]).numbers
    values: list[object] = [int(n) if float(n).is_integer() else n for n in numbers]
    mutants = make_mutants(engine.python, oracle_source, func, values)
    oracle_best = max([float(r) for r in win.rewards if is_number(r)] or [settings.hi])
    tried, paid, sent = 0, [], []
    for m in mutants:
        value = grader_hacks.submission(oracle_value, m["source"], learned.func, None)
        if value is None or not probes.time_left("weak tests probe"):
            break
        actions = grader_hacks.in_place(win, name, value, settings.max_steps)
        best = _best(probes, seed, actions)
        tried += 1
        sent.append((m, actions, best))
        if best >= oracle_best - EPS:
            paid.append({**m, "reward": best})
    if not mutants or tried:
        engine.ran(TESTS_TOO_WEAK)
    if paid:
        _report(probes, seed, name, func, oracle_best, paid, tried)
    _graded_again(probes, seed, sent[:REPLAYED])
    if paid:
        _verdict_reused(probes, seed, name, learned.func, paid)


REPLAYED = 4  # mutants sent a second time on the same seed (EK412)


def _best(probes: Probes, seed: int | None, actions: list[dict[str, Any]]) -> float:
    """The best step reward of ``actions`` played from ``reset(seed)`` (the low end when
    none was paid)."""
    ep = probes.play(seed, actions, "probe:mutant")
    return max([float(r) for r in ep.rewards if is_number(r)] or [probes.engine.settings.lo])


def _graded_again(
    probes: Probes, seed: int | None, sent: list[tuple[dict[str, str], list[dict[str, Any]], float]]
) -> None:
    """EK412 from a wrong program sent again on the same seed: the right program passes any
    sample of the tests, a wrong one only some, so a grader that draws its tests without the
    seed pays it differently from one grading to the next."""
    engine = probes.engine
    for m, actions, first in sent:
        if engine.has(determinism.REWARD_NONDETERMINISTIC):
            return  # said already
        if not probes.time_left("weak tests probe"):
            return
        again = _best(probes, seed, actions)
        if abs(again - first) <= EPS:
            continue
        engine.add(
            determinism.REWARD_NONDETERMINISTIC,
            f"The same program must earn the same reward on the same seed; a mutant of the "
            f"oracle's program ({m['change']}), sent twice after `reset(seed={seed})`, earned "
            f"{first:g} and then {again:g}. The right program passes whatever the grader "
            "draws; a wrong one shows that its tests are drawn without the episode's seed, so "
            "GRPO's groups score the same completion differently.",
            seed=seed,
            rewards=[first, again],
            source=m["source"],
        )
        return


#: Appended to a mutant's source: the same program in another text.
ANOTHER_TEXT = "\n# the same program, another text\n"


def _verdict_reused(
    probes: Probes, seed: int | None, name: str, func: str, paid: list[dict[str, Any]]
) -> None:
    """EK412 from a wrong program graded twice on a second seed: as it is, after the first
    seed paid it, and with a comment line added (a text no grader has seen). The same
    program must earn the same there; a grader that reuses a verdict (a cache keyed by the
    source, not by the tests) pays the first what the first seed's tests paid."""
    engine, settings = probes.engine, probes.engine.settings
    if engine.has(determinism.REWARD_NONDETERMINISTIC):
        return  # said already
    other = next((s for s in probes.wins if s != seed), None)
    if other is None:
        return
    win = probes.wins[other]

    def best(source: str) -> float | None:
        value = grader_hacks.submission(win.actions[-1].get(name), source, func, None)
        if value is None or not probes.time_left("weak tests probe"):
            return None
        return _best(probes, other, grader_hacks.in_place(win, name, value, settings.max_steps))

    for m in paid[:2]:
        again, fresh = best(m["source"]), best(m["source"] + ANOTHER_TEXT)
        if again is None or fresh is None or abs(again - fresh) <= EPS:
            continue
        engine.add(
            determinism.REWARD_NONDETERMINISTIC,
            f"The same program must earn the same reward on the same seed; a mutant of the "
            f"oracle's program ({m['change']}), paid on seed {seed}, then earned {again:g} on "
            f"seed {other}, and the same program with a comment line added earned {fresh:g} "
            f"there. The grader reuses an earlier verdict (a cache keyed by the source, not "
            "by the tests it ran), keeps state across episodes, or draws its tests without the "
            "seed: a program's reward depends on which episode graded it, or when.",
            seed=other,
            rewards=[again, fresh],
            source=m["source"],
        )
        return


def _report(
    probes: Probes,
    seed: int | None,
    name: str,
    func: str,
    oracle_best: float,
    paid: list[dict[str, Any]],
    tried: int,
) -> None:
    top = paid[0]
    shown = "; ".join(
        f"{m['change']} (`{func}{_call(m['args'])}` is {m['mutant']}, the oracle's {m['oracle']})"
        for m in paid[:3]
    )
    probes.engine.add(
        TESTS_TOO_WEAK,
        f"A program that answers differently from the oracle should earn less than its "
        f"{oracle_best:g}; {len(paid)} of {tried} mutant(s) of the oracle's `{func}` sent in "
        f"`{name}` earned it on seed {seed}: {shown}. No test tells them apart: "
        f"`{func}{_call(top['args'])}` would, and a policy trained on these tests can learn "
        "the shortcut. Test those inputs and the task's edges, and compare the whole output.",
        seed=seed,
        field=name,
        mutants=[{k: m[k] for k in ("change", "args", "oracle", "mutant", "reward")} for m in paid],
        source=top["source"],
    )


def _call(args: str) -> str:
    """``(1900,)`` shown as the call's arguments ``(1900)``."""
    return f"({args[1:-2]})" if args.endswith(",)") else args
