"""EK2xx layout rules (envkit.validation.rules.layout): an MCP environment's models."""

from __future__ import annotations

from pathlib import Path

from envkit.validation import validate
from tests.validation.test_static_rules import delete, edit


def test_mcp_environment_needs_no_models_py(clean_env: Path) -> None:
    """OpenEnv's echo_env serves openenv's MCP types and has no models.py (issue #13 item 3)."""
    mcp = "from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation"
    for old in (
        "from ..models import EchoEnvAction, EchoEnvObservation",
        "from models import EchoEnvAction, EchoEnvObservation",
    ):
        edit("server/app.py", old, mcp)(clean_env)
    edit(
        "server/app.py",
        "    EchoEnvAction,\n    EchoEnvObservation,\n",
        "    CallToolAction,\n    CallToolObservation,\n",
    )(clean_env)
    delete("models.py")(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.message) for f in report.findings] == []
    ek207 = next(c for c in report.checks if c.code == "EK207")
    assert ek207.status == "skipped" and "CallToolAction" in (ek207.reason or "")


def test_mcp_action_alone_still_needs_models_py(clean_env: Path) -> None:
    edit(
        "server/app.py",
        "from ..models import EchoEnvAction, EchoEnvObservation",
        "from openenv.core.env_server.mcp_types import CallToolAction",
    )(clean_env)
    delete("models.py")(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.location.file) for f in report.findings] == [("EK205", "models.py")]
