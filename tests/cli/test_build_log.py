"""`envkit build` relays the build's log without ANSI escape codes unless stderr is a colour
terminal: BuildKit's plain progress lines, with the colours pip writes, fed through the
relay (envkit.container.build's reader, then the CLI's BuildProgress) into a real rich
console."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from envkit.cli import _output
from envkit.cli.build import BuildProgress
from envkit.container.build_cli import _CliProgress
from envkit.container.build_job import BuildJob, strip_ansi

# As BuildKit's --progress=plain relays a RUN step where pip warns in yellow and hides the
# cursor for its progress bar.
LOG = [
    "#7 [3/5] RUN pip install --no-cache-dir .",
    (
        "#7 2.104 \x1b[?25l\x1b[33mWARNING: Running pip as the 'root' user can result in "
        "broken permissions\x1b[0m\x1b[?25h"
    ),
    "#7 2.311 Successfully installed \x1b[1mecho-env-0.1.0\x1b[0m",
]
PLAIN = [
    "WARNING: Running pip as the 'root' user can result in broken permissions",
    "Successfully installed echo-env-0.1.0",
]


def _relay(console: Console, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(_output, "err", console)
    progress = BuildProgress(quiet=False, live=False)
    job = BuildJob(
        root=Path("."),
        tag="echo-env:0.1.0",
        build_args={},
        labels={},
        no_cache=False,
        pull=False,
        platform=None,
        instructions=(),
        emit=progress,
    )
    reader = _CliProgress(job)
    with progress:
        for line in LOG:
            reader.feed(line)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _console(**kwargs) -> Console:
    return Console(file=io.StringIO(), width=200, highlight=False, soft_wrap=True, **kwargs)


def test_not_a_terminal_gets_plain_lines(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _relay(_console(), monkeypatch)
    assert "\x1b" not in out
    for line in PLAIN:
        assert f"  {line}\n" in out


def test_no_color_on_a_terminal_gets_plain_lines(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    out = _relay(_console(force_terminal=True), monkeypatch)
    assert "\x1b" not in out
    assert f"  {PLAIN[0]}\n" in out


def test_colour_terminal_keeps_the_colours(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    out = _relay(_console(force_terminal=True, color_system="standard"), monkeypatch)
    assert "\x1b[33mWARNING: Running pip" in out  # pip's yellow, re-emitted by rich
    assert "\x1b[?25l" not in out  # cursor control is never relayed


def test_failure_tail_is_plain():
    job = BuildJob(
        root=Path("."),
        tag="t:1",
        build_args={},
        labels={},
        no_cache=False,
        pull=False,
        platform=None,
        instructions=(),
        emit=lambda event: None,
    )
    reader = _CliProgress(job)
    for line in LOG:
        reader.feed(line)
    tail = list(reader.outputs[7])
    assert tail == PLAIN
    assert strip_ansi("no escapes") == "no escapes"
