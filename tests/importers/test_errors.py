"""`envkit import` refuses bad sources with one line and exit 2, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.errors import UsageError
from envkit.importers import parse_source
from envkit.importers.verifiers import pinned_requirements, read_module

FIXTURES = Path(__file__).parent / "fixtures"


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_unknown_source_kind_exits_2_and_writes_nothing(cli, tmp_path):
    result = cli("import", "reasoning_gim:leg_counting", "x", "-o", tmp_path / "out")
    line = _one_line_error(result)
    assert "Unknown import source" in line and "reasoning-gym:" in line
    assert not (tmp_path / "out").exists()


def test_module_without_load_environment_exits_2_and_writes_nothing(cli, tmp_path):
    module = tmp_path / "not_vf.py"
    module.write_text("def make_environment():\n    return None\n")
    result = cli("import", module, "x", "-o", tmp_path / "out")
    line = _one_line_error(result)
    assert "load_environment" in line and "not_vf.py" in line
    assert not (tmp_path / "out").exists()


def test_missing_module_exits_2(cli, tmp_path):
    line = _one_line_error(cli("import", "verifiers:no_such_vf_module_xyz", "x", "-o", tmp_path))
    assert "no_such_vf_module_xyz" in line
    assert list(tmp_path.iterdir()) == []


def test_existing_destination_is_refused(cli, tmp_path):
    (tmp_path / "x").mkdir()
    result = cli("import", FIXTURES / "vf_single.py", "x", "-o", tmp_path)
    assert "already exists" in _one_line_error(result)
    assert list((tmp_path / "x").iterdir()) == []


@pytest.mark.slow
def test_unknown_reasoning_gym_task_lists_close_matches(cli, tmp_path):
    """Reads the task list from reasoning-gym itself (uv installs it in a throwaway env)."""
    result = cli("import", "reasoning-gym:leg_countin", "legs", "-o", tmp_path / "out")
    line = _one_line_error(result)
    assert "no task `leg_countin`" in line and "leg_counting" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("reasoning-gym:leg_counting", ("reasoning-gym", "leg_counting")),
        ("reasoning_gym:basic_arithmetic", ("reasoning-gym", "basic_arithmetic")),
        ("verifiers:vf_gsm8k", ("verifiers", "vf_gsm8k")),
        ("./envs/my_env.py", ("verifiers", "./envs/my_env.py")),
        ("gymnasium:Acrobot-v1", ("gymnasium", "Acrobot-v1")),
    ],
)
def test_parse_source(source, expected):
    assert parse_source(source) == expected


@pytest.mark.parametrize("source", ["leg_counting", "gym:CartPole-v1", "reasoning-gym:", ""])
def test_parse_source_refuses(source):
    with pytest.raises(UsageError):
        parse_source(source)


def test_module_imports_are_pinned_exactly(tmp_path):
    import importlib.metadata

    module = tmp_path / "vf_yaml.py"
    module.write_text(
        "import json\nimport yaml\nfrom jinja2 import Template\nfrom . import sibling\n\n"
        "def load_environment():\n    return None\n"
    )
    dists = importlib.metadata.packages_distributions()
    expected = sorted(
        f"{d}=={importlib.metadata.version(d)}" for d in (dists["jinja2"][0], dists["yaml"][0])
    )
    assert pinned_requirements(read_module(module), module.name) == expected


def test_module_importing_an_uninstalled_package_is_refused(tmp_path):
    module = tmp_path / "vf_missing.py"
    module.write_text("import no_such_pkg_xyz\n\ndef load_environment():\n    return None\n")
    with pytest.raises(UsageError, match="no_such_pkg_xyz"):
        pinned_requirements(read_module(module), module.name)


def test_gymnasium_source_is_the_gymnasium_template(tmp_path):
    """`gymnasium:ID` renders exactly what `envkit init --template gymnasium --gym-id ID`
    does."""
    from envkit.importers import import_environment
    from envkit.scaffold import init_project

    imported = import_environment(
        "gymnasium:Acrobot-v1", "acro", output_dir=tmp_path / "a", lock=False, skills=False
    )
    inited = init_project(
        "acro",
        template="gymnasium",
        output_dir=tmp_path / "b",
        lock=False,
        skills=False,
        options={"gym_id": "Acrobot-v1"},
    )
    assert imported.files == inited.files
    for rel in imported.files:
        assert (imported.path / rel).read_bytes() == (inited.path / rel).read_bytes(), rel
    assert "Acrobot-v1" in (imported.path / "server" / "acro_environment.py").read_text()


def test_set_is_refused_for_a_reasoning_gym_source(cli, tmp_path):
    result = cli("import", "reasoning-gym:leg_counting", "x", "-o", tmp_path, "--set", "a=1")
    assert "--set applies to verifiers modules" in _one_line_error(result)
    assert list(tmp_path.iterdir()) == []


def test_import_without_a_name_exits_2_with_an_example(cli, tmp_path):
    result = cli("import", "reasoning-gym:leg_counting", "-o", tmp_path / "out")
    line = _one_line_error(result)
    assert "Missing argument NAME" in line
    assert "`envkit import reasoning-gym:leg_counting my-env`" in result.output
    assert not (tmp_path / "out").exists()


def test_list_of_another_source_kind_exits_2_and_names_what_lists(cli):
    line = _one_line_error(cli("import", "--list", "verifiers"))
    assert "lists reasoning-gym's tasks" in line and "`verifiers`" in line
