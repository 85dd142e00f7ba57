"""docs/architecture.md keeps its package list true: every package its floors table names
exists, on the floor pyproject.toml's import-linter contract puts it, and every package of
envkit/ is named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
ROW = re.compile(r"^\| (\d+) \| `envkit/([a-z_]+)/` \|", re.MULTILINE)


def _table() -> dict[str, int]:
    """Package name -> floor, from the doc's floors table."""
    return {name: int(floor) for floor, name in ROW.findall(DOC.read_text(encoding="utf-8"))}


def _floors() -> dict[str, int]:
    """Top-level name -> floor (1 = top) in the contract "envkit's floors"."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == "envkit's floors"
    )
    return {
        name.strip(): floor
        for floor, layer in enumerate(contract["layers"], start=1)
        for name in re.split(r"[:|]", layer)
    }


def test_every_package_named_in_the_map_exists_on_its_floor() -> None:
    named = _table()
    assert len(named) >= 10, "the floors table of docs/architecture.md was not found"
    floors = _floors()
    for name, floor in named.items():
        assert (REPO / "envkit" / name / "__init__.py").is_file(), (
            f"docs/architecture.md names envkit/{name}/, which no longer exists"
        )
        assert floors.get(name) == floor, (
            f"docs/architecture.md puts envkit/{name}/ on floor {floor}; "
            f"pyproject.toml on {floors.get(name)}"
        )


def test_every_package_of_envkit_is_named_in_the_map() -> None:
    packages = {p.parent.name for p in (REPO / "envkit").glob("*/__init__.py")}
    missing = sorted(packages - set(_table()))
    assert not missing, f"docs/architecture.md's floors table does not name: {missing}"
