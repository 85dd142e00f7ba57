"""Every bundled skill conforms to the Agent Skills specification, and everything it tells an
agent to type exists: commands and flags in the real CLI, finding codes in the rule registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from envkit.resources import skills_dir
from envkit.skills import check_skill, list_skills, load_skill
from tests.skills._mentions import mentions

SKILLS_ROOT = skills_dir()
BUNDLED = sorted(p for p in SKILLS_ROOT.iterdir() if p.is_dir())
REQUIRED = {"envkit", "environment-design", "space-troubleshooting"}
SPEC_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def _front_matter(path: Path) -> tuple[dict, list[str]]:
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path.name}/SKILL.md must start with front matter"
    fm, _, body = text[4:].partition("\n---\n")
    return YAML(typ="safe", pure=True).load(fm), body.splitlines()


def test_required_skills_are_bundled():
    assert {p.name for p in BUNDLED} >= REQUIRED
    assert [s.name for s in list_skills()] == sorted(p.name for p in BUNDLED)


@pytest.mark.parametrize("folder", BUNDLED, ids=lambda p: p.name)
def test_skill_conforms_to_the_specification(folder: Path):
    data, body = _front_matter(folder)
    assert set(data) <= SPEC_KEYS, set(data) - SPEC_KEYS
    name, description = data["name"], data["description"]
    assert name == folder.name
    assert 1 <= len(name) <= 64 and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)
    assert isinstance(description, str) and 1 <= len(description) <= 1024
    # "what it does AND when to use it"
    assert re.search(r"\bUse (when|after|for)\b", description), description
    if "compatibility" in data:
        assert 1 <= len(data["compatibility"]) <= 500
    if "metadata" in data:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in data["metadata"].items())
    assert 20 <= len(body) < 500, len(body)
    # references exist and every reference is linked from SKILL.md
    text = "\n".join(body)
    for link in re.findall(r"\]\((references/[^)#\s]+)\)", text):
        assert (folder / link).is_file(), link
    for ref in (folder / "references").glob("*") if (folder / "references").is_dir() else []:
        assert f"references/{ref.name}" in text, f"{ref.name} is never linked from SKILL.md"
        assert ref.suffix == ".md" and ref.read_text(encoding="utf-8").strip()
    # the library's checker agrees
    assert check_skill(folder) == []
    assert load_skill(folder).description == " ".join(description.split())


def _write_skill(
    root: Path,
    folder: str,
    front: str,
    body: str = "# Title\n\nDo it.\n",
    files: dict[str, str] | None = None,
) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    for rel, content in (files or {}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(content, encoding="utf-8")
    return path


GOOD = "name: {name}\ndescription: Does X. Use when Y.\n"


@pytest.mark.parametrize(
    ("folder", "front", "body", "files", "expected"),
    [
        ("ok-skill", GOOD, "# T\n\nSee [r](references/a.md).\n", {"references/a.md": "x"}, None),
        ("other", GOOD.replace("{name}", "ok-skill"), None, None, "must equal the folder name"),
        ("Bad", GOOD, None, None, "lower-case letters"),
        ("a--b", GOOD, None, None, "single hyphens"),
        ("-ab", GOOD, None, None, "single hyphens"),
        ("x" * 65, GOOD, None, None, "at most 64 characters"),
        ("d", "name: d\ndescription: " + "x" * 1025 + "\n", None, None, "at most 1024"),
        ("d", "name: d\n", None, None, "needs `description`"),
        ("d", "name: d\ndescription: ''\n", None, None, "non-empty string"),
        ("d", GOOD + "version: 1\n", None, None, "`version` is not in the Agent Skills"),
        ("d", GOOD + "metadata:\n  v: 1\n", None, None, "strings to strings"),
        ("d", GOOD + "compatibility: " + "c" * 501 + "\n", None, None, "`compatibility`"),
        ("d", GOOD, "# T\n" + "line\n" * 500, None, "under 500 lines"),
        ("d", GOOD, "", None, "body after the front matter is empty"),
        ("d", GOOD, "# T\n\nRead [it](references/missing.md).\n", None, "does not exist"),
        ("d", GOOD, "# T\n\nRead references/missing.md first.\n", None, "does not exist"),
        ("d", GOOD, None, {"references/orphan.md": "x"}, "never mentioned"),
        ("d", "name: [unclosed\n", None, None, "not valid YAML"),
        ("d", "- a list\n", None, None, "must be a YAML mapping"),
    ],
)
def test_check_skill_reports_each_violation(tmp_path, folder, front, body, files, expected):
    path = _write_skill(
        tmp_path,
        folder,
        front.replace("{name}", folder),
        body if body is not None else "# Title\n\nDo it.\n",
        files,
    )
    problems = [str(p) for p in check_skill(path)]
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_check_skill_without_front_matter(tmp_path):
    path = tmp_path / "plain"
    path.mkdir()
    (path / "SKILL.md").write_text("# No front matter\n", encoding="utf-8")
    assert "must start with `---`" in str(check_skill(path)[0])
    assert "is missing" in str(check_skill(tmp_path / "absent")[0])


# ---- everything a skill tells an agent to type must exist ----------------------------------

# Flags of other tools that skills quote in prose (Docker's HEALTHCHECK, uv); nothing else.
FOREIGN_FLAGS = {"--start-period", "--frozen", "--locked"}


def _cli_tree() -> dict[str, object]:
    import typer

    from envkit.cli import app

    return typer.main.get_command(app).commands  # name -> command (groups have .commands)


def _options(command) -> set[str]:  # noqa: ANN001 - a click command from typer
    opts = {"--help", "-h"}
    for param in command.params:
        for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())):
            if opt.startswith("-"):
                opts.add(opt)
    return opts


def _all_mentions():
    for md in sorted(SKILLS_ROOT.rglob("*.md")):
        yield from mentions(md, md.relative_to(SKILLS_ROOT).as_posix())


def test_mention_parser(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "Run `envkit validate --static` then `envkit skills install -a claude|codex`.\n"
        "## envkit push [PATH]\n"
        "| `--dry-run-dir DIR` | and `[--private|--public]` |\n"
        "```bash\n"
        "envkit build && envkit run --docker --port=9000   # envkit stop afterwards\n"
        "```\n"
        "## Other\n"
        "`--nope` is prose; `pip install rl-envkit`; `envkit`\n",
        encoding="utf-8",
    )
    got = [(m.words, m.flags, m.bare) for m in mentions(md, "x.md")]
    assert got == [
        (("validate",), ("--static",), False),
        (("skills", "install"), ("-a",), False),
        (("push",), ("--dry-run-dir",), True),
        (("push",), ("--private", "--public"), True),
        (("build",), (), False),
        (("run",), ("--docker", "--port"), False),
        ((), ("--nope",), True),
    ]


def test_skills_mention_commands_at_all():
    found = {m.words[0] for m in _all_mentions() if m.words}
    assert {"init", "validate", "run", "build", "push", "eval", "skills"} <= found


def test_every_command_and_flag_a_skill_mentions_exists():
    """Strict on purpose: a skill that teaches a flag the CLI lacks makes agents fail."""
    import typer

    from envkit.cli import app

    root_opts = _options(typer.main.get_command(app))
    commands = _cli_tree()
    every_opt = set().union(
        root_opts,
        *(
            _options(c)
            for cmd in commands.values()
            for c in (cmd, *getattr(cmd, "commands", {}).values())
        ),
    )
    missing: list[str] = []
    for m in _all_mentions():
        if not m.words and m.bare:  # a flag in prose: some command must have it
            missing += [
                f"{m.where}: `{f}` (no envkit command has it)"
                for f in m.flags
                if f not in every_opt and f not in FOREIGN_FLAGS
            ]
            continue
        if not m.words:
            missing += [f"{m.where}: `envkit {f}`" for f in m.flags if f not in root_opts]
            continue
        cmd = commands.get(m.words[0])
        if cmd is None:
            missing.append(f"{m.where}: command `envkit {m.words[0]}`")
            continue
        subcommands = getattr(cmd, "commands", None)
        label = f"envkit {m.words[0]}"
        if subcommands is not None:  # a group: `envkit skills install`
            if len(m.words) > 1:
                sub = subcommands.get(m.words[1])
                if sub is None:
                    missing.append(f"{m.where}: command `{label} {m.words[1]}`")
                    continue
                opts, label = _options(sub), f"{label} {m.words[1]}"
            else:
                opts = set().union(_options(cmd), *(_options(c) for c in subcommands.values()))
        else:
            opts = _options(cmd)
        missing += [f"{m.where}: `{label} {f}`" for f in m.flags if f not in opts]
    assert not missing, "skills mention commands/flags the CLI lacks:\n" + "\n".join(
        sorted(set(missing))
    )


def test_every_finding_code_a_skill_mentions_is_a_registered_rule():
    import envkit.validation.rules  # noqa: F401 - registers every rule
    from envkit.findings import RULES

    problems = []
    for md in sorted(SKILLS_ROOT.rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        rel = md.relative_to(SKILLS_ROOT).as_posix()
        for code in sorted(set(re.findall(r"\bEK\d{3}\b", text))):
            if code not in RULES:
                problems.append(f"{rel}: {code} is not a registered rule")
        for code, name in re.findall(r"\b(EK\d{3}) ([a-z0-9]+(?:-[a-z0-9]+)+)\b", text):
            if code in RULES and RULES[code].name != name:
                problems.append(f"{rel}: {code} is `{RULES[code].name}`, not `{name}`")
    assert not problems, "\n".join(problems)
