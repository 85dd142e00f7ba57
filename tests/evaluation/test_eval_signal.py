"""Training signal where the model plays: `envkit eval -g N` reports the groups whose rollouts
all got the same return (GRPO learns nothing from them) in its text and JSON summaries, and
warns on stderr when most groups are flat. Against real servers on 127.0.0.1: the flaky
server (every return set by the test) and the guess template (partial credit)."""

from __future__ import annotations

import json
import sys

from envkit.evaluation.stats import FLAT_WARN_FRACTION

WARNING = "warning: GRPO gets no gradient from 4 of 4 groups: in each, every rollout got the "


def test_every_return_zero_reports_all_groups_flat_and_warns(cli, flaky_server, tmp_path):
    flaky_server.knobs.final_reward = 0.0
    args = ("eval", "--url", flaky_server.url, "--policy", "random", "-n", "4", "-g", "4")
    r = cli(*args, "--out", tmp_path / "text")
    assert r.exit_code == 0, r.output
    assert (
        "flat groups   GRPO gets no gradient from 4 of 4 groups (every rollout of the seed got "
        "the same return)"
    ) in r.stdout
    assert WARNING + "same return (all 0)." in r.stderr
    assert "Give partial credit for progress toward the answer, use easier tasks" in r.stderr
    assert "GRPO" not in r.stdout.split("flat groups", 1)[0]  # the warning is not data

    r = cli(*args, "--format", "json", "--out", tmp_path / "json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["flat_groups"] == {"flat": 4, "groups": 4, "fraction": 1.0}
    assert [g["flat"] for g in s["pass_at_k"]["groups"]] == [True] * 4
    assert "flat_groups" in s["definitions"]
    assert WARNING in r.stderr  # on stderr whatever the format: stdout stays JSON


def test_the_guess_template_reports_the_share_it_measures(cli, tmp_path):
    from envkit.envdir.manifest import read_manifest
    from envkit.scaffold import init_project
    from envkit.server import start_server

    env = init_project("guess-env", template="guess", output_dir=tmp_path, lock=False).path
    server = start_server(env, read_manifest(env).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=90)
        out = tmp_path / "run"
        r = cli(
            "eval", env, "--url", server.url, "--policy", "random", "-n", "6", "-g", "4",
            "-c", "2", "--out", out,
        )  # fmt: skip
    finally:
        server.stop()
    assert r.exit_code == 0, r.output
    # the share, recomputed from the trajectories: groups whose 4 returns are all equal
    returns: dict[int, list[float]] = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        episode = json.loads(line)
        returns.setdefault(episode["group"], []).append(episode["return"])
    assert sorted(len(v) for v in returns.values()) == [4] * 6
    flat = sum(1 for v in returns.values() if max(v) - min(v) <= 1e-9)
    s = json.loads((out / "summary.json").read_text())
    assert s["flat_groups"] == {"flat": flat, "groups": 6, "fraction": flat / 6}
    assert f"GRPO gets no gradient from {flat} of 6 groups" in r.stdout
    warned = "warning: GRPO gets no gradient" in r.stderr
    assert warned == (flat / 6 > FLAT_WARN_FRACTION)
