"""Statistics of `envkit eval` against hand-computed values."""

import math

import pytest

from envkit.evaluation.stats import describe, histogram, ks_for, pass_at_k, percentile, summarize


def test_pass_at_k_hand_values():
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2) = 1 - 1/3
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_ks_are_powers_of_two_and_the_group_size():
    assert ks_for(1) == [1]
    assert ks_for(3) == [1, 2, 3]
    assert ks_for(8) == [1, 2, 4, 8]
    assert ks_for(10) == [1, 2, 4, 8, 10]


def test_describe_percentile_histogram():
    d = describe([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    assert (d["mean"], d["std"], d["min"], d["max"]) == (0.5, 0.5, 0.0, 1.0)
    assert describe([])["mean"] is None
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4, 5], 95) == pytest.approx(4.8)
    assert percentile([], 50) is None
    h = histogram([0.0, 0.05, 0.5, 1.0], bins=4, lo=0.0, hi=1.0)
    assert [c for _, _, c in h] == [2, 0, 1, 1]
    assert h[-1][1] == 1.0
    assert histogram([0.7, 0.7]) == [(0.7, 0.7, 2)]


def _ep(i, group, seed, rewards, success, *, parse=0, usage=None):
    steps = [
        {
            "reward": r,
            "latency_s": 0.01 * (k + 1),
            "policy_latency_s": 0.1,
            **({"usage": usage} if usage else {}),
        }
        for k, r in enumerate(rewards)
    ]
    steps += [
        {
            "reward": 0.0,
            "parse_error": True,
            "error": "no JSON",
            "latency_s": None,
            "policy_latency_s": 0.1,
        }
        for _ in range(parse)
    ]
    return {
        "episode": i,
        "group": group,
        "member": i % 3,
        "seed": seed,
        "steps": steps,
        "return": float(sum(r or 0 for r in rewards)),
        "success": success,
        "error": None,
        "truncated": not success,
    }


def test_summarize_groups_by_hand():
    eps = [
        _ep(0, 0, 5, [1.0], True),
        _ep(1, 0, 5, [0.0, 0.0], False),
        _ep(2, 0, 5, [0.25, 0.0], False, parse=1),
        _ep(3, 1, 6, [1.0], True),
        _ep(4, 1, 6, [0.5, 1.0], True),
        _ep(
            5,
            1,
            6,
            [None, 0.0],
            False,
            usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        ),
    ]
    s = summarize(eps, group_size=3)
    assert s["episodes"] == 6 and s["groups"] == 2 and s["complete_groups"] == 2
    returns = [1.0, 0.0, 0.25, 1.0, 1.5, 0.0]
    assert s["return"]["mean"] == pytest.approx(sum(returns) / 6)
    mean = sum(returns) / 6
    assert s["return"]["std"] == pytest.approx(math.sqrt(sum((r - mean) ** 2 for r in returns) / 6))
    assert s["success_rate"] == pytest.approx(3 / 6)
    g0, g1 = s["pass_at_k"]["groups"]
    assert (g0["seed"], g0["successes"], g1["successes"]) == (5, 1, 2)
    assert g0["pass_at_k"] == {"1": pytest.approx(1 / 3), "2": pytest.approx(2 / 3), "3": 1.0}
    assert s["pass_at_k"]["mean"]["1"] == pytest.approx(0.5)
    assert s["pass_at_k"]["mean"]["2"] == pytest.approx((2 / 3 + 1) / 2)
    assert s["mean_steps"] == pytest.approx((1 + 2 + 3 + 1 + 2 + 2) / 6)
    assert s["parse_failures"] == 1 and s["null_rewards"] == 1
    assert s["usage"] == {"prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10}
    # step rewards: 11 steps, null counts as 0
    assert s["steps"] == 11
    assert s["step_reward"]["max"] == 1.0
    assert s["latency_s"]["env_step"]["p50"] == pytest.approx(0.01)


def test_summarize_partial_group_is_left_out_of_the_mean():
    s = summarize(
        [_ep(0, 0, 0, [1.0], True), _ep(1, 0, 0, [0.0], False), _ep(2, 1, 1, [1.0], True)],
        group_size=2,
    )
    assert s["complete_groups"] == 1
    assert s["pass_at_k"]["mean"] == {"1": 0.5, "2": 1.0}
    assert s["pass_at_k"]["groups"][1]["pass_at_k"] == {"1": 1.0}


def test_plot_written_or_skipped_with_a_note(tmp_path, monkeypatch):
    import sys

    from envkit.evaluation.output import write_plot

    eps = [{"episode": i, "return": r, "success": r >= 1.0} for i, r in enumerate([0.2, 1.0])]
    assert write_plot(tmp_path / "a.png", eps, reward_range=(0.0, 1.0), title="t") is None
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert "no finished episodes" in write_plot(
        tmp_path / "b.png", [], reward_range=(0, 1), title="t"
    )
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the `plot` extra is missing
    note = write_plot(tmp_path / "c.png", eps, reward_range=(0.0, 1.0), title="t")
    assert "matplotlib is not installed" in note and "rl-envkit[plot]" in note
    assert not (tmp_path / "c.png").exists()


def test_flat_groups_are_the_groups_whose_returns_are_all_equal():
    from envkit.evaluation.stats import flat_groups_warning

    eps = [
        _ep(0, 0, 0, [0.0], False),
        _ep(1, 0, 0, [0.0, 0.0], False),  # group 0: 0, 0 -> flat
        _ep(2, 1, 1, [0.5], False),
        _ep(3, 1, 1, [0.25, 0.25], False),  # group 1: 0.5, 0.5 -> flat
        _ep(4, 2, 2, [1.0], True),
        _ep(5, 2, 2, [0.0], False),  # group 2: 1, 0 -> not flat
        _ep(6, 3, 3, [1.0], True),  # group 3: one rollout (the other lost) -> not judged
    ]
    s = summarize(eps, group_size=2)
    assert [g["flat"] for g in s["pass_at_k"]["groups"]] == [True, True, False, None]
    assert s["flat_groups"] == {"flat": 2, "groups": 3, "fraction": pytest.approx(2 / 3)}
    message, hint = flat_groups_warning(s)
    assert message == (
        "GRPO gets no gradient from 2 of 3 groups: in each, every rollout got the same return."
    )
    assert "partial credit" in hint and "`envkit validate`" in hint

    # half flat is not "most": no warning; one rollout per seed: nothing to judge
    half = summarize(eps[:2] + eps[4:6], group_size=2)
    assert half["flat_groups"]["fraction"] == 0.5 and flat_groups_warning(half) is None
    single = summarize([_ep(0, 0, 0, [0.0], False)], group_size=1)
    assert single["flat_groups"] == {"flat": 0, "groups": 0, "fraction": None}
    assert flat_groups_warning(single) is None
