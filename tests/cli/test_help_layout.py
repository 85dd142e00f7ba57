"""Help over the whole CLI tree: value names instead of typer's type labels (`<bool>`,
`<str>`, `<path>`, `<list[str]>`, `<int range>`), and prose paragraphs that rich wraps to
the terminal instead of the docstring's own line breaks."""

from __future__ import annotations

import re

import pytest
import typer
from typer._click import Context

from envkit.cli import app
from envkit.cli._group import unwrap

TYPE_LABEL = re.compile(r"<(?:bool|str|int|float|path|file|dir|text|list\[[^\]]*\]|[a-z]+ range)>")


def _tree() -> list[tuple[str, ...]]:
    """Every command path, e.g. ("validate",), ("label", "export"), as the group hands out."""
    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = [()]

    def walk(group, ctx, prefix: tuple[str, ...]) -> None:  # noqa: ANN001 - typer's click
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            paths.append((*prefix, name))
            if hasattr(cmd, "list_commands"):  # typer's groups are not click.Group
                walk(cmd, Context(cmd, parent=ctx, info_name=name), (*prefix, name))

    walk(root, Context(root, info_name="envkit"), ())
    return paths


PATHS = _tree()


def test_the_tree_is_walked():
    assert ("validate",) in PATHS and ("label", "export") in PATHS and len(PATHS) > 15


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "envkit")
def test_no_type_labels_in_help(cli, path):
    result = cli(*path, "--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert not TYPE_LABEL.findall(result.output), TYPE_LABEL.findall(result.output)


def test_value_names_flags_and_metavars(cli):
    out = cli("validate", "--help", env={"COLUMNS": "200"}).output
    row = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ --")}
    assert "PYTHON" in row["--python"]  # a valued option: its name in capitals
    assert "SECONDS" in row["--timeout"]  # an explicit metavar wins
    assert "[text|json|github|junit]" in row["--format"]
    static = row["--static"].split("Static checks")[0]
    assert static.split() == ["│", "--static"]  # a flag shows no value at all


def test_prose_paragraphs_are_not_hard_wrapped(cli):
    out = cli("validate", "--help", env={"COLUMNS": "250"}).output
    # Two source lines of the docstring's second paragraph end up on one rendered line.
    assert "a server envkit starts from its openenv.yaml on a free 127.0.0.1 port" in out
    # Example lines stay one per line.
    assert re.search(r"^ +envkit validate --docker *$", out, re.MULTILINE)
    assert re.search(r"^ +envkit validate --explain EK503 *$", out, re.MULTILINE)


def test_unwrap_joins_prose_only():
    text = (
        "Title line.\n\n"
        "A paragraph wrapped\nin the source.\n\n"
        "Examples:\n  envkit run\n  envkit run --docker\n\n"
        "Steps:\n- one\n- two\n\n"
        "\bkept\nas is"
    )
    assert unwrap(text).split("\n\n") == [
        "Title line.",
        "A paragraph wrapped in the source.",
        "Examples:\n  envkit run\n  envkit run --docker",
        "Steps:\n- one\n- two",
        "\bkept\nas is",
    ]
