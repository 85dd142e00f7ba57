"""One declaration per fact: the default app, the manifest name and the OpenEnv pin live in
``envkit/envdir/constants.py`` and nowhere else in ``envkit/`` (templates are rendered files,
not code, and may spell them out)."""

from __future__ import annotations

import ast
from pathlib import Path

from envkit.envdir import EnvDir
from envkit.envdir.constants import (
    APP_PATTERN,
    DEFAULT_APP,
    MANIFEST_NAME,
    OPENENV_REQUIREMENT,
    is_debris,
)
from envkit.envdir.toml import TomlError, parse_toml, read_pyproject
from tests.helpers import ENVKIT_PACKAGE, envkit_sources

PACKAGE = ENVKIT_PACKAGE
HOME = PACKAGE / "envdir" / "constants.py"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (documentation may name the facts)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _offending_literals(
    path: Path, base: Path = PACKAGE.parent, tree: ast.AST | None = None
) -> list[str]:
    tree = tree if tree is not None else ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in docs:
            continue
        value = node.value
        if value in (DEFAULT_APP, MANIFEST_NAME) or "openenv>=" in value:
            found.append(f"{path.relative_to(base)}:{node.lineno}: {value[:60]!r}")
    return found


def test_facts_are_declared_once() -> None:
    offending = []
    for path, _text, tree in envkit_sources():
        if path != HOME:
            offending += _offending_literals(path, tree=tree)
    assert offending == [], "write these through envkit.envdir.constants:\n" + "\n".join(offending)


def test_the_literal_check_finds_a_second_copy(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""Serves server.app:app."""\nAPP = "server.app:app"\nPIN = "openenv>=0.10"\n')
    found = [line.split(": ", 1)[1] for line in _offending_literals(bad, tmp_path)]
    assert found == ["'server.app:app'", "'openenv>=0.10'"]


def test_app_pattern_is_uvicorns_import_string() -> None:
    for ok in ("server.app:app", "my_env.server.app:app", "app:create_app.factory", "m:a"):
        assert APP_PATTERN.fullmatch(ok), ok
    for bad in ("server.app", ":app", "server..app:app", "server.app:", "1mod:app", "a:b:c"):
        assert not APP_PATTERN.fullmatch(bad), bad
    assert OPENENV_REQUIREMENT.startswith("openenv>=")


def test_debris_names() -> None:
    assert is_debris("__pycache__") and is_debris("x.pyc") and is_debris(".DS_Store")
    assert not is_debris("server") and not is_debris("models.py")


def test_parse_toml_errors_are_one_kind() -> None:
    assert parse_toml('[project]\nname = "x"\n') == {"project": {"name": "x"}}
    for broken in ('[project\nname = "x"', "a = " + "[" * 5000 + "]" * 5000, "a = " + "1" * 4301):
        try:
            parse_toml(broken)
        except TomlError as exc:
            assert str(exc)
        else:  # pragma: no cover - the assertion below names the input
            raise AssertionError(f"parsed {broken[:20]!r}")


def test_read_pyproject(tmp_path: Path) -> None:
    assert read_pyproject(tmp_path) == (None, None)
    (tmp_path / "pyproject.toml").write_text("[project\n")
    data, error = read_pyproject(tmp_path)
    assert data is None and isinstance(error, TomlError)
    (tmp_path / "pyproject.toml").write_bytes(b"name = '\xff'\n")
    data, error = read_pyproject(tmp_path)
    assert data is None and isinstance(error, UnicodeDecodeError)


def test_envdir_reads_a_generated_environment(echo_env: Path) -> None:
    env = EnvDir(echo_env)
    assert env.root == echo_env.resolve()
    assert env.manifest is not None and env.manifest_error is None
    assert env.app == DEFAULT_APP and env.port == 8000
    assert env.project_table["name"] == "echo-env"
    assert env.dockerfile_text is not None and "FROM" in env.dockerfile_text
    assert env.manifest is env.manifest  # read once
    assert env.launch_candidates()[0].kind == "manifest"


def test_envdir_without_a_valid_manifest(tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_text("app: pkg.server:app\nport: 99999\nname: [\n")
    env = EnvDir(tmp_path)
    assert env.manifest is None and env.manifest_error is not None
    assert env.app == DEFAULT_APP and env.port == 8000
    (tmp_path / MANIFEST_NAME).write_text("app: pkg.server:app\nport: 9001\nbogus: 1\n")
    env = EnvDir(tmp_path)
    assert env.manifest is None
    assert env.raw_app == "pkg.server:app" and env.app == "pkg.server:app" and env.port == 9001
