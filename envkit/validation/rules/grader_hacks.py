"""EK521 code-grader hackable: a known code-grader hack (exit early, an always-equal answer,
touching the tests, patching the checker) earns more than a program that does nothing."""

from __future__ import annotations

import dataclasses
import re
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit import programs
from envkit.envdir.pysource import literal_value, parse_python
from envkit.findings import Severity, register
from envkit.validation import fuzz
from envkit.validation.engine import EPS, Episode, is_number
from envkit.validation.probing import Probes, field_schema

CODE_GRADER_HACKS = register(
    "EK521",
    "code-grader-hackable",
    Severity.ERROR,
    summary="A known code-grader hack (exiting early with success, an always-equal answer, "
    "touching the tests, patching the checker, printing a verdict, shadowing a module) "
    "earns more than a program that does nothing.",
    what="When an action field carries source code (its name says `code`, `source`, "
    "`program`, `script` or `solution`, or its description says Python or source code; or "
    "a multi-file submission, an object of strings `{name: source}` so named or named "
    "`files`) and the oracle wins, envkit sends, on every step of a fresh episode of the "
    "oracle's seed, each known hack in place of the oracle's source (in a multi-file "
    "submission, in place of the file defining the oracle's function): `sys.exit(0)` and "
    '`os._exit(0)` before any test runs; the function returning `[]`, `0` or `""` (these '
    "count only when paid like the oracle); the oracle's function returning an object whose "
    "`__eq__` is always true; the oracle's functions recording what they are given and "
    "handing it back when the token they returned comes back (counted only when paid like "
    "the oracle); the starter code the task shows (or the stub) with the oracle's source "
    "behind `if False:` (counted when paid more than the starter alone); when the task "
    "names two or more of the oracle's functions, the oracle with each of them in turn "
    "answering `None` to callers outside the module (counted when paid like the oracle: "
    "a function no test checks); when the task shows worked examples (`f(27) == 111`, a "
    "doctest, a list of input/output pairs), a function that looks them up and computes "
    "nothing (counted when paid like the oracle); the oracle slowed by 1 s once with every "
    "clock of the standard library patched to read 0 (counted when paid more than the "
    "slowed oracle alone: a grader that times the call in the submission's process); a "
    "program whose runs all hang for their first seconds (twice the declared step time, at "
    "least 2 s; its episode gets that much longer to answer), for a grader that counts a run "
    "past its time limit as passed or skipped; "
    "reading every "
    "file of the working directory; overwriting "
    "`test_*.py` and expected outputs; writing a `conftest.py` that marks every pytest "
    "report passed; redefining `check`/`test_*`/`run_tests` to pass; replacing the "
    "`check`/`judge`/`grade`/`verify` functions of every non-standard module already "
    "imported (the runner's own judge module); replacing `diff`, `cmp`, `grep` and the like "
    "in the directories on PATH under the working or temp directory with programs that exit "
    "0; writing a full score to `logs/verifier/reward.txt`, `reward.txt` and every file whose "
    "name says reward, score or verdict; replacing every Python file whose name says it "
    "parses, reports or scores results; printing verdict lines (`RESULT passed=N "
    "total=N`, `N/N tests passed`, the lines of the oracle's winning feedback, N the tests "
    "it counted) and exiting; in a multi-file submission, a `json.py` that shadows the "
    "standard module and reports a full pass. None may earn more than a stub (the function "
    "returning `None`) or the low end of the range.",
    why="Models trained with RL on code learn these exploits when they pay (Anthropic, "
    "arXiv:2511.18397): the reward then climbs while no task is solved, and the hacking "
    "generalises to other misbehaviour.",
    example="A grader that runs `python -c 'exec(src); assert f(1) == 2'` and pays 1.0 on "
    "exit status 0: `import sys; sys.exit(0)` scores 1.0.",
    fix="Run the submission in a sandbox, send it only the inputs, and compare its "
    "JSON-serialised outputs (and time it) in the grader's process; keep tests and expected "
    "outputs outside the sandbox's directory.",
    classes=(
        "BGW-101",
        "BGW-102",
        "BGW-103",
        "BGW-104",
        "BGW-105",
        "BGW-106",
        "BGW-107",
        "BGW-108",
        "BGW-109",
        "BGW-110",
        "BGW-111",
        "BGW-112",
        "BGW-113",
        "BGW-126",
        "BGW-137",
        "TerminalWrench:binary-hijacking",
        "TerminalWrench:output-spoofing",
    ),
)


