"""`envkit validate` in a directory that is not an environment refuses at once (exit 2, one
line naming the missing openenv.yaml) instead of scanning what the directory holds, and points
at an environment one level down or above."""

from __future__ import annotations

import time
from pathlib import Path

import pytest


@pytest.fixture
def wordle(tmp_path: Path) -> Path:
    """A directory that looks like an environment to the refusal: a manifest and a server."""
    root = tmp_path / "wordle"
    (root / "server").mkdir(parents=True)
    (root / "openenv.yaml").write_text("name: wordle\napp: server.app:app\n")
    (root / "server" / "app.py").write_text("app = None\n")
    return root


def test_empty_directory_is_refused_at_once(tmp_path: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    res = cli("validate")
    elapsed = time.monotonic() - t0
    assert res.exit_code == 2, res.output
    assert elapsed < 5.0  # the target is well under 1 s; this bound only catches a scan
    assert "openenv.yaml" in res.stderr and "nothing was checked" in res.stderr
    assert "did you mean" not in res.stderr.lower()
    assert res.stdout == ""  # no report: nothing was scanned


def test_parent_of_an_environment_names_the_child(wordle: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(wordle.parent)
    res = cli("validate", "--static")
    assert res.exit_code == 2, res.output
    assert "did you mean `envkit validate wordle`" in res.stderr.lower()


def test_subdirectory_of_an_environment_names_the_parent(wordle: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(wordle / "server")
    res = cli("validate")
    assert res.exit_code == 2, res.output
    assert "did you mean `envkit validate ..`" in res.stderr.lower()


def test_path_argument_is_refused_too(wordle: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(wordle)
    res = cli("validate", "server", "--static")
    assert res.exit_code == 2, res.output
    assert "did you mean `envkit validate .`" in res.stderr.lower()


def test_library_refuses_before_scanning(tmp_path: Path) -> None:
    from envkit.errors import UsageError
    from envkit.validation import validate

    with pytest.raises(UsageError, match=r"no openenv\.yaml"):
        validate(tmp_path, static=True)
