"""`envkit deploy ray` without a Ray cluster: options, sizing and the errors that come before
Ray is reached (tests/scale/test_ray.py deploys on a real cluster)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envkit.errors import UsageError
from envkit.scale.ray_deploy import app_name, autoscaling_config, parse_autoscale


def test_autoscale_is_min_colon_max() -> None:
    assert parse_autoscale("1:4") == (1, 4)
    assert parse_autoscale("2:2") == (2, 2)
    for bad in ("4", "0:2", "3:1", "a:b", "1:"):
        with pytest.raises(UsageError):
            parse_autoscale(bad)


def test_autoscaling_targets_three_quarters_of_a_replicas_sessions() -> None:
    """C=4 -> 3 ongoing requests per replica (the setting SCALE.md measured scaling 1 -> 3
    on open sessions and back)."""
    assert autoscaling_config(1, 3, 4) == {
        "min_replicas": 1,
        "max_replicas": 3,
        "target_ongoing_requests": 3,
    }
    assert autoscaling_config(1, 2, 1)["target_ongoing_requests"] == 1
    assert autoscaling_config(2, 8, 16)["target_ongoing_requests"] == 12


def test_default_application_name_is_the_manifests(echo_env: Path) -> None:
    from envkit.envdir import EnvDir

    assert app_name(EnvDir(echo_env)) == "echo_env"


def test_interpreter_without_ray_names_the_install_line(cli, echo_env: Path) -> None:
    """The test interpreter has no ray (an optional extra), and envkit never imports it."""
    result = cli("deploy", "ray", str(echo_env), "--python", sys.executable,
                 "-e", "MAX_CONCURRENT_ENVS=4")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert 'pip install "ray[serve]>=2.60"' in result.output
    assert "binds all interfaces and has no authentication" in result.output
    assert "Traceback" not in result.output
    assert "ray" not in sys.modules


def test_replicas_and_autoscale_are_exclusive(cli, echo_env: Path) -> None:
    result = cli("deploy", "ray", str(echo_env), "--replicas", "2", "--autoscale", "1:3",
                 "--python", sys.executable)  # fmt: skip
    assert result.exit_code == 2
    assert "either --replicas N or --autoscale MIN:MAX" in result.output


def test_a_single_session_environment_is_refused_before_ray(cli, echo_env: Path) -> None:
    result = cli("deploy", "ray", str(echo_env), "--python", sys.executable,
                 "-e", "MAX_CONCURRENT_ENVS=1")  # fmt: skip
    assert result.exit_code == 2
    assert "does not support concurrent sessions" in result.output