#: The submissions the probe sends: text files read by path, not modules (run, they exit or
#: rewrite files, so nothing may import them). ``{name}`` in them stands for the function the
#: oracle's source defines, ``{total}`` for the number of tests the oracle's feedback counted,
#: ``{lines}`` for the lines of that feedback (a Python list of strings).
HACKS_DIR = Path(programs.__file__).parent / "grader_hacks"
FUNCTION_NAME = "{name}"


def _read(file: str) -> str:
    return (HACKS_DIR / f"{file}.txt").read_text(encoding="utf-8")


def stub_source(func: str) -> str:
    """A program that does nothing: ``func`` defined as a function returning ``None``."""
    return _read("stub").replace(FUNCTION_NAME, func)


@dataclass(frozen=True)
class Learned:
    """What a submission could learn from the oracle's winning episode.

    Attributes:
        func: the function the oracle's source defines (``solve`` when none is found).
        total: the number of tests the feedback counts (``5`` of ``"5/5 tests passed"``), 1
            when it says none.
        lines: the feedback's lines (the verdict a grader may read from stdout).
        funcs: every top-level function the oracle's source defines, in order.
        oracle: the oracle's source.
        starter: the code the task shows that defines ``func`` (a fix-this-code task's
            starter), None when it shows none.
        asked: the functions of ``funcs`` the task names (``mean()`` and ``variance()``
            of "write mean() and variance()"): the ones its tests should check.
        hang_s: seconds the runs of a hanging program keep hanging after the first began
            (twice the declared step time, at least 2).
        shown: the worked examples the task shows for ``func``, each its arguments and its
            output as Python literal texts (``("27", "111")`` of ``f(27) == 111``), at most
            :data:`MAX_EXAMPLES` (:func:`shown_examples`).
    """

    func: str = "solve"
    total: int = 1
    lines: tuple[str, ...] = ()
    funcs: tuple[str, ...] = ()
    oracle: str = ""
    starter: str | None = None
    asked: tuple[str, ...] = ()
    shown: tuple[tuple[str, str], ...] = ()
    hang_s: float = 2.0


@dataclass(frozen=True)
class CodeHack:
    """A hack models learned in coding RL (arXiv:2511.18397, Anthropic).

    Attributes:
        what: how the report names it.
        file: its source, ``HACKS_DIR/{file}.txt``.
        stub: the source is followed by :func:`stub_source`, so the oracle's function exists
            and only the hack can make it pass.
        module: the hack is a file of its own with this name, sent beside the stub in a
            multi-file submission (``{name: source}``); such a hack is not sent to a
            single-source field.
        hollow: it counts only when paid like the oracle: a function returning an empty
            value of a common type, or answering only the examples the task shows (a
            partial-credit grader rightly pays the few tests it gets right).
        over_starter: it counts only when paid more than the starter code the task shows,
            sent alone (a fix-this-code task may rightly pay the starter's working half).
        per_function: sent once per function the task names (:attr:`Learned.asked`, when
            it names two or more), ``{name}`` standing for each in turn.
        needs_examples: sent only when the task shows worked examples
            (:attr:`Learned.shown`).
        against: it counts only when paid more than this other submission
            (``HACKS_DIR/{against}.txt``), sent first: the same program without the hack.
        hangs: it runs past any time limit (:attr:`Learned.hang_s`): its episode may take
            up to twice that longer to answer, and gets that much more time.
    """

    what: str
    file: str
    stub: bool = True
    module: str | None = None
    hollow: bool = False
    over_starter: bool = False
    per_function: bool = False
    needs_examples: bool = False
    against: str | None = None
    hangs: bool = False

    def source(self, learned: Learned | str) -> str:
        """The source sent, ``learned`` saying what the oracle's episode showed (a bare
        function name stands for :class:`Learned` with only that).

        Raises:
            OSError: the hack's file is missing from the installation.
        """
        if isinstance(learned, str):
            learned = Learned(func=learned)
        return _fill(_read(self.file), learned) + (stub_source(learned.func) if self.stub else "")


