"""`envkit eval` as users run it: server started from PATH and stopped, JSON on stdout, the
text report and histogram, Ctrl-C writing partial results, no orphan processes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _pids_in(root: Path) -> set[int]:
    """Live processes whose working directory is ``root`` (servers and policies run there)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(root):
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if stat != "Z":
                        out.add(int(entry.name))
            except OSError:
                continue
    return out


def test_path_starts_and_stops_the_server_json_output(cli, echo_env, copy_env, tmp_path):
    env = copy_env(echo_env)
    out = tmp_path / "run"
    r = cli(
        "eval",
        env,
        "--policy",
        "oracle",
        "--python",
        sys.executable,
        "-n",
        "2",
        "-g",
        "2",
        "-c",
        "2",
        "--format",
        "json",
        "--out",
        out,
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["episodes"] == 4 and summary["success_rate"] == 1.0
    assert summary["environment"]["server_started_by_envkit"] is True
    assert summary["files"]["summary"] == str(out / "summary.json")
    assert json.loads((out / "summary.json").read_text())["pass_at_k"]["mean"]["2"] == 1.0
    assert len((out / "trajectories.jsonl").read_text().splitlines()) == 4
    assert not _pids_in(env), "the environment server (or a policy) outlived the command"
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporaries


def test_text_report_and_histogram(cli, echo_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("eval", "--url", echo_server.url, "--policy", "random", "-n", "3", "--seed", "1")
    assert r.exit_code == 0, r.output
    assert "return        mean" in r.stdout and "(per episode: sum of step rewards)" in r.stdout
    assert "success       0.0%" in r.stdout
    assert "Episode returns (3 episodes):" in r.output and "│" in r.output
    assert "episode 3/3  seed 3" in r.output  # plain progress lines when not a TTY
    runs = list((tmp_path / "evals").iterdir())  # default --out: evals/<name>-<time>
    assert len(runs) == 1 and runs[0].name.startswith("127.0.0.1-")
    assert (runs[0] / "summary.json").is_file()


def test_usage_errors_exit_2(cli, echo_server, tmp_path):
    r = cli(
        "eval",
        "--url",
        echo_server.url,
        "--model",
        "m",
        "--system-prompt",
        tmp_path / "missing.txt",
    )
    assert r.exit_code == 2 and "--system-prompt" in r.output
    r = cli("eval", "--url", echo_server.url, "--policy", "random", "--format", "xml")
    assert r.exit_code == 2
    r = cli("eval", "--url", echo_server.url, "--model", "m", "--api-key-env", "NOPE_NOT_SET")
    assert r.exit_code == 2 and "$NOPE_NOT_SET is not set" in r.output


def test_ctrl_c_writes_partial_results(echo_env, copy_env, openai_stub, tmp_path):
    env = copy_env(echo_env)
    out = tmp_path / "partial"
    child_env = dict(os.environ, HF_TOKEN=openai_stub.key, NO_COLOR="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envkit",
            "eval",
            str(env),
            "--python",
            sys.executable,
            "--model",
            "slow:250",
            "--base-url",
            openai_stub.base_url,
            "-n",
            "40",
            "-c",
            "2",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env,
    )
    lines = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("episode 3/40"):
                break
        assert any(x.startswith("episode 3/40") for x in lines), "".join(lines)
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, rest
    assert "Interrupted" in rest and str(out) in rest
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["complete"] is False
    assert 3 <= summary["episodes"] < 40
    eps = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(eps) == summary["episodes"] and all(e["success"] for e in eps)
    assert "return        mean 1.000" in stdout  # the partial summary is shown too
    time.sleep(0.2)
    assert not _pids_in(env), "the environment server outlived Ctrl-C"


@pytest.mark.skipif(
    not (Path(__file__).parents[2] / "templates" / "guess").is_dir(),
    reason="templates/guess not written yet",
)
def test_random_and_oracle_on_the_guess_template(tmp_path):
    from envkit.envdir.manifest import read_manifest
    from envkit.evaluation import evaluate
    from envkit.scaffold import init_project
    from envkit.server import start_server

    env = init_project("guess-env", template="guess", output_dir=tmp_path, lock=False).path
    server = start_server(env, read_manifest(env).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        oracle = evaluate(
            env,
            url=server.url,
            policy="oracle",
            episodes=3,
            group_size=2,
            concurrency=2,
            python=sys.executable,
        )
        rand = evaluate(env, url=server.url, policy="random", episodes=3, seed=3)
    finally:
        server.stop()
    s = oracle.summary
    assert s["success_rate"] == 1.0 and s["pass_at_k"]["mean"]["2"] == 1.0
    assert s["mean_steps"] > 1  # a multi-step game: the oracle searches
    r = rand.summary
    assert r["episodes"] == 3 and r["invalid_actions"] == 0 and r["episode_errors"] == 0
    assert all(1 <= st.action["guess"] <= 100 for e in rand.episodes for st in e.steps)


def test_eval_help_is_light():
    probe = (
        "import sys\nsys.argv = ['envkit', 'eval', '--help']\nfrom envkit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('openai', 'httpx', 'websockets', 'matplotlib', 'uvicorn', "
        "'openenv', 'docker', 'huggingface_hub', 'jinja2', 'hypothesis') "
        "if m in sys.modules]\nsys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert "Examples:" in proc.stdout and "--group-size" in proc.stdout
    assert "[default: HF_TOKEN, then OPENAI_API_KEY]" in proc.stdout  # not eaten as markup
    assert "HEAVY=\n" in proc.stderr, proc.stderr
