"""`envkit eval --resume DIR`: a run killed (SIGKILL) or interrupted (Ctrl-C) part-way goes on
from its run directory with its stored settings, plays only the missing episodes (counted on
the model endpoint's side) and summarises all of them; a cut-off last line is replayed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOTAL = 20


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


def _start_eval(args: list[str], key: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "envkit", "eval", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, HF_TOKEN=key, NO_COLOR="1"),
    )


def _stop_after(proc: subprocess.Popen, traj: Path, episodes: int, sig: int) -> str:
    """Send ``sig`` once ``traj`` holds ``episodes`` lines (polled), then reap the process;
    its stderr."""
    try:
        deadline = time.monotonic() + 120
        while len(_lines(traj)) < episodes:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the run wrote too few episodes"
            time.sleep(0.02)
        proc.send_signal(sig)
        return proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigkill_after_5_episodes_then_resume_plays_only_the_rest(
    cli, echo_server, openai_stub, stub_key, tmp_path
):
    model = "slow:151"  # a name of its own: the stub counts this test's model calls
    out = tmp_path / "run"
    traj = out / "trajectories.jsonl"
    proc = _start_eval(
        ["--url", echo_server.url, "--model", model, "--base-url", openai_stub.base_url,
         "-n", str(TOTAL), "--out", str(out)],
        stub_key,
    )  # fmt: skip
    _stop_after(proc, traj, 5, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    before = _lines(traj)
    kept = len(before)
    assert 5 <= kept < TOTAL and not (out / "summary.json").exists()
    assert all(json.loads(x)["success"] for x in before)  # every appended line is whole
    run = json.loads((out / "run.json").read_text())
    assert run["options"]["model"] == model and run["options"]["episodes"] == TOTAL
    assert run["environment"]["urls"] == [echo_server.url]
    # A process killed mid-write leaves the next episode cut off: it must be played again.
    with traj.open("a") as fh:
        fh.write(json.dumps({"episode": kept, "group": kept, "member": 0})[:-1] + ', "se')
    calls_before = len(openai_stub.requests_for(model))

    r = cli("eval", "--resume", out, "--format", "json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["episodes"] == TOTAL and summary["complete"] is True
    assert summary["success_rate"] == 1.0
    # Only the missing episodes were played: one model call per echo episode.
    assert len(openai_stub.requests_for(model)) - calls_before == TOTAL - kept
    assert sum(x.startswith("episode ") for x in r.stderr.splitlines()) == TOTAL - kept
    after = _lines(traj)
    assert [json.loads(x)["episode"] for x in after] == list(range(TOTAL))
    assert after[:kept] == before  # the finished episodes are kept byte for byte
    assert any(
        f"Resumed: {kept} finished episode(s) kept" in n and "1 cut-off line" in n
        for n in summary["notes"]
    ), summary["notes"]


@pytest.mark.slow  # starts the environment's server twice
def test_ctrl_c_then_resume_restarts_the_stored_environment(
    cli, echo_env, copy_env, openai_stub, stub_key, tmp_path
):
    env = copy_env(echo_env)
    out = tmp_path / "run"
    args = [str(env), "--python", sys.executable, "--model", "slow:152",
            "--base-url", openai_stub.base_url, "-n", "8", "-c", "2", "--out", str(out)]  # fmt: skip
    proc = _start_eval(args, stub_key)
    stderr = _stop_after(proc, out / "trajectories.jsonl", 3, signal.SIGINT)
    assert proc.returncode == 130
    # the options --resume accepts are repeated; the rest are in run.json
    cmd = f"envkit eval --resume {out} --concurrency 2 --python {sys.executable}"
    assert f"Continue with: {cmd}" in " ".join(stderr.split()), stderr
    partial = json.loads((out / "summary.json").read_text())
    assert partial["interrupted"] is True and 3 <= partial["episodes"] < 8

    r = cli("eval", "--resume", out, "-c", "1", "--format", "json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["episodes"] == 8 and summary["complete"] is True
    assert summary["environment"]["server_started_by_envkit"] is True
    assert summary["environment"]["path"] == str(env)
    assert summary["settings"]["concurrency_requested"] == 1  # -c may change on resume
    done = sum(x.startswith("episode ") for x in r.stderr.splitlines())
    assert done == 8 - partial["episodes"]


def test_resume_refuses_options_that_change_the_run(cli, tmp_path, echo_server):
    r = cli("eval", "--resume", tmp_path, "--policy", "random")
    assert r.exit_code == 2
    assert "--policy cannot be given with it" in r.stderr
    r = cli("eval", "--resume", tmp_path, "-n", "3", "--url", echo_server.url)
    assert r.exit_code == 2 and "--url, --episodes" in r.stderr
    assert "Traceback" not in r.output
    r = cli("eval", "--resume", tmp_path / "nope")
    assert r.exit_code == 2 and "is not an eval run directory: no run.json" in r.stderr


@pytest.mark.parametrize("cut", ['{"episode": 3', '{"episode": 3, "group": 3}', "not json"])
def test_kept_episodes_drop_cut_off_lines(tmp_path, cut):
    from envkit.evaluation.records import EpisodeRecord, StepRecord
    from envkit.evaluation.rundir import kept_episodes

    recs = [
        EpisodeRecord(episode=i, group=i, member=0, seed=i, reset={"observation": {}},
                      steps=[StepRecord(step=1, action={"message": "x"}, reward=0.5, done=True)],
                      return_=0.5, done=True)
        for i in range(3)
    ]  # fmt: skip
    lines = [json.dumps(r.to_json()) for r in recs]
    (tmp_path / "trajectories.jsonl").write_text("\n".join([*lines, lines[1], cut]))
    kept, dropped = kept_episodes(tmp_path)
    assert [e.to_json() for e in kept] == [r.to_json() for r in recs]  # round trip
    assert dropped == 2  # the repeated episode and the cut-off line
