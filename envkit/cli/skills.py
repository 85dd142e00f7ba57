"""``envkit skills``: list, show and install the Agent Skills bundled with envkit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from envkit.cli import _output
from envkit.cli._options import Format
from envkit.errors import UsageError
from envkit.skills import AGENTS, get_skill, install_skills, list_skills

skills_app = typer.Typer(
    name="skills",
    help="Agent Skills that teach coding agents (Claude Code, Codex, Cursor, OpenCode) to "
    "build, validate and ship OpenEnv environments with envkit.\n\n"
    "Examples:\n\n"
    "  envkit skills list\n\n"
    "  envkit skills show environment-design\n\n"
    "  envkit skills install --agent claude",
    no_args_is_help=True,
    rich_markup_mode="rich",
)


def list_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the bundled skills with what each is for.

    Examples:
      envkit skills list
      envkit skills list --json | jq -r '.[].name'
    """
    skills = list_skills()
    output = _output.Output(Format.JSON if as_json else Format.TEXT)
    if output.is_json:
        output.data(
            [
                {
                    "name": s.name,
                    "description": s.description,
                    "files": list(s.files),
                    "body_lines": s.body_lines,
                }
                for s in skills
            ]
        )
        return

    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("skill", no_wrap=True)
    table.add_column("description")
    for s in skills:
        table.add_row(_output.esc(s.name), _output.esc(s.description))
    output.table(table)
    _output.info(
        "Read one with `envkit skills show NAME`; install them with `envkit skills install`."
    )


def show_cmd(
    name: Annotated[str, typer.Argument(help="Skill name (see `envkit skills list`).")],
    file: Annotated[
        str | None,
        typer.Option(
            "--file",
            help="A file of the skill to print instead of SKILL.md, e.g. references/findings.md.",
        ),
    ] = None,
) -> None:
    """Print a skill's SKILL.md (or one of its files) to stdout.

    Examples:
      envkit skills show envkit
      envkit skills show envkit --file references/commands.md
    """
    skill = get_skill(name)
    rel = file.strip().removeprefix("./") if file else "SKILL.md"
    if rel not in skill.files:
        raise UsageError(
            f"The {skill.name} skill has no file {file!r}.",
            hint=f"Its files: {', '.join(skill.files)}.",
        )
    text = (skill.path / rel).read_text(encoding="utf-8")
    _output.Output().text(text, end="")
    if rel == "SKILL.md" and skill.references:
        _output.info(
            f"References: {', '.join(skill.references)} "
            f"(`envkit skills show {skill.name} --file PATH`)."
        )


def install_cmd(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Skills to install (default: all of them).", show_default=False),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            "-a",
            help="claude, codex, cursor, opencode or all (repeatable or "
            "comma-separated; default: all).",
            show_default=False,
        ),
    ] = None,
    global_: Annotated[
        bool,
        typer.Option("--global", help="Install for your user (in HOME) instead of the project."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace skill files that differ from envkit's copy.")
    ] = False,
    directory: Annotated[
        Path, typer.Option("--dir", help="Project root to install into (ignored with --global).")
    ] = Path("."),
) -> None:
    """Install skills into the project (or HOME) for coding agents.

    Writes .agents/skills/NAME (Codex reads it) and a copy per agent in .claude/skills,
    .cursor/skills, .opencode/skills. With --global: the same under ~, OpenCode's in
    ~/.config/opencode/skills.

    Safe to re-run: identical files are left alone, so adding an agent later needs no
    --force. A skill file you edited is never replaced without --force.

    Examples:
      envkit skills install
      envkit skills install envkit environment-design --agent claude --agent cursor
      envkit skills install --global --agent codex
      envkit skills install --dir envs/my-env --force
    """
    result = install_skills(directory, names or None, agent or AGENTS, force=force, global_=global_)
    where = []
    for target in result.targets:
        try:
            rel = target.relative_to(result.root).as_posix()
        except ValueError:  # pragma: no cover - targets are always under root
            rel = str(target)
        where.append(f"~/{rel}" if result.scope == "global" else rel)
    summary = (
        f"{result.created} created, {result.updated} replaced, "
        f"{result.unchanged} already up to date"
    )
    skills = ", ".join(result.skills)
    if result.changed:
        _output.success(f"Installed {skills} for {', '.join(result.agents)}.")
    else:
        _output.success(
            f"{skills}: already installed for {', '.join(result.agents)}; nothing to do."
        )
    root = "~" if result.scope == "global" else str(result.root)
    _output.info(f"  into {_output.esc(root)}: {_output.esc(', '.join(where))}")
    _output.info(f"  files: {summary}")


def register(app: typer.Typer, handled: Callable) -> None:
    skills_app.command("list")(handled(list_cmd))
    skills_app.command("show")(handled(show_cmd))
    skills_app.command("install")(handled(install_cmd))
    app.add_typer(skills_app, name="skills")
