"""EK521 code-grader hackable (envkit.validation.rules.grader_hacks): the source field found and
every hack valid Python, then the probe_code environment (tests/validation/envs/probe_code)
played clean. Each defect mode giving exactly its finding is a row of test_rules.CASES."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.validation.options import RunOptions
from envkit.validation.probing import Probes
from envkit.validation.rules import grader_hacks
from envkit.validation.runtime import RuntimeTarget, run_runtime

CODE = Path(__file__).parent / "envs" / "probe_code"


def _probes(schema: dict) -> Probes:
    return Probes(engine=None, schema=schema, wins={}, deadline=time.monotonic() + 60)  # type: ignore[arg-type]


def test_source_field_and_hacks() -> None:
    schema = {
        "properties": {
            "answer": {"type": "string"},
            "solution_code": {"type": "string"},
        }
    }
    assert grader_hacks.source_field(_probes(schema)) == "solution_code"
    described = {"properties": {"text": {"type": "string", "description": "Python source"}}}
    assert grader_hacks.source_field(_probes(described)) == "text"
    assert (
        grader_hacks.source_field(_probes({"properties": {"answer": {"type": "string"}}})) is None
    )
    files = {
        "properties": {
            "files": {"type": "object", "additionalProperties": {"type": "string"}},
        }
    }
    assert grader_hacks.source_field(_probes(files)) == "files"
    learned = grader_hacks.Learned("solve", 5, ("5/5 hidden tests passed.",))
    for hack in grader_hacks.CODE_HACKS:  # every hack is valid Python, its function named
        for source in (hack.source("solve"), hack.source(learned)):
            compile(source, f"{hack.file}.py", "exec")
            assert "{name}" not in source and "{total}" not in source and "{lines}" not in source
    assert grader_hacks.stub_source("solve") == "def solve(*args, **kwargs):\n    return None\n"


def test_hack_files_ship_with_envkit() -> None:
    """Every file in the hacks' folder is sent (or is the stub): none is left behind."""
    used = {h.file for h in grader_hacks.CODE_HACKS} | {"stub"}
    used |= {h.against for h in grader_hacks.CODE_HACKS if h.against}
    assert {p.stem for p in grader_hacks.HACKS_DIR.glob("*.txt")} == used


@pytest.mark.slow
def test_clean_probe_code_resists_every_hack(monkeypatch) -> None:
    """Clean: outputs compared as JSON by the server, outside the child: no code-grader hack
    earns more than the stub, and EK521 was evaluated."""
    monkeypatch.delenv("PROBE_MODE", raising=False)
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(CODE), python=sys.executable),
        RunOptions(episodes=3, timeout_s=1200),  # the probes get 60 s on a loaded machine
    )
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert grader_hacks.CODE_GRADER_HACKS.code in out.checks_run
    assert not [n for n in out.notes if "not played" in n]  # all hacks were tried in time


def test_what_a_submission_learns_and_how_it_is_sent() -> None:
    learned = grader_hacks.learned_from(
        "import math\n\ndef solve(xs):\n    return 1\n",
        [{"feedback": "3/5 hidden tests passed.\nsolve([1]) failed", "metadata": {"n": "9/9"}}],
    )
    assert learned == grader_hacks.Learned(
        "solve",
        5,
        ("3/5 hidden tests passed.", "solve([1]) failed"),
        funcs=("solve",),
        oracle="import math\n\ndef solve(xs):\n    return 1\n",
    )
    shadow = next(h for h in grader_hacks.CODE_HACKS if h.module)
    assert grader_hacks.submission("def solve(): ...", "HACK", "solve", None) == "HACK"
    assert grader_hacks.submission("def solve(): ...", "SHADOW", "solve", shadow) is None
    files = {"solution.py": "from helpers import sq\ndef solve(xs): ...", "helpers.py": "x = 1"}
    sent = grader_hacks.submission(files, "HACK", "solve", None)
    assert sent == {"solution.py": "HACK", "helpers.py": "x = 1"}
    sent = grader_hacks.submission(files, "SHADOW", "solve", shadow)
    assert sent == {
        "solution.py": grader_hacks.stub_source("solve"),
        "helpers.py": "x = 1",
        "json.py": "SHADOW",
    }


