"""The environment's own logic, tested without a server: `pytest -q`."""

import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from models import {{ cookiecutter.class_prefix }}Action  # noqa: E402
from server.{{ cookiecutter.package_name }}_environment import MAX_STEPS, {{ cookiecutter.class_prefix }}Environment  # noqa: E402
from server.oracle import policy  # noqa: E402


def play(env, actions):
    rewards = []
    for message in actions:
        obs = env.step({{ cookiecutter.class_prefix }}Action(message=message))
        rewards.append(obs.reward)
        if obs.done:
            break
    return rewards, obs


def test_same_seed_same_episode():
    a, b = {{ cookiecutter.class_prefix }}Environment(), {{ cookiecutter.class_prefix }}Environment()
    assert a.reset(seed=7).target == b.reset(seed=7).target
    assert play(a, ["amber", "basil"])[0] == play(b, ["amber", "basil"])[0]


def test_seeds_differ():
    env = {{ cookiecutter.class_prefix }}Environment()
    targets = {env.reset(seed=s).target for s in range(20)}
    assert len(targets) > 10


def test_episode_id_is_honoured():
    env = {{ cookiecutter.class_prefix }}Environment()
    env.reset(seed=0, episode_id="episode-42")
    assert env.state.episode_id == "episode-42"


@pytest.mark.parametrize("message", ["", " ", "x" * 200, "amber basil cedar", "0"])
def test_reward_is_bounded(message):
    env = {{ cookiecutter.class_prefix }}Environment()
    env.reset(seed=1)
    reward = env.step({{ cookiecutter.class_prefix }}Action(message=message)).reward
    assert math.isfinite(reward) and 0.0 <= reward <= 1.0


def test_empty_answer_scores_zero():
    env = {{ cookiecutter.class_prefix }}Environment()
    env.reset(seed=3)
    assert env.step({{ cookiecutter.class_prefix }}Action(message="")).reward == 0.0


def test_episode_ends_within_max_steps_and_counts_steps():
    env = {{ cookiecutter.class_prefix }}Environment()
    env.reset(seed=2)
    rewards, obs = play(env, ["wrong"] * (MAX_STEPS + 3))
    assert obs.done and len(rewards) == MAX_STEPS
    assert env.state.step_count == MAX_STEPS


def test_step_after_done_gives_nothing():
    env = {{ cookiecutter.class_prefix }}Environment()
    obs = env.reset(seed=2)
    env.step({{ cookiecutter.class_prefix }}Action(message=obs.target))
    after = env.step({{ cookiecutter.class_prefix }}Action(message=obs.target))
    assert after.done and after.reward == 0.0 and env.state.step_count == 1


def test_oracle_reaches_max_reward():
    env = {{ cookiecutter.class_prefix }}Environment()
    obs = env.reset(seed=5)
    result = env.step({{ cookiecutter.class_prefix }}Action(**policy(obs.model_dump())))
    assert result.reward == 1.0 and result.done