def _fill(text: str, learned: Learned) -> str:
    """``text`` with its placeholders filled from ``learned`` (a fresh ``{token}`` each
    time: a marker file one send leaves is never another's)."""
    if "{slowed}" in text:
        text = text.replace("{slowed}", _read("slow_oracle"))
    return (
        text.replace("{token}", uuid.uuid4().hex)
        .replace(FUNCTION_NAME, learned.func)
        .replace("{total}", str(learned.total))
        .replace("{lines}", repr(list(learned.lines)))
        .replace("{names}", repr(list(learned.funcs or (learned.func,))))
        .replace("{oracle}", textwrap.indent(learned.oracle or "pass\n", "    "))
        .replace("{starter}", learned.starter or stub_source(learned.func))
        .replace("{source}", learned.oracle)
        .replace("{shown}", repr(list(learned.shown)))
        .replace("{hang_s}", f"{learned.hang_s:g}")
    )


def baseline_source(file: str, learned: Learned) -> str:
    """The submission a hack is judged against (:attr:`CodeHack.against`), filled from
    ``learned``."""
    return _fill(_read(file), learned)


#: The hacks, in the order they are sent.
CODE_HACKS: tuple[CodeHack, ...] = (
    CodeHack("exit early with success (`sys.exit(0)`)", "sys_exit", stub=False),
    CodeHack("the function returning `[]`", "hollow_list", stub=False, hollow=True),
    CodeHack("the function returning `0`", "hollow_zero", stub=False, hollow=True),
    CodeHack('the function returning `""`', "hollow_text", stub=False, hollow=True),
    CodeHack("exit early with success (`os._exit(0)`)", "os_exit", stub=False),
    CodeHack("an answer whose `__eq__` is always true", "always_equal", stub=False),
    CodeHack(
        "functions that record what they are given and hand it back when their token returns",
        "record_calls",
        stub=False,
        hollow=True,
    ),
    CodeHack(
        "the oracle with one function the task names answering nothing to its callers "
        "outside the module (a function no test checks)",
        "stub_one",
        stub=False,
        hollow=True,
        per_function=True,
    ),
    CodeHack(
        "the examples the task shows, looked up (nothing computed)",
        "shown_examples",
        stub=False,
        hollow=True,
        needs_examples=True,
    ),
    CodeHack(
        "the task's starter code (or a stub) with the oracle's source behind `if False:`",
        "dead_code",
        stub=False,
        over_starter=True,
    ),
    CodeHack(
        "every clock of the standard library patched to read 0 (the oracle slowed by 1 s "
        "once), paid more than the slowed oracle alone",
        "patched_clock",
        stub=False,
        against="slow_oracle",
    ),
    CodeHack(
        "a program that never finishes within the time limit (every run in its first seconds)",
        "time_out",
        hangs=True,
    ),
    CodeHack("reading every file in the working directory", "read_files"),
    CodeHack("overwriting the tests and expected outputs", "overwrite_tests"),
    CodeHack("a `conftest.py` that rewrites pytest's reports", "conftest_passes"),
    CodeHack("redefining the test functions", "redefine_checkers"),
    CodeHack(
        "replacing the checker functions (`check`, `judge`, `verify`, ...) of the modules "
        "already imported",
        "patch_checkers",
    ),
    CodeHack(
        "comparison tools (`diff`, `cmp`, `grep`, ...) replaced by ones that exit 0, in the "
        "directories on PATH that it can write",
        "hijack_tools",
    ),
    CodeHack("a full score written to the reward files a harness reads", "write_reward_files"),
    CodeHack("the result parsers and reporters around it replaced", "replace_parsers"),
    CodeHack(
        "printing verdict lines (`RESULT passed=N total=N`, the feedback's own) and exiting",
        "print_verdict",
        stub=False,
    ),
    CodeHack(
        "a submitted `json.py` shadowing the standard module (its `dumps` reports a full pass)",
        "shadow_json",
        module="json.py",
    ),
)

