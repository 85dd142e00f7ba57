"""Sizing a pool: N = ceil(S x (1 + headroom) / C), C read from the app module."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.errors import UsageError
from envkit.scale.capacity import plan_capacity, replicas_for, replicas_per_node

APP = """\
import os
from openenv.core.env_server.http_server import create_app
CAP = int(os.environ.get("MAX_CONCURRENT_ENVS", "{default}"))
app = create_app(Env, Action, Observation{kw})
"""


def _env(tmp_path: Path, kw: str = ", max_concurrent_envs=CAP", default: str = "8") -> EnvDir:
    (tmp_path / "server").mkdir(exist_ok=True)
    (tmp_path / "server" / "app.py").write_text(APP.format(kw=kw, default=default))
    return EnvDir(tmp_path)


def test_capacity_is_read_from_the_app_module_default(tmp_path: Path) -> None:
    cap = _env(tmp_path).capacity
    assert (cap.sessions, cap.file, cap.line) == (8, "server/app.py", 4)


@pytest.mark.parametrize(
    ("sessions", "per_replica", "headroom", "expected"),
    [(256, 16, 0.1, 18), (12, 4, 0.0, 3), (12, 4, 0.1, 4), (1, 16, 0.1, 1), (40, 4, 0.1, 11)],
)
def test_replicas_for_is_the_ceiling_with_headroom(
    sessions: int, per_replica: int, headroom: float, expected: int
) -> None:
    assert replicas_for(sessions, per_replica, headroom) == expected


def test_plan_from_sessions_uses_the_app_default_and_the_node(tmp_path: Path) -> None:
    plan = plan_capacity(_env(tmp_path), sessions=64, node=(8.0, 4096))
    assert (plan.per_replica, plan.replicas, plan.total) == (8, 9, 72)
    assert plan.per_node is None  # no manifest, no declared resources
    assert "9 replicas x 8 sessions" in plan.summary()


def test_the_replicas_environment_variable_wins(tmp_path: Path) -> None:
    plan = plan_capacity(_env(tmp_path), replicas=3, env_vars={"MAX_CONCURRENT_ENVS": "4"})
    assert (plan.replicas, plan.per_replica, plan.total) == (3, 4, 12)


def test_per_node_is_the_tighter_of_cores_and_memory() -> None:
    assert replicas_per_node(1.0, 512, 8.0, 2048) == 4
    assert replicas_per_node(0.5, 512, 8.0, 16384) == 16
    assert replicas_per_node(None, None, 8.0, 2048) is None
    assert replicas_per_node(4.0, None, 2.0, 0) == 1


@pytest.mark.parametrize(
    ("kw", "default", "message"),
    [
        ("", "8", "accepts 1 session"),
        (", max_concurrent_envs=CAP", "1", "accepts 1 session"),
        (", max_concurrent_envs=compute()", "8", "Cannot read `max_concurrent_envs`"),
    ],
)
def test_refuses_an_environment_without_concurrent_sessions(
    tmp_path: Path, kw: str, default: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        plan_capacity(_env(tmp_path, kw, default), sessions=10)


def test_exactly_one_of_sessions_and_replicas(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="exactly one"):
        plan_capacity(_env(tmp_path), sessions=4, replicas=2)
    with pytest.raises(UsageError, match="not an integer"):
        plan_capacity(_env(tmp_path), replicas=2, env_vars={"MAX_CONCURRENT_ENVS": "x"})


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        (", concurrency_config=ConcurrencyConfig(max_concurrent_envs=CAP, session_timeout=60)", 8),
        (", concurrency_config=CONFIG", 8),
        (", concurrency_config=ConcurrencyConfig(session_timeout=60)", 1),
    ],
)
def test_capacity_is_read_from_a_concurrency_config_too(
    tmp_path: Path, kw: str, expected: int
) -> None:
    """OpenEnv 0.10's second way, the one that also sets an idle-session timeout."""
    env = _env(tmp_path, kw)
    app = env.root / "server" / "app.py"
    config = "CONFIG = ConcurrencyConfig(max_concurrent_envs=CAP, session_timeout=60)\n"
    app.write_text(app.read_text().replace("app = ", config + "app = "))
    assert EnvDir(env.root).capacity.sessions == expected
