"""Options shared by several commands, declared once (``Annotated`` aliases)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

EnvDirArg = Annotated[
    Path,
    typer.Argument(help="Environment directory (holds openenv.yaml).", show_default=True),
]
PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="Interpreter that serves the environment "
        "(default: PATH/.venv/bin/python if present, else the current one).",
    ),
]
HostOpt = Annotated[str, typer.Option("--host", help="Bind address.")]
PortOpt = Annotated[
    int | None,
    typer.Option(
        "--port",
        "-p",
        min=1,
        max=65535,
        help="TCP port (default: the manifest's port; with --docker a free one).",
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option("--url", help="A running server, e.g. http://127.0.0.1:8000 or a Space app URL."),
]


class Format(StrEnum):
    """Every output format of every command; ``--format`` is parsed into it once."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"  # workflow annotations (validate)
    JUNIT = "junit"  # JUnit XML (validate)
    MARKDOWN = "markdown"  # rules


def format_parser(*allowed: Format) -> Callable[[object], Format]:
    """A ``--format`` parser accepting ``allowed`` only (case-insensitive).

    Raises:
        typer.BadParameter: any other value (exit 2, the accepted ones listed).
    """
    names = ", ".join(f.value for f in allowed)

    def parse(value: object) -> Format:
        if isinstance(value, Format) and value in allowed:
            return value
        text = str(value).strip().lower()
        for fmt in allowed:
            if fmt.value == text:
                return fmt
        raise typer.BadParameter(f"{value!r} is not one of {names}.")

    return parse


def _format_option(*allowed: Format, help: str) -> object:
    return typer.Option(
        "--format",
        "-f",
        parser=format_parser(*allowed),
        help=help,
        metavar="[" + "|".join(f.value for f in allowed) + "]",
    )


FormatOpt = Annotated[
    Format, _format_option(Format.TEXT, Format.JSON, help="Output format: text or json.")
]
ReportFormatOpt = Annotated[
    Format,
    _format_option(
        Format.TEXT,
        Format.JSON,
        Format.GITHUB,
        Format.JUNIT,
        help="text, json, github (workflow annotations) or junit (XML).",
    ),
]
RulesFormatOpt = Annotated[
    Format,
    _format_option(
        Format.TEXT,
        Format.JSON,
        Format.MARKDOWN,
        help="text (a table), json, or markdown (docs/rules.md).",
    ),
]

# -- time limits: `--timeout` is always the whole run's budget --------------------
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        metavar="SECONDS",
        show_default=False,
        help="Budget of the whole run in seconds (start-up, every check or episode, and the "
        "stop). \\[default: none]",
    ),
]
RunTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        metavar="SECONDS",
        show_default=False,
        help="Serve for at most SECONDS, counted from the launch (start-up included), then "
        "stop the server and every process it started and exit 0; e.g. a time-boxed server "
        "in CI. Not with --docker. \\[default: none: until Ctrl-C]",
    ),
]
StartupTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--startup-timeout",
        min=0.1,
        metavar="SECONDS",
        show_default=False,
        help="Seconds to wait for GET /health after the server starts \\[default: "
        "startup_timeout_s of openenv.yaml, 60].",
    ),
]
ReplyTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--reply-timeout",
        min=0.1,
        metavar="SECONDS",
        show_default=False,
        help="Seconds to wait for one answer of the server (reset, step, state, HTTP) "
        "\\[default: 2 x step_timeout_s of openenv.yaml, at least 2].",
    ),
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Hugging Face token (default: $HF_TOKEN, else the token saved by "
        "`hf auth login`). Never printed.",
        show_default=False,
    ),
]
EnvVarOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--env", "-e", metavar="KEY=VALUE", help="Environment variable KEY=VALUE (repeatable)."
    ),
]


def parse_key_values(items: list[str] | None, option: str) -> dict[str, str]:
    """``["A=1", "B=2"]`` -> ``{"A": "1", "B": "2"}``.

    Raises:
        typer.BadParameter: an item without ``=`` or with an empty key.
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
        out[key.strip()] = value
    return out