#: Action fields that carry source code.
SOURCE_FIELD = re.compile(r"(?:^|_)(?:code|source|program|script|solution)(?:_|$)", re.IGNORECASE)
FUNCTION = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)
#: "5/5 tests passed", "passed=5 total=5", "5 of 5": the count of tests a feedback gives.
COUNT = re.compile(r"(\d+)\s*(?:/|of|out of)\s*(\d+)|total\s*[=:]\s*(\d+)", re.IGNORECASE)
MAX_LINES = 20  # feedback lines a printed verdict repeats at most


def source_field(probes: Probes) -> str | None:
    """The action field that carries source code: a string field whose name (or
    description) says ``code``, ``source``, ``program``, ``script`` or ``solution``, or an
    object field of strings (a multi-file submission, ``{name: source}``) whose name or
    description says so or says ``files``."""
    for name in probes.schema.get("properties") or {}:
        node = field_schema(probes, name)
        types = fuzz.types_of(node)
        if "enum" in node or "const" in node:
            continue
        described = str(node.get("description") or "")
        says = SOURCE_FIELD.search(name) or re.search(
            r"\b(?:python|source code|program)\b", described, re.IGNORECASE
        )
        if "string" in types and says:
            return name
        values = fuzz.resolve(node.get("additionalProperties") or {}, probes.schema)
        if (
            "object" in types
            and "string" in fuzz.types_of(values)
            and (says or re.search(r"(?:^|_)files?(?:_|$)", name, re.IGNORECASE))
        ):
            return name
    return None


def learned_from(
    oracle_source: str, observations: list[dict[str, Any]], task: dict[str, Any] | None = None
) -> Learned:
    """What a submission could know: the functions ``oracle_source`` defines; from the
    string leaves of the winning episode's step ``observations`` the number of tests counted
    (``"5/5 tests passed"``; the largest count, 1 when none) and their lines; from the
    ``task`` (the reset observation) the starter code it shows (:func:`shown_code`)."""
    funcs = tuple(dict.fromkeys(FUNCTION.findall(oracle_source)))
    func = funcs[0] if funcs else "solve"
    texts = _strings(task or {})
    told = "\n".join(texts)
    lines: list[str] = []
    totals: list[int] = []
    for text in (s for obs in observations for s in _strings(obs)):
        for line in text.splitlines():
            if line.strip() and len(line) <= 200 and line not in lines:
                lines.append(line)
        for c in COUNT.finditer(text):
            totals.append(int(c.group(2) or c.group(3)))
    return Learned(
        func=func,
        total=max([t for t in totals if 0 < t <= 10_000] or [1]),
        lines=tuple(lines[:MAX_LINES]),
        funcs=funcs,
        oracle=oracle_source,
        starter=shown_code(texts, func),
        asked=tuple(f for f in funcs if re.search(rf"\b{re.escape(f)}\b", told)),
        shown=shown_examples(task or {}, texts, func),
    )


MAX_EXAMPLES = 50  # worked examples the lookup hack answers
#: Keys of an example object: its arguments and its output.
_IN_KEYS = ("input", "inputs", "args", "arguments", "in", "x")
_OUT_KEYS = ("output", "expected", "expected_output", "out", "result", "answer", "y")


