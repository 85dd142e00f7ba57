"""`envkit init` options of the template family and `envkit templates` (issue 6)."""

from __future__ import annotations

import json

from tests.templates.conftest import TEMPLATES


def test_templates_lists_the_family_with_options(cli):
    result = cli("templates", "--json")
    assert result.exit_code == 0
    listed = {t["name"]: t for t in json.loads(result.stdout)}
    assert set(TEMPLATES) | {"echo"} <= set(listed)
    assert listed["gymnasium"]["options"]["gym_id"]["default"] == "CartPole-v1"
    text = cli("templates").stdout
    assert "gym_id" in text and "CartPole-v1" in text


def test_gym_id_flag_sets_the_wrapped_environment(cli, tmp_path):
    result = cli(
        "init", "pole", "-t", "gymnasium", "--gym-id", "Acrobot-v1", "--no-lock", "-o", tmp_path
    )
    assert result.exit_code == 0, result.output
    models = (tmp_path / "pole" / "models.py").read_text()
    assert 'GYM_ID = "Acrobot-v1"' in models
    assert "Acrobot-v1" in (tmp_path / "pole" / "README.md").read_text()


def test_gym_id_on_a_template_without_it_is_a_usage_error(cli, tmp_path):
    result = cli("init", "x", "--gym-id", "Acrobot-v1", "--no-lock", "-o", tmp_path)
    assert result.exit_code == 2
    assert "no option `gym_id`" in result.output
    assert not (tmp_path / "x").exists()


def test_interactive_without_a_terminal_never_prompts(cli, tmp_path):
    # CliRunner's stdin is not a TTY: defaults are used, with a warning, and no prompt
    # consumes the (empty) input.
    result = cli(
        "init", "y", "-t", "gymnasium", "--interactive", "--no-lock", "-o", tmp_path, input=""
    )
    assert result.exit_code == 0, result.output
    assert "needs a terminal" in result.output
    assert 'GYM_ID = "CartPole-v1"' in (tmp_path / "y" / "models.py").read_text()


def test_every_template_renders_its_common_files(tmp_path):
    from envkit.scaffold import init_project

    for template in TEMPLATES:
        files = {
            p.as_posix()
            for p in init_project(
                f"{template}-x", template=template, output_dir=tmp_path, lock=False
            ).files
        }
        for required in (
            "README.md",
            "AGENTS.md",
            "inference.py",
            "Dockerfile",
            ".dockerignore",
            ".github/workflows/envkit.yml",
            "server/oracle.py",
            "openenv.yaml",
        ):
            assert required in files, (template, required)
        assert any(f.startswith("tests/") for f in files), template
        for rel in files:  # every generated Python file at least compiles
            if rel.endswith(".py"):
                path = tmp_path / f"{template}-x" / rel
                compile(path.read_text(encoding="utf-8"), str(path), "exec")
