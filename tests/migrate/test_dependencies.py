"""`envkit.migrate.dependencies`: the OpenEnv requirement in pyproject.toml and
requirements*.txt."""

from __future__ import annotations

from pathlib import Path

from envkit.migrate import migrate


def test_both_distributions_keep_one(tmp_path: Path, legacy_copy) -> None:
    root = legacy_copy("echo")
    pp = root / "pyproject.toml"
    pp.write_text(
        pp.read_text().replace(
            '"openenv-core>=0.3.0,<0.4",', '"openenv-core>=0.3.0,<0.4",\n    "openenv>=0.10",'
        )
    )
    (root / "requirements.txt").write_text("openenv-core[core]>=0.2  # pinned by hand\nnumpy\n")
    migrate(root, probe_plan=False)
    text = pp.read_text()
    assert "openenv-core" not in text and '"openenv>=0.10",' in text
    assert (
        root / "requirements.txt"
    ).read_text() == "openenv>=0.10,<0.11  # pinned by hand\nnumpy\n"
