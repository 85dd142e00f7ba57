"""Root mode: envkit starts the server itself and always stops it. Start failures, a hanging
environment and a crashing one become findings, never a hung validator or an orphan (one
case per rule in test_rules.py; here what is not one rule's fixture)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from envkit.envdir import EnvDir
from envkit.validation.options import RunOptions
from envkit.validation.runtime import RuntimeTarget, run_runtime
from tests.helpers import descendants

from .conftest import KNOBS


def _root_run(monkeypatch, mode="", start="", **kw):
    monkeypatch.setenv("KNOBS_MODE", mode)
    monkeypatch.setenv("KNOBS_START", start)
    monkeypatch.delenv("KNOBS_MODE_FILE", raising=False)
    before = descendants(os.getpid())
    t0 = time.monotonic()
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(KNOBS), python=sys.executable),
        RunOptions(episodes=kw.pop("episodes", 2), **kw),
    )
    elapsed = time.monotonic() - t0
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    return out, elapsed


def test_clean_with_oracle(monkeypatch):
    out, _ = _root_run(monkeypatch)
    # the knobs fixture pays partial credit on every step, so stalling pays: EK513 is its one
    # finding (a reward-design defect; tests/validation/test_rules.py pins it)
    assert [f.code for f in out.findings] == ["EK513"]
    assert {"EK506", "EK505", "EK401"} <= set(out.checks_run)
    assert out.timings["startup"] > 0 and out.timings["runtime"] >= out.timings["startup"]


def test_startup_timeout(monkeypatch):
    out, elapsed = _root_run(monkeypatch, start="slow", timeout_s=3)
    (f,) = out.findings
    assert f.code == "EK401" and "within 3 s" in f.message
    assert elapsed < 20


def test_url_unreachable_is_a_finding():
    from envkit.server import free_port

    out = run_runtime(RuntimeTarget(url=f"127.0.0.1:{free_port()}", envdir=None))
    assert [f.code for f in out.findings] == ["EK402"]


def test_bad_python_is_a_usage_error(tmp_path):
    from envkit.errors import UsageError

    with pytest.raises(UsageError):
        run_runtime(RuntimeTarget(url=None, envdir=EnvDir(KNOBS), python=str(tmp_path / "nope")))


def test_budget_spent_stops_the_stage(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("slow")  # 0.1 s a step: a warm server cannot finish all in 0.5 s
    t0 = time.monotonic()
    out = run_runtime(
        RuntimeTarget(url=server.url, envdir=EnvDir(KNOBS)),
        RunOptions(episodes=3, timeout_s=0.5),
    )
    assert time.monotonic() - t0 < 5
    (f,) = out.findings
    assert f.code == "EK422" and "within 0.5 s; it ran out of time" in f.message
    assert out.out_of_time == ["the runtime stage"]
    assert server.alive()


def test_rules_the_time_left_unplayed_are_skipped_for_time(knobs_server):
    """A runtime rule the budget ran out before is a skip that says so, not "not evaluated"."""
    from envkit.validation import validate
    from envkit.validation.report import OUT_OF_TIME

    server, mode_file = knobs_server
    mode_file.write_text("slow")
    report = validate(None, url=server.url, timeout_s=0.5, train_path=False)
    assert report.runtime.out_of_time == ["the runtime stage"]
    reasons = {c.code: c.reason for c in report.checks if c.status == "skipped"}
    assert reasons["EK503"] == reasons["EK412"] == OUT_OF_TIME, reasons
    assert report.to_dict()["runtime"]["out_of_time"] == ["the runtime stage"]
