"""The package's public names (``envkit/__init__.py``): imported on first use, and what type
checkers see of them is the same object."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import envkit


def _type_checking_names() -> dict[str, str]:
    """``name -> "module:attribute"`` of the re-exports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(envkit.__file__).read_text())
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                for alias in stmt.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    names[alias.name] = f"{stmt.module}:{alias.name}"
    return names


def test_type_checkers_see_every_lazy_name_from_its_module():
    assert _type_checking_names() == envkit._LAZY


@pytest.mark.parametrize("name", sorted(envkit._LAZY))
def test_lazy_name_is_the_module_attribute(name):
    module, attr = envkit._LAZY[name].split(":")
    assert getattr(envkit, name) is getattr(importlib.import_module(module), attr)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        envkit.no_such_name  # noqa: B018 - the lookup is the test
