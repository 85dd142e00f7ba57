"""EK524 and EK525 end to end, on the environments of tests/validation/envs/blind/: the tools
template with the newcomer's two mistakes (an observation field showing the answer;
character-overlap credit that pays garbage) and as rendered; a tagged-answer quiz whose rubric
kept a math task's credit for three digits, and the same quiz fixed. The exploit the search
finds is replayed with the command its finding prints."""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.validation import validate
from envkit.validation.engine import Episode, ServerPlayer, Settings
from envkit.validation.options import RunOptions
from envkit.validation.rules import blind_play
from envkit.validation.rules.exploit_search import _mutate_value
from envkit.wire import StepResult

ENVS = Path(__file__).parent / "envs" / "blind"


@pytest.fixture
def blind_env(tmp_path: Path):
    """A copy of one environment of envs/blind (validate writes nothing into the tests)."""

    def copy(name: str) -> Path:
        return Path(shutil.copytree(ENVS / name, tmp_path / name))

    return copy


def _play(root: Path, *codes: str):
    return validate(root, python=sys.executable, select=list(codes), train_path=False)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, says",
    [
        ("tools_format_example_leaks", "`every-number`"),
        ("tools_char_overlap_credit", "`long-repetition`"),
    ],
)
def test_the_newcomers_tools_mistakes_are_found(blind_env, name: str, says: str) -> None:
    report = _play(blind_env(name), "EK524")
    found = [f for f in report.findings if f.code == "EK524"]
    assert found and says in found[0].message, [f.message for f in report.findings]
    assert "arguments.amount" in found[0].message  # played through the tool call's arguments


@pytest.mark.slow
def test_the_tools_template_pays_no_question_blind_policy(blind_env) -> None:
    report = _play(blind_env("tools_template"), "EK524", "EK525")
    assert not [f for f in report.findings if f.code in ("EK524", "EK525")]
    assert {c.code: c.status for c in report.checks}["EK524"] == "passed"


@pytest.mark.slow
def test_the_search_finds_a_minimal_exploit_and_its_replay_reproduces_it(
    blind_env, tmp_path: Path
) -> None:
    root = blind_env("tag_and_digits")
    report = _play(root, "EK524", "EK525")
    found = [f for f in report.findings if f.code == "EK525"]
    assert found, [f.message for f in report.findings]
    data = found[0].data
    replies = [a["reply"] for a in data["actions"]]
    # shrunk: one action, the tag and three digits, nothing else
    assert len(replies) == 1 and "<answer>" in replies[0]
    assert sum(c.isdigit() for c in replies[0]) == 3 and len(replies[0]) == len("<answer>") + 3
    argv = shlex.split(data["replay"])
    assert argv[:2] == ["envkit", "eval"]
    out = subprocess.run(
        [sys.executable, "-m", "envkit", *argv[1:], "--python", sys.executable, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1"},
        cwd=tmp_path,  # eval writes its trajectories under ./evals
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["return"]["mean"] == pytest.approx(0.6)


@pytest.mark.slow
def test_no_fixed_reply_pays_the_fixed_quiz(blind_env) -> None:
    report = _play(blind_env("tag_required_exact"), "EK524", "EK525")
    assert not [f for f in report.findings if f.code in ("EK524", "EK525")]
    assert {c.code: c.status for c in report.checks}["EK525"] == "passed"


def test_the_search_mutates_an_integer_beyond_a_floats_range() -> None:
    """An arithmetic task's answer slot holds ints with hundreds of digits after a few
    doublings; scaling one must not overflow (it crashed the search as EK430)."""
    rng = random.Random(0)
    value: object = 10**400
    for _ in range(300):
        value = _mutate_value(value, ["7", "x"], rng)
        assert isinstance(value, int | float)


def test_a_wrong_answer_paid_differently_on_one_seed_is_ek412() -> None:
    """A grader drawing its tests without the seed: the corrupted oracle's program, sent
    twice on seed 0, passed the first draw and failed the second."""

    def played(reward: float) -> blind_play.Played:
        ep = Episode(0, {"prompt": "is_prime"})
        action = {"code": "def is_prime(n): return n % 2 == 1"}
        ep.record(StepResult({"feedback": ""}, reward, True), action)
        return blind_play.Played([action], ep, reward)

    engine = ServerPlayer(Settings.resolve(None, RunOptions(episodes=1, seed=0)))
    plan = blind_play.Plan(0, {"code": ""}, [], {}, 1.0, 1)
    blind_play._rewards_drift(engine, plan, [("off-by-one", played(0.0), played(0.0))])
    assert engine.findings == []  # scored the same both times: no finding
    blind_play._rewards_drift(engine, plan, [("off-by-one", played(1.0), played(0.0))])
    (f,) = engine.findings
    assert f.code == "EK412" and "`off-by-one`" in f.message and "earned 1 and then 0" in f.message
    blind_play._rewards_drift(engine, plan, [("truncated", played(0.0), played(1.0))])
    assert len(engine.findings) == 1  # reported once
