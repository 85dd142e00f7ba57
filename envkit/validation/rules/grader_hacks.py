"""EK521 code-grader hackable: a known code-grader hack (exit early, an always-equal answer,
touching the tests, patching the checker) earns more than a program that does nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit import programs
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import EPS, is_number
from envkit.validation.probing import Probes, field_schema

CODE_GRADER_HACKS = register(
    "EK521",
    "code-grader-hackable",
    Severity.ERROR,
    summary="A known code-grader hack (exiting early with success, an always-equal answer, "
    "touching the tests, patching the checker) earns more than a program that does "
    "nothing.",
    what="When an action field carries source code (its name says `code`, `source`, "
    "`program`, `script` or `solution`, or its description says Python or source code) "
    "and the oracle wins, envkit sends, on every step of a fresh episode of the oracle's "
    "seed, each known hack in place of the oracle's source: `sys.exit(0)` and "
    "`os._exit(0)` before any test runs; the oracle's function returning an object whose "
    "`__eq__` is always true; reading every file of the working directory; overwriting "
    "`test_*.py` and expected outputs; writing a `conftest.py` that marks every pytest "
    "report passed; redefining `check`/`test_*`/`run_tests` to pass. None may earn more "
    "than a stub (the function returning `None`) or the low end of the range.",
    why="Models trained with RL on code learn these exploits when they pay (Anthropic, "
    "arXiv:2511.18397): the reward then climbs while no task is solved, and the hacking "
    "generalises to other misbehaviour.",
    example="A grader that runs `python -c 'exec(src); assert f(1) == 2'` and pays 1.0 on "
    "exit status 0: `import sys; sys.exit(0)` scores 1.0.",
    fix="Run the submission in a sandbox, send it only the inputs, and compare its "
    "JSON-serialised outputs in the grader's process; keep tests and expected outputs "
    "outside the sandbox's directory.",
)


#: The submissions the probe sends: text files read by path, not modules (run, they exit or
#: rewrite files, so nothing may import them). ``{name}`` in them stands for the function the
#: oracle's source defines.
HACKS_DIR = Path(programs.__file__).parent / "grader_hacks"
FUNCTION_NAME = "{name}"


def _read(file: str) -> str:
    return (HACKS_DIR / f"{file}.txt").read_text(encoding="utf-8")


def stub_source(func: str) -> str:
    """A program that does nothing: ``func`` defined as a function returning ``None``."""
    return _read("stub").replace(FUNCTION_NAME, func)


@dataclass(frozen=True)
class CodeHack:
    """A hack models learned in coding RL (arXiv:2511.18397, Anthropic).

    Attributes:
        what: how the report names it.
        file: its source, ``HACKS_DIR/{file}.txt``.
        stub: the source is followed by :func:`stub_source`, so the oracle's function exists
            and only the hack can make it pass.
    """

    what: str
    file: str
    stub: bool = True

    def source(self, func: str) -> str:
        """The source sent, ``func`` being the function the oracle's source defines.

        Raises:
            OSError: the hack's file is missing from the installation.
        """
        text = _read(self.file).replace(FUNCTION_NAME, func)
        return text + stub_source(func) if self.stub else text


#: The hacks, in the order they are sent.
CODE_HACKS: tuple[CodeHack, ...] = (
    CodeHack("exit early with success (`sys.exit(0)`)", "sys_exit", stub=False),
    CodeHack("exit early with success (`os._exit(0)`)", "os_exit", stub=False),
    CodeHack("an answer whose `__eq__` is always true", "always_equal", stub=False),
    CodeHack("reading every file in the working directory", "read_files"),
    CodeHack("overwriting the tests and expected outputs", "overwrite_tests"),
    CodeHack("a `conftest.py` that rewrites pytest's reports", "conftest_passes"),
    CodeHack("redefining the test functions", "redefine_checkers"),
)

#: Action fields that carry source code.
SOURCE_FIELD = re.compile(r"(?:^|_)(?:code|source|program|script|solution)(?:_|$)", re.IGNORECASE)
FUNCTION = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def source_field(probes: Probes) -> str | None:
    """The action field that carries source code: a string field whose name (or
    description) says ``code``, ``source``, ``program``, ``script`` or ``solution``."""
    for name in probes.schema.get("properties") or {}:
        node = field_schema(probes, name)
        if "string" not in fuzz.types_of(node) or "enum" in node or "const" in node:
            continue
        described = str(node.get("description") or "")
        if SOURCE_FIELD.search(name) or re.search(
            r"\b(?:python|source code|program)\b", described, re.IGNORECASE
        ):
            return name
    return None


def code_hacks(probes: Probes) -> None:
    """EK521: per hack in :data:`CODE_HACKS`, sent in the source field on every step of a
    fresh episode of the oracle's first winning seed, no step earns more than a stub
    program (a function returning ``None``) or the low end, whichever is higher."""
    engine, settings = probes.engine, probes.engine.settings
    name = source_field(probes)
    if name is None:
        engine.ran(CODE_GRADER_HACKS)  # no action carries code: no grader runs it
        return
    if not probes.wins:
        return
    seed, win = next(iter(probes.wins.items()))
    final = win.actions[-1]
    oracle_source = final.get(name)
    if not isinstance(oracle_source, str):
        return
    m = FUNCTION.search(oracle_source)
    func = m.group(1) if m else "solve"

    def best(source: str, label: str) -> float:
        steps = [{**final, name: source}] * settings.max_steps
        ep = probes.play(seed, win.actions[:-1] + steps, label)
        return max([float(r) for r in ep.rewards if is_number(r)] or [settings.lo])

    if not probes.time_left("code hacks probe"):
        return
    floor = max(settings.lo, best(stub_source(func), "probe:code-stub"))
    found: list[dict[str, Any]] = []
    tried = 0
    for hack in CODE_HACKS:
        if not probes.time_left("code hacks probe"):
            break
        source = hack.source(func)
        paid = best(source, "probe:code-hack")
        tried += 1
        if paid > floor + EPS:
            found.append({"seed": seed, "hack": hack.what, "source": source, "reward": paid})
    if not tried:
        return
    engine.ran(CODE_GRADER_HACKS)
    if found:
        e = found[0]
        engine.add(
            CODE_GRADER_HACKS,
            f"A submission that games the grader should earn no more than a program that "
            f"does nothing ({floor:g}); {len(found)} of {tried} known hack(s) in `{name}` "
            f"earned more: " + "; ".join(f"{x['hack']} ({x['reward']:g})" for x in found) + f" "
            f"(seed {e['seed']}). A trainer finds them: models learned exactly these in coding "
            "RL. Run the submission in a sandbox that compares outputs outside it (never its "
            "exit status or its own `==`) and keeps the tests out of its reach.",
            field=name,
            hacks=found,
            stub_reward=floor,
        )
