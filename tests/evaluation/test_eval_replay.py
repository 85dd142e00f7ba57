"""`envkit eval replay DIR [PATH | --url URL]`: a run's saved episodes replayed against other
versions of the guess environment: an identical copy (nothing changed, exit 0), a copy whose
reward for a hit changed on odd targets (exactly those episodes named, exit 1), and a copy
whose reward is not deterministic (reported as such, not as changed)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test serves an environment

HIT = "    if guess == target:\n        return 1.0\n"
EPISODES = 6


def _env_file(env: Path) -> Path:
    (path,) = (env / "server").glob("*_environment.py")
    return path


def _version(base: Path, parent: Path, name: str, hit: str | None = None) -> Path:
    """A copy of ``base`` in ``parent/name``, its reward for a hit replaced by ``hit``."""
    dst = parent / name
    shutil.copytree(base, dst, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    if hit is not None:
        src = _env_file(dst)
        text = src.read_text()
        assert HIT in text, "the guess template's score() changed: update this test"
        src.write_text(text.replace(HIT, hit))
    return dst


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> tuple[Path, Path]:
    """(the guess environment, a run directory of 6 oracle episodes played on it)."""
    from envkit.evaluation import evaluate
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("replay")
    env = init_project("guess-env", template="guess", output_dir=parent, lock=False).path
    run = parent / "run"
    result = evaluate(env, policy="oracle", episodes=EPISODES, out_dir=run, python=sys.executable)
    assert result.summary["success_rate"] == 1.0
    return env, run


def _targets(run: Path) -> dict[int, int]:
    """Episode -> the hidden number (the oracle's last, winning guess)."""
    eps = [json.loads(x) for x in (run / "trajectories.jsonl").read_text().splitlines()]
    return {e["episode"]: e["steps"][-1]["action"]["guess"] for e in eps}


def test_identical_copy_over_url_reports_nothing(cli, saved_run, tmp_path):
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    env, run = saved_run
    same = _version(env, tmp_path, "guess-same")
    server = start_server(same, read_manifest(same).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        r = cli("eval", "replay", run, "--url", server.url)
    finally:
        server.stop()
    assert r.exit_code == 0, r.output
    assert f"changed 0, not deterministic 0, unchanged {EPISODES}, skipped 0" in r.stdout
    assert r.stderr.count("replayed ") == EPISODES


def test_changed_reward_names_exactly_the_changed_episodes(cli, saved_run, tmp_path):
    env, run = saved_run
    odd_hit = "    if guess == target:\n        return 0.75 if target % 2 else 1.0\n"
    changed = _version(env, tmp_path, "guess-v2", odd_hit)
    r = cli("eval", "replay", run, changed, "--python", sys.executable, "--format", "json")
    assert r.exit_code == 1, r.output
    report = json.loads(r.stdout)
    expected = sorted(ep for ep, target in _targets(run).items() if target % 2)
    assert 0 < len(expected) < EPISODES  # the seeds give both kinds: the test tells them apart
    assert report["changed"] == expected and report["not_deterministic"] == []
    for result in report["results"]:
        if result["status"] == "changed":
            assert result["saved_return"] == 1.0 and result["new_return"] == 0.75
            (change,) = result["changes"]
            assert change["saved"]["reward"] == 1.0 and change["new"]["reward"] == 0.75
    # The text report names them too.
    r = cli("eval", "replay", run, changed, "--python", sys.executable)
    assert r.exit_code == 1
    for ep in expected:
        assert f"changed            episode {ep} (seed {ep}): return 1 -> 0.75" in r.stdout


def test_nondeterministic_reward_is_reported_as_such(cli, saved_run, tmp_path):
    env, run = saved_run
    noisy_hit = (
        "    if guess == target:\n"
        "        return 1.0 - __import__('random').SystemRandom().random() * 1e-3\n"
    )
    noisy = _version(env, tmp_path, "guess-noisy", noisy_hit)
    r = cli("eval", "replay", run, noisy, "--python", sys.executable, "--format", "json")
    assert r.exit_code == 0, r.output  # nothing is known to have changed
    report = json.loads(r.stdout)
    assert report["not_deterministic"] == list(range(EPISODES)) and report["changed"] == []


def test_replay_of_a_directory_without_episodes_is_a_usage_error(cli, tmp_path):
    r = cli("eval", "replay", tmp_path, "--url", "http://127.0.0.1:9")
    assert r.exit_code == 2 and "holds no finished episode to replay" in r.stderr
