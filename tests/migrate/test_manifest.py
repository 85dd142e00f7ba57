"""`envkit.migrate.manifest`: openenv.yaml moves to RFC 008's layout and keeps the user's
comments and keys."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from envkit.migrate import migrate


def _manifest(root: Path) -> dict:
    return YAML(typ="safe").load((root / "openenv.yaml").read_text())


def test_comments_and_unknown_keys_survive(legacy_copy) -> None:
    root = legacy_copy("rlvr")
    path = root / "openenv.yaml"
    text = path.read_text().replace("  seeds: [0, 1, 2]", "  seeds: [0, 1, 2]  # three seeds")
    path.write_text(text + "custom_tool_key:\n  keep: me  # a note of mine\n")
    migrate(root, probe_plan=False)
    out = path.read_text()
    # the rubric's explanatory comment, the user's key with its comment, the moved key's
    # end-of-line comment
    assert "# The reward rubric of this environment" in out
    assert out.index("# The reward rubric") < out.index("rubric:\n")
    assert "custom_tool_key:\n  keep: me  # a note of mine" in out
    assert "seeds: [0, 1, 2]  # three seeds" in out
    m = _manifest(root)
    assert m["rubric"] == {"format": 0.2, "correctness": 0.8}
    # the template's comment about the old block is replaced, not left stale
    assert "envkit's extension of the manifest" not in out
