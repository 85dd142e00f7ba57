"""Malformed Dockerfile numbers are bounded in the one parser: a huge `EXPOSE` port or
`--port` argument is a located EK307 finding (exit 1), never Python's int-string limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.envdir.dockerfile import parse, port_number, shown

HUGE = "9" * 4000


def _replace(root: Path, old: str, new: str) -> int:
    """Replace ``old`` in the Dockerfile; returns its 1-based line."""
    path = root / "Dockerfile"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return text[: text.index(old)].count("\n") + 1


@pytest.mark.parametrize(
    ("text", "want"),
    [("8000", 8000), ("1", 1), ("65535", 65535), ("0", None), ("65536", None)]
    + [("08000", 8000), (HUGE, None), ("", None), ("80a", None), ("²", None)],
)
def test_port_number_checks_the_text_before_int(text: str, want: int | None) -> None:
    assert port_number(text) == want


def test_parser_keeps_a_huge_expose_as_a_bounded_token() -> None:
    parsed = parse(f"FROM python:3.11-slim\nEXPOSE {HUGE}/tcp 8000\n")
    assert parsed.error is None
    assert [(e.port, e.instruction.line) for e in parsed.final.expose] == [(None, 2), (8000, 2)]
    assert len(shown(HUGE)) < 60


def test_huge_expose_is_a_located_ek307_and_exit_1(cli, clean_env: Path) -> None:
    line = _replace(clean_env, "EXPOSE 8000", f"EXPOSE {HUGE}")
    result = cli("validate", clean_env, "--static", "-f", "json")
    assert result.exit_code == 1, result.output
    found = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "EK307"]
    assert len(found) == 1, found
    assert found[0]["location"]["file"] == "Dockerfile"
    assert found[0]["location"]["line"] == line
    assert "(4000 characters)" in found[0]["message"]
    assert len(found[0]["message"]) < 300
    assert cli("validate", clean_env, "--static").exit_code == 1


def test_huge_cmd_port_is_a_located_ek307(cli, clean_env: Path) -> None:
    df = clean_env / "Dockerfile"
    df.write_text(df.read_text() + f'CMD ["uvicorn", "server.app:app", "--port", "{HUGE}"]\n')
    result = cli("validate", clean_env, "--static", "-f", "json")
    assert result.exit_code == 1, result.output
    found = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "EK307"]
    assert [f["location"]["line"] for f in found] == [len(df.read_text().splitlines())]
