"""EK2xx project rules (envkit.validation.rules.project): pyproject.toml and uv.lock."""

from __future__ import annotations

from pathlib import Path

from envkit.validation import validate
from tests.validation.test_static_rules import append


def test_invalid_toml_is_located(clean_env: Path) -> None:
    append("pyproject.toml", "\n[broken\n")(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK202"]
    assert report.findings[0].location.line is not None
