"""Root mode: envkit starts the server itself and always stops it. Start failures, a hanging
environment and a crashing one become findings, never a hung validator or an orphan."""

from __future__ import annotations

import os
import sys
import time

import pytest

from envkit.manifest import read_manifest
from envkit.validation.runtime import RuntimeTarget, run_runtime
from tests.helpers import descendants

from .conftest import KNOBS


def _root_run(monkeypatch, mode="", start="", **kw):
    monkeypatch.setenv("KNOBS_MODE", mode)
    monkeypatch.setenv("KNOBS_START", start)
    monkeypatch.delenv("KNOBS_MODE_FILE", raising=False)
    before = descendants(os.getpid())
    t0 = time.monotonic()
    out = run_runtime(RuntimeTarget(url=None, root=KNOBS, manifest=read_manifest(KNOBS),
                                    python=sys.executable), episodes=kw.pop("episodes", 2), **kw)
    elapsed = time.monotonic() - t0
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    return out, elapsed


def test_clean_with_oracle(monkeypatch):
    out, _ = _root_run(monkeypatch)
    assert out.findings == []
    assert {"EK506", "EK505", "EK401"} <= set(out.checks_run)
    assert out.timings["startup"] > 0 and out.timings["runtime"] >= out.timings["startup"]


def test_oracle_below_max(monkeypatch):
    out, _ = _root_run(monkeypatch, mode="oracle_wrong", episodes=1)
    assert {f.code for f in out.findings} == {"EK506"}
    assert "server.oracle:policy" in out.findings[0].message


def test_import_error_is_a_start_finding_with_log_tail(monkeypatch):
    out, elapsed = _root_run(monkeypatch, start="import_error")
    (f,) = out.findings
    assert f.code == "EK401"
    assert "knobs_missing_dependency" in f.message  # the tail of the server's log
    assert out.checks_run == ["EK401"]


def test_startup_timeout(monkeypatch):
    out, elapsed = _root_run(monkeypatch, start="slow", timeout_s=3)
    (f,) = out.findings
    assert f.code == "EK401" and "within 3 s" in f.message
    assert elapsed < 20


def test_hanging_step_times_out(monkeypatch):
    out, elapsed = _root_run(monkeypatch, mode="hang")
    codes = [f.code for f in out.findings]
    assert codes == ["EK422"], out.findings
    assert "within 2 s" in out.findings[0].message  # 2 x step_timeout_s (1.0), at least 2 s
    assert elapsed < 45


def test_crashing_step_reports_server_death(monkeypatch):
    out, elapsed = _root_run(monkeypatch, mode="crash")
    codes = [f.code for f in out.findings]
    assert codes == ["EK423"], out.findings
    assert "exited with code 3" in out.findings[0].message
    assert elapsed < 45


def test_url_unreachable_is_a_finding():
    from envkit.server import free_port

    out = run_runtime(RuntimeTarget(url=f"127.0.0.1:{free_port()}", root=None, manifest=None,
                                    python=None))
    assert [f.code for f in out.findings] == ["EK402"]


def test_bad_python_is_a_usage_error(tmp_path):
    from envkit.errors import UsageError

    with pytest.raises(UsageError):
        run_runtime(RuntimeTarget(url=None, root=KNOBS, manifest=read_manifest(KNOBS),
                                  python=str(tmp_path / "nope")))
