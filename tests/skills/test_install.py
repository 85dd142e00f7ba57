"""`envkit skills list | show | install` and `envkit.skills.install_skills`: every agent layout,
idempotence, refusal without --force, --global into the (isolated) HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from envkit.errors import DestinationError, UsageError
from envkit.skills import AGENTS, install_skills, list_skills

SKILLS = list_skills()
NAMES = [s.name for s in SKILLS]
PROJECT_DIR = {
    "codex": ".agents/skills",
    "claude": ".claude/skills",
    "cursor": ".cursor/skills",
    "opencode": ".opencode/skills",
}
GLOBAL_DIR = {**PROJECT_DIR, "opencode": ".config/opencode/skills"}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _assert_installed(folder: Path) -> None:
    """`folder/<name>/...` is a byte-identical copy of every bundled skill."""
    for skill in SKILLS:
        assert _tree(folder / skill.name) == _tree(skill.path), (folder, skill.name)


@pytest.mark.parametrize("agent", AGENTS)
def test_cli_install_for_one_agent(cli, tmp_path, agent):
    result = cli("skills", "install", "--agent", agent, "--dir", tmp_path)
    assert result.exit_code == 0, result.output
    _assert_installed(tmp_path / ".agents/skills")  # the canonical copy, always
    _assert_installed(tmp_path / PROJECT_DIR[agent])
    present = {d for d in (".claude", ".cursor", ".opencode") if (tmp_path / d).exists()}
    expected = {PROJECT_DIR[agent].split("/")[0]} - {".agents"}
    assert present == expected
    assert "Installed" in result.stderr and PROJECT_DIR[agent] in result.stderr


def test_install_all_agents_then_again_is_a_no_op(tmp_path):
    first = install_skills(tmp_path)
    assert first.created == len(first.files) > 0 and first.changed
    assert [t.relative_to(tmp_path).as_posix() for t in first.targets] == [
        ".agents/skills",
        ".claude/skills",
        ".cursor/skills",
        ".opencode/skills",
    ]
    for agent in AGENTS:
        _assert_installed(tmp_path / PROJECT_DIR[agent])
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    second = install_skills(tmp_path, agents=["all"])
    assert not second.changed and second.unchanged == len(second.files) == len(first.files)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps


def test_cli_second_install_says_nothing_to_do(cli, tmp_path):
    assert cli("skills", "install", "--dir", tmp_path).exit_code == 0
    again = cli("skills", "install", "--dir", tmp_path)
    assert again.exit_code == 0
    assert "nothing to do" in again.stderr and "0 created" in again.stderr


def test_adding_an_agent_later_needs_no_force(cli, tmp_path):
    assert cli("skills", "install", "-a", "claude", "--dir", tmp_path).exit_code == 0
    assert not (tmp_path / ".cursor").exists()
    result = cli("skills", "install", "-a", "claude,cursor", "--dir", tmp_path)
    assert result.exit_code == 0, result.output
    _assert_installed(tmp_path / ".cursor/skills")
    _assert_installed(tmp_path / ".claude/skills")


def test_changed_file_is_refused_without_force_and_named(cli, tmp_path):
    assert cli("skills", "install", "-a", "claude", "--dir", tmp_path).exit_code == 0
    edited = tmp_path / ".claude/skills/envkit/SKILL.md"
    edited.write_text(edited.read_text() + "\nmy local note\n")
    before = _tree(tmp_path)

    result = cli("skills", "install", "-a", "claude", "-a", "opencode", "--dir", tmp_path)
    assert result.exit_code == 2
    assert ".claude/skills/envkit/SKILL.md" in result.stderr
    assert "--force" in result.stderr
    assert _tree(tmp_path) == before  # nothing written, not even the new agent's copy
    assert not (tmp_path / ".opencode").exists()

    forced = cli(
        "skills", "install", "-a", "claude", "-a", "opencode", "--force", "--dir", tmp_path
    )
    assert forced.exit_code == 0, forced.output
    assert "1 replaced" in forced.stderr
    _assert_installed(tmp_path / ".claude/skills")
    _assert_installed(tmp_path / ".opencode/skills")


def test_refusal_from_the_library_lists_every_conflict(tmp_path):
    install_skills(tmp_path, agents=["codex"])
    for rel in (".agents/skills/envkit/SKILL.md", ".agents/skills/environment-design/SKILL.md"):
        (tmp_path / rel).write_text("mine\n")
    with pytest.raises(DestinationError) as info:
        install_skills(tmp_path, agents=["codex"])
    assert "(and 1 more)" in info.value.message
    assert ".agents/skills/envkit/SKILL.md" in info.value.details
    assert ".agents/skills/environment-design/SKILL.md" in info.value.details
    assert (tmp_path / ".agents/skills/envkit/SKILL.md").read_text() == "mine\n"


def test_files_of_the_user_next_to_a_skill_are_kept(tmp_path):
    install_skills(tmp_path, ["envkit"], ["claude"])
    extra = tmp_path / ".claude/skills/envkit/references/team-notes.md"
    extra.write_text("ours\n")
    result = install_skills(tmp_path, ["envkit"], ["claude"], force=True)
    assert not result.changed and extra.read_text() == "ours\n"


def test_something_in_the_way_is_refused_even_with_force(tmp_path):
    (tmp_path / ".claude/skills").mkdir(parents=True)
    (tmp_path / ".claude/skills/envkit").write_text("a file where a folder goes\n")
    with pytest.raises(DestinationError, match=r"\.claude/skills/envkit` is in the way"):
        install_skills(tmp_path, ["envkit"], ["claude"], force=True)
    assert not (tmp_path / ".agents").exists()


def test_global_install_goes_to_home_only(cli, tmp_path):
    home = Path(os.environ["HOME"])  # isolated by tests/conftest.py
    project = tmp_path / "project"
    project.mkdir()
    result = cli("skills", "install", "--global", "--dir", project)
    assert result.exit_code == 0, result.output
    for agent in AGENTS:
        _assert_installed(home / GLOBAL_DIR[agent])
    assert not (home / ".opencode").exists()  # OpenCode's global folder is ~/.config/opencode
    assert list(project.iterdir()) == []
    assert "~/.claude/skills" in result.stderr


def test_install_some_skills_only(tmp_path):
    result = install_skills(tmp_path, ["environment-design"], ["cursor"])
    assert result.skills == ["environment-design"] and result.agents == ["cursor"]
    assert sorted(p.name for p in (tmp_path / ".cursor/skills").iterdir()) == ["environment-design"]
    assert {f.skill for f in result.files} == {"environment-design"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["install", "no-such-skill"], "Unknown skill 'no-such-skill'"),
        (["install", "--agent", "vim"], "Unknown agent 'vim'"),
        (["show", "nope"], "Unknown skill 'nope'"),
        (["show", "envkit", "--file", "references/nope.md"], "has no file"),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(cli, tmp_path, args, message):
    result = cli("skills", *args, *(["--dir", tmp_path] if args[0] == "install" else []))
    assert result.exit_code == 2
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_library_rejects_unknown_names_before_writing(tmp_path):
    with pytest.raises(UsageError):
        install_skills(tmp_path, ["envkit", "nope"])
    assert list(tmp_path.iterdir()) == []


def test_list_text_and_json(cli):
    text = cli("skills", "list")
    assert text.exit_code == 0
    for name in NAMES:
        assert name in text.stdout
    data = json.loads(cli("skills", "list", "--json").stdout)
    assert [d["name"] for d in data] == NAMES
    assert all(d["description"] and "SKILL.md" in d["files"] for d in data)


def test_show_prints_skill_md_and_references(cli):
    skill = next(s for s in SKILLS if s.name == "envkit")
    shown = cli("skills", "show", "envkit")
    assert shown.exit_code == 0
    assert shown.stdout == skill.skill_md.read_text(encoding="utf-8")
    assert "references/commands.md" in shown.stderr
    ref = cli("skills", "show", "envkit", "--file", "references/commands.md")
    assert ref.stdout == (skill.path / "references/commands.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args", [["skills"], ["skills", "list"], ["skills", "show"], ["skills", "install"]]
)
def test_help_has_examples(cli, args):
    result = cli(*args, "--help")
    assert result.exit_code == 0
    assert "Examples" in result.stdout and "envkit skills" in result.stdout


def test_destination_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "not-a-dir"
    target.write_text("x")
    with pytest.raises(DestinationError, match="is not a directory"):
        install_skills(target)
