"""The reward-design probes (EK513-EK522): their helpers on plain values, then the probe_quiz
and probe_code environments (tests/validation/envs/probe_*), clean and with one defect per
mode, each mode giving exactly its finding."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir import reset_options
from envkit.envdir.manifest import read_manifest
from envkit.validation import probes
from envkit.validation.engine import Episode
from envkit.validation.options import RunOptions
from envkit.validation.runtime import RuntimeTarget, run_runtime
from envkit.wire import StepResult
from tests.helpers import descendants

QUIZ = Path(__file__).parent / "envs" / "probe_quiz"
CODE = Path(__file__).parent / "envs" / "probe_code"
# every probe but EK521 (probe_quiz has no code field)
PROBE_CODES = {f"EK5{n}" for n in range(13, 23)} - {"EK521"}


def _probes(schema: dict) -> probes.Probes:
    return probes.Probes(engine=None, schema=schema, wins={}, deadline=time.monotonic() + 60)  # type: ignore[arg-type]


# -- helpers ---------------------------------------------------------------------------------
def test_wrong_value_keeps_the_form_and_changes_the_value() -> None:
    assert probes._wrong("<answer>42</answer>") == "<answer>97</answer>"
    assert probes._wrong("Paris") == "Cnevf"
    assert probes._wrong(r"\boxed{7}") == r"\boxed{2}"


def test_harmless_variations_of_an_answer() -> None:
    got = dict(probes.variations("<answer>Paris</answer>"))
    assert got["surrounding whitespace"] == "  <answer>Paris</answer>\n"
    assert got["a lead-in"] == "The answer is <answer>Paris</answer>"
    assert got["upper case"] == "<answer>PARIS</answer>"  # the tag itself is kept
    assert dict(probes.variations("4.50"))["an equivalent number form"] == "4.5"
    assert dict(probes.variations("42"))["an equivalent number form"] == "42.0"
    assert "upper case" not in dict(probes.variations("42"))  # digits have no case


def test_near_misses_stay_within_the_declared_bounds() -> None:
    schema = {
        "properties": {
            "guess": {"type": "integer", "minimum": 1, "maximum": 100},
            "word": {"type": "string"},
            "mode": {"type": "string", "enum": ["a", "b"]},
        }
    }
    misses = probes.near_misses(_probes(schema), {"guess": 1, "word": "cat", "mode": "a"}, 4)
    assert {"guess": 0, "word": "cat", "mode": "a"} not in misses  # below `minimum`
    assert {"guess": 2, "word": "cat", "mode": "a"} in misses
    assert {"guess": 1, "word": "cag", "mode": "a"} in misses  # last letter changed
    assert all(m["mode"] == "a" for m in misses) and len(misses) == 4


def test_error_text_reads_error_fields_only() -> None:
    assert probes._error_text({"error": "unknown tool"}) == "error: unknown tool"
    assert probes._error_text({"metadata": {"last_action_error": "bad"}}) == (
        "last_action_error: bad"
    )
    assert probes._error_text({"error": "", "terror": "x", "error_rate": 0.3}) is None


def test_return_and_stalling_compare_the_sum_of_step_rewards() -> None:
    def ep(policy: str, rewards: list[float], actions: list[int]) -> Episode:
        e = Episode(0, {}, policy=policy)
        for r, a in zip(rewards, actions, strict=True):
            e.record(StepResult({}, r, False), {"guess": a})
        return e

    win = ep("oracle", [0.0, 1.0], [50, 51])
    longer = ep("fuzz", [0.4, 0.4, 1.0], [1, 2, 51])
    quicker = ep("fuzz", [1.0], [51])  # a shorter win is no stalling
    assert probes.episode_return(longer) == pytest.approx(1.8)
    found = probes._best_stall([win, longer, quicker], win, 1.0)
    assert found is not None and found["why"] == "is longer" and found["policy"] == "fuzz"
    assert probes._best_stall([win, quicker], win, 1.0) is None


def test_resident_memory_is_read_from_proc() -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc: the memory probe is skipped on this system")
    assert probes._rss_bytes(os.getpid()) > 1_000_000


def test_reset_options_read_from_the_signature() -> None:
    source = '''
from typing import Literal, Optional


class Env:
    def reset(self, seed=None, episode_id=None, level: Optional[Literal["a", "b"]] = None,
              hints: bool = False, task_id=None, *, split="train", **kwargs):
        """Start.

        Args:
            task_id: one of 'sum', 'product' or `max`.
            split: "train" or "test".
        """
'''
    got = reset_options.reset_options(source)
    assert got == {
        "level": ["a", "b"],
        "hints": [False, True],
        "task_id": ["sum", "product", "max"],
        "split": ["train", "test"],
    }
    assert reset_options.reset_options("def reset(:") == {}  # a syntax error declares nothing


def test_revealed_text_leaves_out_what_was_shown_or_sent() -> None:
    before = [{"question": "What is 24 + 49?", "feedback": ""}]
    after = {"feedback": "Wrong: the expected answer was 73.", "log": ["28"]}
    got = probes.revealed(before, after, ["28"])
    assert got[0] == "73" and "28" not in got and "24" not in got
    assert probes.revealed(before, {"feedback": "What is 24 + 49?"}, []) == []
    quoted = probes.revealed([], {"feedback": "Expected output: 'abc'; got 4.5"}, [])
    assert "abc" in quoted and "4.5" in quoted


def test_source_field_and_hacks() -> None:
    schema = {
        "properties": {
            "answer": {"type": "string"},
            "solution_code": {"type": "string"},
        }
    }
    assert probes.source_field(_probes(schema)) == "solution_code"
    described = {"properties": {"text": {"type": "string", "description": "Python source"}}}
    assert probes.source_field(_probes(described)) == "text"
    assert probes.source_field(_probes({"properties": {"answer": {"type": "string"}}})) is None
    for _what, template in probes.CODE_HACKS:  # every hack is valid Python
        compile(template.replace("{name}", "solve"), "hack.py", "exec")


# -- the probe_quiz environment ----------------------------------------------------------------
# Each defect mode gives exactly its finding: the EK513-EK522 rows of test_rules.CASES.


@pytest.mark.slow
def test_clean_probe_quiz_gives_no_finding_and_every_probe_runs(monkeypatch) -> None:
    """Clean: spacing, case, a lead-in and "73.0" are accepted, errors earn 0, a 200 KB
    answer is refused at once: no probe may find anything, and every one was evaluated."""
    monkeypatch.delenv("PROBE_MODE", raising=False)
    before = descendants(os.getpid())
    out = run_runtime(
        RuntimeTarget(url=None, root=QUIZ, manifest=read_manifest(QUIZ), python=sys.executable),
        RunOptions(episodes=3),
    )
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the probes left processes behind"
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert set(out.checks_run) >= PROBE_CODES
    assert out.timings["probes"] > 0


@pytest.mark.slow
def test_clean_probe_code_resists_every_hack(monkeypatch) -> None:
    """Clean: outputs compared as JSON by the server, outside the child: no code-grader hack
    earns more than the stub, and EK521 was evaluated."""
    monkeypatch.delenv("PROBE_MODE", raising=False)
    out = run_runtime(
        RuntimeTarget(url=None, root=CODE, manifest=read_manifest(CODE), python=sys.executable),
        RunOptions(episodes=3),
    )
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert "EK521" in out.checks_run
    assert not [n for n in out.notes if "not played" in n]  # all hacks were tried in time
