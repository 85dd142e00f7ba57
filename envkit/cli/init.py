"""``envkit init``: create a new environment from a template."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.tree import Tree

from envkit.catalog import get_template
from envkit.cli import _output
from envkit.cli._options import parse_key_values
from envkit.cookie import is_external
from envkit.scaffold import init_project

# Folders `envkit skills install` writes (summarised in the printed tree).
_AGENT_DIRS = {".agents", ".claude", ".cursor", ".opencode"}


def init_cmd(
    name: Annotated[str, typer.Argument(help="Environment name, e.g. my-env or my_env.")],
    template: Annotated[
        str,
        typer.Option(
            "--template",
            "-t",
            help="A built-in template (see `envkit templates`), or a cookiecutter template: "
            "a directory (./my-template), a .zip, a git URL or gh:owner/repo. A cookiecutter "
            "template is code that runs on this machine (its hooks and extensions).",
        ),
    ] = "echo",
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Parent directory of the new environment.")
    ] = Path("."),
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into a non-empty directory (template files are overwritten, others kept).",
        ),
    ] = False,
    no_lock: Annotated[
        bool, typer.Option("--no-lock", help="Skip `uv lock` (needs PyPI).")
    ] = False,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Template option KEY=VALUE (repeatable; see `envkit templates`); for a "
            "cookiecutter template, a variable its cookiecutter.json declares.",
        ),
    ] = None,
    gym_id: Annotated[
        str | None,
        typer.Option(
            "--gym-id",
            help="Gymnasium environment id to wrap (gymnasium template; default "
            "CartPole-v1). Same as --set gym_id=ID.",
        ),
    ] = None,
    no_skills: Annotated[
        bool,
        typer.Option(
            "--no-skills",
            help="Do not install envkit's Agent Skills (.agents/skills, "
            ".claude/skills, ...) into the environment.",
        ),
    ] = False,
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks/--no-hooks",
            help="Run a cookiecutter template's hooks (pre/post-generation scripts: "
            "arbitrary code). On by default, as with the cookiecutter command: templates "
            "rely on them to finish the project.",
        ),
    ] = True,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive",
            "-i",
            help="Ask for template options not given as flags (only on a "
            "terminal; otherwise defaults are used).",
        ),
    ] = False,
) -> None:
    """Create a new OpenEnv environment that passes `envkit validate` out of the box.

    The directory keeps NAME as given; the Python package is snake_case, the Space name
    kebab-case, classes PascalCase. Writes uv.lock with `uv lock` unless --no-lock.

    --template also takes a cookiecutter template (a directory, .zip, git URL or
    gh:owner/repo): it is rendered with cookiecutter (no prompts; the name forms fill
    project_name, package_name, space_name ... where its cookiecutter.json declares them),
    then gets uv.lock and the skills like a built-in one, and `envkit validate --static`
    runs on the result. Such a template is code: its hooks run unless --no-hooks.

    Examples:
      envkit init my-env
      envkit init word-game --template guess --output-dir envs/
      envkit init my-env --no-lock --force --no-skills
      envkit init pole --template gymnasium --gym-id Acrobot-v1
      envkit init my-game --template guess --interactive
      envkit init my-env --template ./my-cookiecutter-template
      envkit init my-env --template gh:owner/repo --set description="..."
    """
    options = parse_key_values(set_, "--set")
    if gym_id is not None:
        options["gym_id"] = gym_id
    if interactive:
        options = _ask_options(template, options)
    with _output.status(f"Creating {_output.esc(name)} from the {_output.esc(template)} template…"):
        result = init_project(
            name,
            template=template,
            output_dir=output_dir,
            force=force,
            lock=not no_lock,
            options=options,
            skills=not no_skills,
            accept_hooks=hooks,
        )
    _print_result(result)


def _ask_options(template: str, given: dict[str, str]) -> dict[str, str]:
    """Prompt for the template's options missing from ``given`` -- only when stdin and
    stderr are terminals (never in CI or pipes: flags are the interface there)."""
    if is_external(template):
        # cookiecutter's own prompts are off (no_input): its variables come from --set.
        _output.warn("--interactive applies to built-in templates; pass --set KEY=VALUE.")
        return given
    tpl = get_template(template)
    missing = [
        o for k, o in tpl.options.items() if k not in given and k.replace("_", "-") not in given
    ]
    if not missing:
        return given
    if not (sys.stdin.isatty() and _output.is_tty()):
        _output.warn(
            "--interactive needs a terminal; using the defaults of "
            + ", ".join(f"{o.key}={o.default}" for o in missing)
            + ".",
            "Pass options as flags instead: --set KEY=VALUE.",
        )
        return given
    out = dict(given)
    for opt in missing:
        out[opt.key] = typer.prompt(
            f"{opt.key} ({opt.help})" if opt.help else opt.key, default=opt.default, err=True
        )
    return out


def _print_result(result) -> None:  # noqa: ANN001 - InitResult, imported lazily

    err = _output.err
    tree = Tree(f"[bold]{_output.esc(result.path)}[/bold]")
    nodes: dict[Path, Tree] = {Path("."): tree}
    agent_dirs: dict[str, set[str]] = {}
    for rel in result.files:
        if len(rel.parts) > 2 and rel.parts[0] in _AGENT_DIRS and rel.parts[1] == "skills":
            agent_dirs.setdefault(f"{rel.parts[0]}/skills", set()).add(rel.parts[2])
            continue
        for depth in range(1, len(rel.parts)):
            parent = Path(*rel.parts[:depth])
            if parent not in nodes:
                nodes[parent] = nodes[parent.parent if depth > 1 else Path(".")].add(
                    f"{_output.esc(parent.name)}/"
                )
        nodes[rel.parent if rel.parent != Path("") else Path(".")].add(_output.esc(rel.name))
    if result.lock.status == "written":
        tree.add("uv.lock")
    err.print(tree)
    _output.success(
        f"Created `{result.names.raw}` (package `{result.names.package}`, "
        f"Space `{result.names.space}`) from the {result.template} template."
    )
    if result.lock.status in ("failed", "unavailable"):
        _output.warn(result.lock.message, f"Retry with: {result.lock.command}")
    for note in getattr(result, "notes", ()):
        _output.warn(note)
    _print_static_report(getattr(result, "report", None))
    if agent_dirs:
        skills = sorted(set().union(*agent_dirs.values()))
        _output.info(
            f"Agent skills ({', '.join(skills)}) in "
            f"{', '.join(sorted(agent_dirs))}; skip with --no-skills."
        )
    rel = result.path
    try:
        rel = result.path.relative_to(Path.cwd())
    except ValueError:
        pass
    err.print("\nNext:")
    for cmd in (
        f"cd {rel}",
        # --python names the environment's own venv: an activated venv elsewhere would
        # otherwise receive the install
        "uv venv && uv pip install --python .venv/bin/python -e . pytest   # or: uv sync",
        ".venv/bin/python -m pytest -q    # its own tests",
        "envkit validate                  # static + runtime checks",
        "envkit run                       # serve on http://127.0.0.1:8000",
    ):
        err.print(f"  {_output.esc(cmd)}")


def _print_static_report(report) -> None:  # noqa: ANN001 - ValidationReport, lazily
    """For an external template: `envkit validate --static`'s verdict on the new environment,
    with its error findings (the template is not envkit's, so it may not pass)."""
    if report is None:
        return
    s = report.summary
    verdict = "PASSED" if report.passed else "FAILED"
    line = (
        f"envkit validate --static: {verdict}: {s['errors']} error(s), "
        f"{s['warnings']} warning(s), {s['infos']} info(s)."
    )
    if report.passed:
        _output.info(_output.esc(line))
        return
    _output.warn(line, "Fix them, then run `envkit validate` in the environment.")
    for f in report.errors[:10]:
        where = f" ({f.location})" if f.location else ""
        _output.err.print(f"  {f.code}{_output.esc(where)}: {_output.esc(f.message)}")


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("init")(handled(init_cmd))