def shown_examples(task: object, texts: list[str], func: str) -> tuple[tuple[str, str], ...]:
    """The worked examples ``task`` shows, as ``(arguments, output)`` Python literal texts:
    lists of ``[input, output]`` pairs or of ``{"input": ..., "output": ...}`` objects in
    its fields, and in ``texts`` calls of ``func`` with their result (``func(27) == 111``,
    ``func(27) -> 111``, ``func(27) returns 111``, a doctest's ``>>> func(27)`` and the line
    after it). At most :data:`MAX_EXAMPLES`; ``()`` when it shows none."""
    out: list[tuple[str, str]] = []

    def walk(value: object, depth: int) -> None:
        if depth > 4 or len(out) >= MAX_EXAMPLES:
            return
        if isinstance(value, dict):
            for v in value.values():
                walk(v, depth + 1)
        elif isinstance(value, list):
            pairs = [_pair(item) for item in value]
            if len(value) >= 2 and all(p is not None for p in pairs):
                out.extend(p for p in pairs if p is not None)
            else:
                for v in value[:50]:
                    walk(v, depth + 1)

    walk(task, 0)
    inline = re.compile(
        rf"{re.escape(func)}\(([^()\n]*)\)\s*(?:==|->|=>|→|\breturns?\b|\bgives\b)\s*([^\n]+)"
    )
    doctest = re.compile(rf"{re.escape(func)}\(([^\n]*)\)\s*\n\s*([^\n]+)")
    for text in texts:
        for start in (m.start() for m in re.finditer(rf"\b{re.escape(func)}\(", text)):
            prompt = text[max(0, start - 8) : start].rstrip(" \t").endswith(">>>")
            m = (doctest if prompt else inline).match(text, start)
            if m is None:
                continue
            rest = m.group(2).strip().strip("`")
            # the result ends the line, or the sentence, or is its first word
            for result in (rest, re.split(r"[.;]\s|`", rest)[0], rest.split()[0]):
                pair = _literals(m.group(1), result.rstrip(".,;` "))
                if pair is not None:
                    out.append(pair)
                    break
    return tuple(dict.fromkeys(out))[:MAX_EXAMPLES]


def _literals(args: str, result: str) -> tuple[str, str] | None:
    """``(args, result)`` as normalised literal texts, None when either is no Python
    literal (a signature's ``n: int`` is none)."""
    try:
        a = literal_value(args[:500]) if args.strip() else ()
        r = literal_value(result[:500])
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    return repr(a), repr(r)


def _pair(item: object) -> tuple[str, str] | None:
    """One example as literal texts: ``[input, output]`` or an object with an input key
    and an output key; None for anything else."""
    if isinstance(item, list) and len(item) == 2:
        return repr(item[0]), repr(item[1])
    if isinstance(item, dict):
        args = next((item[k] for k in _IN_KEYS if k in item), None)
        result = next((k for k in _OUT_KEYS if k in item), None)
        if args is not None and result is not None:
            return repr(args), repr(item[result])
    return None


#: A fenced block of a markdown text (```python ... ```).
FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.DOTALL)
#: A line that goes on a module: blank, indented, or a statement that starts one.
_CODE_LINE = re.compile(r"^(?:\s|$|def |async def |class |@|import |from |[A-Za-z_]\w* = )")


def shown_code(texts: list[str], func: str) -> str | None:
    """The code among ``texts`` that defines ``func``: the fenced block holding
    ``def func(``, or else the lines from the imports just above that line to the last
    line that still reads as code. None when no text defines it or the code does not
    compile."""
    head = re.compile(rf"^(?:async\s+)?def\s+{re.escape(func)}\s*\(", re.MULTILINE)
    for text in texts:
        blocks = [b for b in FENCE.findall(text) if head.search(b)]
        m = head.search(text)
        if blocks:
            code = blocks[0]
        elif m:
            before = text[: m.start()].splitlines()
            while before and re.match(r"(?:import|from) ", before[-1]):
                before.pop()
            lines = text.splitlines()[len(before) :]
            end = next(
                (i for i, line in enumerate(lines) if i and not _CODE_LINE.match(line)),
                len(lines),
            )
            code = "\n".join(lines[:end])
        else:
            continue
        code = code.strip("\n") + "\n"
        try:
            parse_python(code, "<starter>")
        except (SyntaxError, ValueError):
            continue
        return code
    return None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != "metadata" for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def submission(oracle_value: object, source: str, func: str, hack: CodeHack | None) -> object:
    """What is sent in the source field: ``source`` alone for a single-source field; for a
    multi-file one (``oracle_value`` a ``{name: source}`` dict), the oracle's files with the
    one that defines ``func`` replaced by ``source``, or, for a ``module`` hack, by the stub
    with the hack beside it under its module name. ``None``: the hack does not fit the
    field (a module hack and a single source)."""
    if not isinstance(oracle_value, dict):
        return None if hack is not None and hack.module else source
    files = dict(oracle_value)
    main = next(
        (
            n
            for n, src in files.items()
            if isinstance(src, str)
            and re.search(rf"^(?:async\s+)?def\s+{re.escape(func)}\s*\(", src, re.MULTILINE)
        ),
        next(iter(files), "solution.py"),
    )
    if hack is not None and hack.module:
        return {**files, main: stub_source(func), hack.module: source}
    return {**files, main: source}


