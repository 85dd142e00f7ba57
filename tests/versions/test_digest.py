"""The two digests: which files and facts move them, and which do not (no server, no
interpreter: the environment digest reads files, the schema digest hashes given schemas)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.envdir.digest import (
    digest_files,
    env_digest,
    schema_digest,
    short,
)

ACTION = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "guess": {"type": "integer", "minimum": 1, "maximum": 100, "title": "Guess"},
        "note": {"type": "string", "default": ""},
    },
    "required": ["guess", "note"],
}
SCHEMAS = {"action": ACTION, "observation": {"type": "object"}, "state": {"type": "object"}}


@pytest.fixture
def env(echo_env: Path, copy_env) -> Path:
    return copy_env(echo_env)


def test_env_digest_follows_the_upload_set(env: Path) -> None:
    before = env_digest(env)
    assert before.startswith("sha256:") and len(before) == len("sha256:") + 64
    # outside the upload set: virtualenvs, bytecode, ignored files
    (env / ".venv" / "lib").mkdir(parents=True)
    (env / ".venv" / "lib" / "x.py").write_text("x = 1\n")
    (env / "server" / "__pycache__").mkdir(exist_ok=True)
    (env / "server" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0\1")
    (env / ".env").write_text("SECRET=1\n")
    assert env_digest(env) == before
    # mtimes are no input
    app = env / "server" / "app.py"
    os.utime(app, (1, 1))
    assert env_digest(env) == before
    # a source file in the upload set is
    app.write_text(app.read_text() + "\n# changed\n")
    assert env_digest(env) != before


def test_env_digest_is_the_same_in_another_directory(env: Path, tmp_path: Path) -> None:
    """Relative paths only: two checkouts (two machines) of the same files agree."""
    other = tmp_path / "elsewhere" / "copy"
    shutil.copytree(env, other)
    assert env_digest(other) == env_digest(env)


def test_lock_and_manifest_count_even_when_ignored(env: Path) -> None:
    (env / "uv.lock").write_text("version = 1\n")
    with (env / ".gitignore").open("a") as fh:
        fh.write("\nuv.lock\nopenenv.yaml\n")
    files = digest_files(env)
    assert "uv.lock" in files and "openenv.yaml" in files
    before = env_digest(env)
    (env / "uv.lock").write_text("version = 2\n")
    assert env_digest(env) != before


def test_moving_a_byte_between_files_changes_the_digest(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root, (x, y) in ((a, ("ab", "c")), (b, ("a", "bc"))):
        (root / "server").mkdir(parents=True)
        (root / "server" / "x.txt").write_text(x)
        (root / "server" / "y.txt").write_text(y)
    assert env_digest(a) != env_digest(b)


def test_schema_digest_ignores_declaration_order() -> None:
    reordered = {
        "required": ["note", "guess"],
        "properties": dict(reversed(list(ACTION["properties"].items()))),
        "additionalProperties": False,
        "type": "object",
    }
    assert schema_digest({**SCHEMAS, "action": reordered}, (0, 1)) == schema_digest(
        SCHEMAS, (0.0, 1.0)
    )


def test_schema_digest_follows_what_a_policy_sees() -> None:
    base = schema_digest(SCHEMAS, (0, 1), {})
    changed = {**ACTION, "properties": {**ACTION["properties"], "guess": {"type": "string"}}}
    assert schema_digest({**SCHEMAS, "action": changed}, (0, 1), {}) != base
    assert schema_digest(SCHEMAS, (0, 10), {}) != base
    assert schema_digest(SCHEMAS, (0, 1), {"level": ["easy", "hard"]}) != base
    # values are a set; 0.10's reset_observation is not an input
    assert schema_digest(SCHEMAS, (0, 1), {"level": ["hard", "easy"]}) == schema_digest(
        SCHEMAS, (0, 1), {"level": ["easy", "hard"]}
    )
    assert schema_digest({**SCHEMAS, "reset_observation": {"x": 1}}, (0, 1), {}) == base
    assert short(base) == base[: len("sha256:") + 16]


def test_reset_options_are_read_from_the_reset_signature(env: Path) -> None:
    extra = env / "server" / "levels.py"
    extra.write_text(
        "from typing import Literal\n"
        "class E:\n"
        "    def reset(self, seed=None, episode_id=None, level: Literal['easy', 'hard'] = 'easy'):\n"
        "        pass\n"
    )
    assert EnvDir(env).reset_options["level"] == ["easy", "hard"]


def test_a_huge_tree_is_not_hashed(env: Path) -> None:
    """A 20 GB sparse file must not turn a static validate into minutes of hashing."""
    import time

    from envkit.envdir.digest import DigestLimitError
    from envkit.validation import validate

    big = env / "big.bin"
    big.touch()
    os.truncate(big, 20 << 30)
    t0 = time.monotonic()
    with pytest.raises(DigestLimitError):
        env_digest(env)
    versions = validate(env, static=True).to_dict()["versions"]
    assert time.monotonic() - t0 < 30
    assert versions["env_digest"] is None and "GiB" in versions["env_digest_note"]