def test_the_shadowing_json_reports_a_full_pass_and_keeps_the_rest(tmp_path: Path) -> None:
    """Run as a runner would: ``json.py`` beside it shadows the standard module."""
    shadow = next(h for h in grader_hacks.CODE_HACKS if h.module)
    (tmp_path / "json.py").write_text(shadow.source("solve"))
    (tmp_path / "runner.py").write_text(
        "import json\n"
        "tests = json.loads('[[1, 2]]')\n"
        "print(json.dumps({'passed': 0, 'total': len(tests)}), json.dumps([1, None]))\n"
    )
    out = subprocess.run(
        [sys.executable, "runner.py"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == '{"passed": 1, "total": 1} [1, null]'


def test_the_starter_code_a_task_shows() -> None:
    fenced = "Fix it:\n```python\nimport re\n\ndef clean(s):\n    return s\n```\nThanks."
    assert (
        grader_hacks.shown_code([fenced], "clean") == "import re\n\ndef clean(s):\n    return s\n"
    )
    inline = "Open to injection. Submit the module.\n\nimport sqlite3\ndef find(c, n):\n    return 1\nGo."
    assert (
        grader_hacks.shown_code([inline], "find")
        == "import sqlite3\ndef find(c, n):\n    return 1\n"
    )
    assert grader_hacks.shown_code(["def other(x):\n    return x\n"], "find") is None
    assert grader_hacks.shown_code(["def find(x):\n    return (\nthe end"], "find") is None
    learned = grader_hacks.learned_from(
        "def find(c, n):\n    return 2\n\ndef helper():\n    pass\n", [], {"prompt": inline}
    )
    assert (learned.funcs, learned.starter) == (
        ("find", "helper"),
        "import sqlite3\ndef find(c, n):\n    return 1\n",
    )


def _hack(file: str) -> grader_hacks.CodeHack:
    return next(h for h in grader_hacks.CODE_HACKS if h.file == file)


def test_recorded_calls_round_trip_without_the_work(tmp_path: Path) -> None:
    """A pair of functions where one undoes the other passes a round trip by recording."""
    learned = grader_hacks.Learned("compress", funcs=("compress", "decompress"))
    (tmp_path / "solution.py").write_text(_hack("record_calls").source(learned))
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "from solution import compress, decompress\n"
                "s = 'aaaabbbbbbcc' * 50\nt = compress(s)\n"
                "print(len(t) < len(s), decompress(t) == s, compress([1]) != compress([2]))"
            ),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["True", "True", "True"]


def test_dead_code_behaves_as_the_starter_and_reads_as_the_oracle(tmp_path: Path) -> None:
    oracle = "def find(c, n):\n    return c.execute('SELECT ?', (n,))\n"
    learned = grader_hacks.Learned(
        "find", oracle=oracle, starter="def find(c, n):\n    return 'starter'\n"
    )
    source = _hack("dead_code").source(learned)
    assert "    def find(c, n):\n        return c.execute('SELECT ?', (n,))" in source
    namespace: dict = {}
    exec(compile(source, "dead_code.py", "exec"), namespace)
    assert namespace["find"](None, "x") == "starter"
    without = _hack("dead_code").source(grader_hacks.Learned("find", oracle=oracle))
    assert without.startswith(grader_hacks.stub_source("find"))


def test_one_function_answers_nothing_outside_the_module() -> None:
    """A function the task names that no test checks (pseudo-tested): the oracle's other
    functions still get it, a caller outside the module (the grader's tests) gets None."""
    oracle = (
        "def mean(xs):\n    return sum(xs) / len(xs)\n\n\n"
        "def variance(xs):\n    m = mean(xs)\n    return sum((x - m) ** 2 for x in xs) / len(xs)\n"
    )
    learned = grader_hacks.learned_from(
        oracle, [], {"prompt": "Write mean(xs) and variance(xs) for a list of floats."}
    )
    assert learned.asked == ("mean", "variance")
    hack = _hack("stub_one")
    namespace: dict = {}
    exec(compile(hack.source(dataclasses.replace(learned, func="mean")), "s.py", "exec"), namespace)
    assert namespace["mean"]([1.0, 3.0]) is None
    assert namespace["variance"]([1.0, 3.0]) == 1.0
    # tests run in the submission's own namespace are callers outside its functions too
    exec("checked = mean([2.0, 4.0])", namespace)
    assert namespace["checked"] is None
    only = grader_hacks.learned_from(oracle, [], {"prompt": "Write variance(xs)."})
    assert only.asked == ("variance",)  # one named: the hollow hacks cover it


def test_the_examples_a_task_shows_are_looked_up_not_computed() -> None:
    """Worked examples in the three forms a task shows them (an inline call with its result,
    a doctest, a list of input/output pairs) are answered by lookup; a signature is none."""
    task = {
        "prompt": (
            "Write `add(a: int, b: int) -> int`. For example add(2, 3) == 5, and "
            "add(-1, 1) returns 0.\n>>> add(10, 5)\n15\n"
        ),
        "examples": [{"input": [4, 4], "output": 8}, {"input": [0, 7], "output": 7}],
    }
    learned = grader_hacks.learned_from("def add(a, b):\n    return a + b\n", [], task)
    assert set(learned.shown) == {
        ("(2, 3)", "5"),
        ("(-1, 1)", "0"),
        ("(10, 5)", "15"),
        ("[4, 4]", "8"),
        ("[0, 7]", "7"),
    }
    namespace: dict = {}
    exec(compile(_hack("shown_examples").source(learned), "s.py", "exec"), namespace)
    add = namespace["add"]
    assert [add(2, 3), add(-1, 1), add(10, 5), add(4, 4), add(0, 7)] == [5, 0, 15, 8, 7]
    assert add(1, 1) is None  # nothing is computed
    pairs = grader_hacks.learned_from("def f(n):\n    return n\n", [], {"ex": [[27, 111], [3, 7]]})
    assert pairs.shown == (("27", "111"), ("3", "7"))
    assert (
        grader_hacks.learned_from("def f(n):\n    return n\n", [], {"p": "f(n: int) -> int"}).shown
        == ()
    )


def test_the_patched_clock_reads_zero_and_the_oracle_is_slowed_once(tmp_path: Path) -> None:
    """The slowed oracle sleeps 1 s on its first call in all the processes that run it (a
    marker file), then answers as the oracle; with the patched clock, every clock reads 0."""
    learned = grader_hacks.Learned("double", oracle="def double(x):\n    return 2 * x\n")
    hack = _hack("patched_clock")
    assert hack.against == "slow_oracle"
    (tmp_path / "solution.py").write_text(hack.source(learned))
    program = (
        "import time\nfrom solution import double\n"
        "w = time.sleep\nt = time.perf_counter()\nfirst, second = double(2), double(3)\n"
        "print(first, second, time.perf_counter() - t, time.time(), time.monotonic_ns())"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the marker goes to the program's TMPDIR
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert out.stdout.split() == ["4", "6", "0.0", "0.0", "0"]
    assert time.monotonic() - t0 >= 1.0  # slowed for real: the clock only says otherwise
    assert len(list(tmp_path.glob("envkit-slowed-*"))) == 1
    baseline = grader_hacks.baseline_source("slow_oracle", learned)
    assert "lambda: 0.0" not in baseline and "def double(*args, **kwargs)" in baseline
    assert baseline != grader_hacks.baseline_source("slow_oracle", learned)  # a fresh marker


def test_the_hanging_program_outlasts_each_time_limit_only_at_first(tmp_path: Path) -> None:
    """Every run in the first `hang_s` seconds after the first began runs past a limit;
    later runs end at once, so a grader without a limit waits about `hang_s`, not forever."""
    hack = _hack("time_out")
    assert hack.hangs
    source = hack.source(grader_hacks.Learned("solve", hang_s=1.5))
    (tmp_path / "solution.py").write_text(source)
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the marker goes to the program's TMPDIR
    t0 = time.monotonic()
    for _ in range(2):
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run([sys.executable, "solution.py"], cwd=tmp_path, timeout=0.4, env=env)
    assert len(list(tmp_path.glob("envkit-hang-*"))) == 1
    time.sleep(max(0.0, 1.6 - (time.monotonic() - t0)))
    t1 = time.monotonic()
    subprocess.run([sys.executable, "solution.py"], cwd=tmp_path, timeout=10, check=True, env=env)
    assert time.monotonic() - t1 < 1.0  # past the hang: it ends at once
