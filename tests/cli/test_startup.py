"""Start-up: envkit's help renders without importing rich.markdown or rich.traceback (their
imports are deferred, envkit.cli._lazy_help), and the deferred names still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("rich.markdown", "markdown_it", "rich.traceback", "rich.syntax")

PROBE = """
import json, sys
import envkit.cli
from envkit.cli import app
for args in ({args}):
    try:
        app(list(args), prog_name="envkit")
    except SystemExit:
        pass
print(json.dumps({{m: m in sys.modules for m in {heavy!r} + ("typer.rich_utils",)}}),
      file=sys.stderr)
"""


def _probe(*argvs: tuple[str, ...]) -> dict[str, bool]:
    code = PROBE.format(args=", ".join(repr(a) for a in argvs) + ",", heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "Usage" in proc.stdout + proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_help_does_not_import_markdown_or_tracebacks():
    loaded = _probe(("--help",), ("validate", "--help"), ("run", "--help"))
    assert loaded.pop("typer.rich_utils") is True  # the rich help was rendered
    assert loaded == dict.fromkeys(HEAVY, False)


def test_usage_error_does_not_import_them_either():
    loaded = _probe(
        ("validate", "--no-such-option"),
    )
    assert loaded.pop("typer.rich_utils") is True
    assert loaded == dict.fromkeys(HEAVY, False)


DEFERRED_STILL_WORK = """
import sys
import envkit.cli
import typer
from typer import rich_utils
from typer.testing import CliRunner
import rich.markdown, rich.traceback
# the stand-ins left sys.modules: the real modules are imported by name
assert type(sys.modules["rich.markdown"]).__name__ == "module"
assert isinstance(rich_utils.Markdown("**x**"), rich.markdown.Markdown)
assert isinstance(rich.markdown.Markdown("x"), rich_utils.Markdown)
try:
    raise ValueError("boom")
except ValueError as exc:
    tb = rich_utils.Traceback.from_exception(type(exc), exc, exc.__traceback__)
assert isinstance(tb, rich.traceback.Traceback)
md = typer.Typer(rich_markup_mode="markdown")
@md.command()
def hello() -> None:
    '''Say **hello** in `markdown`.'''
out = CliRunner().invoke(md, ["--help"]).output
assert "hello" in out and "**" not in out, out
print("ok")
"""


def test_deferred_names_are_the_real_classes():
    # A program that imports envkit.cli and then uses typer's markdown mode and pretty
    # tracebacks gets the real rich classes.
    proc = subprocess.run(
        [sys.executable, "-c", DEFERRED_STILL_WORK], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


BUILT = """
import sys
import typer.main
from envkit.cli import app
built = []
real = typer.main.get_command_from_info
def counting(info, **kw):
    built.append(info.name)
    return real(info, **kw)
typer.main.get_command_from_info = counting
import envkit.cli._group as group
group.get_command_from_info = counting
try:
    app({args!r}, prog_name="envkit")
except SystemExit:
    pass
print(",".join(built), file=sys.stderr)
"""


def _built(args: list[str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", BUILT.format(args=args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Usage" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return [name for name in last.split(",") if name]


def test_root_help_builds_no_command_and_a_command_builds_only_itself():
    """Typer reads every command's signature when it builds the root group; envkit's root
    builds a command when it is looked up, and its help lists stand-ins."""
    assert _built(["--help"]) == []
    assert _built(["init", "--help"]) == ["init"]


def test_root_help_lists_commands_and_groups_in_module_order():
    """Typer keeps commands and groups in two lists; the root's help interleaves them in the
    order of ``COMMAND_MODULES`` (``deploy`` right after ``capacity``), with one-line
    summaries even when a docstring's first paragraph is wrapped."""
    from envkit.cli import COMMAND_MODULES

    proc = subprocess.run(
        [sys.executable, "-m", "envkit", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    listed = [
        line.split()[1]
        for line in proc.stdout.splitlines()
        if line.startswith("│ ") and len(line.split()) > 2 and line[2] != " "
    ]
    expected = [m.rstrip("_").replace("_", "-") for m in COMMAND_MODULES]
    assert listed[-len(expected) :] == expected, listed


COMMAND_MODULES_LOADED = """
import json, sys
from envkit.cli import COMMAND_MODULES, app
try:
    app({args!r}, prog_name="envkit")
except SystemExit:
    pass
loaded = [m for m in COMMAND_MODULES if "envkit.cli." + m in sys.modules]
print(json.dumps(loaded), file=sys.stderr)
"""


def _modules_loaded(args: list[str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", COMMAND_MODULES_LOADED.format(args=args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Usage" in proc.stdout
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_root_help_imports_no_command_module_and_a_command_only_its_own():
    """``envkit --help`` lists the commands from ``envkit.cli.COMMANDS``; a command's module
    is imported when that command (or its help) runs."""
    assert _modules_loaded(["--help"]) == []
    assert _modules_loaded(["init", "--help"]) == ["init"]
    assert _modules_loaded(["serve-oracle", "--help"]) == ["serve_oracle"]


def test_listed_summaries_are_the_commands_own():
    """The summaries ``envkit --help`` lists without importing a command module are the first
    paragraphs of the commands' own help (a group's short help), and no command is hidden,
    deprecated or in another panel, which the stand-ins the help lists would not show."""
    import typer
    from typer._click import Context

    from envkit.cli import COMMANDS, app
    from envkit.cli._group import listed_summary

    root = typer.main.get_command(app)
    ctx = Context(root, info_name="envkit")
    assert root.list_commands(ctx) == list(COMMANDS)
    for name, (_, summary) in COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None and command.name == name
        assert listed_summary(command) == summary, name
        assert not command.hidden and not command.deprecated, name
        assert not getattr(command, "rich_help_panel", None), name


#: What `envkit init` has no use for: the validator, the wire client, the manifest model and
#: its YAML reader, the spinner (stderr is no terminal here) and rich's emoji table.
INIT_NEVER = (
    "envkit.validation",
    "envkit.wire",
    "envkit.envdir.manifest",
    "ruamel.yaml",
    "rich.status",
    "rich._emoji_codes",
)


def test_init_imports_only_what_it_renders_with(tmp_path) -> None:
    code = (
        "import json, sys\n"
        "from envkit.cli import app\n"
        "try:\n"
        f"    app(['init', 'my-env', '--no-lock', '--output-dir', {str(tmp_path)!r}], "
        "prog_name='envkit')\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"print(json.dumps([m for m in {INIT_NEVER!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert (tmp_path / "my-env" / "openenv.yaml").is_file()
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