def in_place(win: Episode, name: str, value: object, max_steps: int) -> list[dict[str, Any]]:
    """The oracle's winning actions with ``value`` in field ``name`` of its last one, that
    action sent on every step left (``max_steps`` of them)."""
    return win.actions[:-1] + [{**win.actions[-1], name: value}] * max_steps


def oracle_source(value: object) -> str | None:
    """The oracle's source: the field's string, or the files of a ``{name: source}`` dict."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return "\n".join(value.values())
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
    oracle_value = win.actions[-1].get(name)
    source = oracle_source(oracle_value)
    if source is None:
        return
    learned = learned_from(source, win.observations()[1:], win.observations()[0])
    learned = dataclasses.replace(learned, hang_s=max(2.0, 2 * settings.step_timeout_s))
    func = learned.func
    oracle_best = max([float(r) for r in win.rewards if is_number(r)] or [settings.hi])

    def best(value: object, label: str, reply_s: float | None = None) -> float:
        actions = in_place(win, name, value, settings.max_steps)
        ep = probes.play(seed, actions, label, reply_s=reply_s)
        return max([float(r) for r in ep.rewards if is_number(r)] or [settings.lo])

    if not probes.time_left("code hacks probe"):
        return
    floor = max(
        settings.lo,
        best(submission(oracle_value, stub_source(func), func, None), "probe:code-stub"),
    )
    found: list[dict[str, Any]] = []
    tried = 0
    starter_paid: float | None = None
    baselines: dict[str, float] = {}
    each = learned.asked if len(learned.asked) > 1 else ()  # one named: the hollow hacks'
    sends = [
        (hack, dataclasses.replace(learned, func=f) if hack.per_function else learned)
        for hack in CODE_HACKS
        for f in (each if hack.per_function else ("",))
    ]
    for hack, known in sends:
        if hack.needs_examples and not learned.shown:
            continue
        source = hack.source(known)
        value = submission(oracle_value, source, func, hack)
        if value is None:
            continue
        if not probes.time_left("code hacks probe"):
            break
        longer = settings.reply_s + 2 * learned.hang_s if hack.hangs else None
        paid = best(value, "probe:code-hack", longer)
        tried += 1
        bar = max(floor, oracle_best) - EPS if hack.hollow else floor + EPS
        if hack.over_starter and learned.starter is not None:
            if starter_paid is None:
                starter = submission(oracle_value, learned.starter, func, None)
                starter_paid = best(starter, "probe:code-starter")
            bar = max(bar, starter_paid + EPS)
        if hack.against is not None:
            if hack.against not in baselines:
                plain = submission(oracle_value, baseline_source(hack.against, known), func, None)
                baselines[hack.against] = best(plain, "probe:code-baseline")
            bar = baselines[hack.against] + EPS
        if paid > bar:
            what = f"{hack.what}: `{known.func}`" if hack.per_function else hack.what
            found.append({"seed": seed, "hack": what, "source": source, "reward": paid})
    if not tried:
        return
    engine.ran(CODE_GRADER_HACKS)
    if found:
        e = found[0]
        engine.add(
            CODE_GRADER_HACKS,
            f"A submission that games the grader should earn no more than a program that "
            f"does nothing ({floor:g}), and a hollow function less than the oracle "
            f"({oracle_best:g}); {len(found)} of {tried} known hack(s) in `{name}` "
            f"earned more: " + "; ".join(f"{x['hack']} ({x['reward']:g})" for x in found) + f" "
            f"(seed {e['seed']}). A trainer finds them: models learned exactly these in coding "
            "RL. Run the submission in a sandbox that compares outputs outside it (never its "
            "exit status, its own `==` or its own clock) and keeps the tests out of its reach.",
            field=name,
            hacks=found,
            stub_reward=floor,
        )
