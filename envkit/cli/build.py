"""``envkit build``: build the environment's Docker image with live progress."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Group
from rich.live import Live
from rich.text import Text

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, FormatOpt, parse_key_values
from envkit.errors import UsageError

if TYPE_CHECKING:
    from envkit.container import BuildEvent, BuildResult

TagOpt = Annotated[
    str | None,
    typer.Option(
        "--tag",
        "-t",
        help="Image reference (default: NAME:VERSION from openenv.yaml and pyproject.toml).",
        show_default=False,
    ),
]
LabelOpt = Annotated[
    list[str] | None,
    typer.Option("--label", help="Extra image label KEY=VALUE (repeatable).", show_default=False),
]


class BuildProgress:
    """Renders :class:`envkit.container.BuildEvent` s on stderr.

    TTY: a live panel (step N/M, the instruction, a scrolling tail of its output) above which
    finished steps are printed. Not a TTY: plain lines. ``quiet``: nothing.
    """

    TAIL = 8

    def __init__(self, *, quiet: bool, live: bool) -> None:
        self.quiet = quiet
        self.live_enabled = live and not quiet
        self.tail: deque[Text] = deque(maxlen=self.TAIL)
        self.header = "Preparing the build…"
        self._live: Live | None = None

    def __enter__(self) -> BuildProgress:
        if self.live_enabled:
            self._live = Live(
                self._render(), console=_output.err, transient=True, refresh_per_second=8
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def _render(self) -> Group:
        lines = [Text(self.header, style="bold")]
        for ln in self.tail:
            shown = Text("  ", style="dim", overflow="ellipsis", no_wrap=True)
            lines.append(shown.append_text(ln))
        return Group(*lines)

    @staticmethod
    def _log_line(raw: str) -> Text:
        """One line of the build's log as the user sees it: its own colours (pip's, apt's)
        on a colour terminal; plain text when stderr is not a terminal, under NO_COLOR or
        TERM=dumb (:func:`envkit.cli._output.colour`), so no escape codes reach a log file."""
        from envkit.container.build_job import strip_ansi

        if _output.colour(_output.err):
            return Text.from_ansi(raw)
        return Text(strip_ansi(raw))

    def __call__(self, event: BuildEvent) -> None:
        if self.quiet and event.kind != "warning":
            return
        if event.kind == "warning":
            _output.warn(event.text)
            return
        if event.kind == "step":
            self.header = f"Step {event.step}/{event.total}: {event.text}"
            self.tail.clear()
            if self._live is None:
                _output.err.print(
                    f"Step {event.step}/{event.total}: {_output.esc(event.text)}",
                    overflow="ignore",
                    crop=False,
                )
            else:
                _output.err.print(
                    f"[dim]Step {event.step}/{event.total}:[/dim] {_output.esc(_short(event.text))}"
                )
        elif event.kind == "cached":
            if self._live is None:
                _output.err.print("  (cached)")
        elif event.kind == "output":
            line = self._log_line(event.text)
            if self._live is None:
                _output.err.print(Text("  ").append_text(line), overflow="ignore", crop=False)
            else:
                self.tail.append(line)
        if self._live is not None:
            self._live.update(self._render())


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_result(result: BuildResult, fmt: str) -> None:
    """Print a :class:`envkit.container.BuildResult` on stdout as text or JSON."""
    if fmt == "json":
        _output.Output(_output.Format.JSON).data(result.to_dict())
        return
    total = len(result.steps)
    _output.out.print(f"image   {result.image_id}", markup=False)
    _output.out.print(f"tags    {', '.join(result.tags)}", markup=False)
    _output.out.print(f"size    {result.size_mb:.1f} MB", markup=False)
    _output.out.print(
        f"built   in {result.seconds:.1f} s; {result.cache_hits}/{total} steps "
        f"from cache ({result.builder})",
        markup=False,
    )


def build_cmd(
    path: EnvDirArg = Path("."),
    tag: TagOpt = None,
    build_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--build-arg", help="Build argument KEY=VALUE (repeatable).", show_default=False
        ),
    ] = None,
    label: LabelOpt = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Rebuild every step.")] = False,
    pull: Annotated[bool, typer.Option("--pull", help="Always pull a newer base image.")] = False,
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="Target platform, e.g. linux/amd64.", show_default=False),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress; print only the result.")
    ] = False,
    no_check: Annotated[
        bool,
        typer.Option(
            "--no-check", help="Build even when the Dockerfile checks (EK3xx) find errors."
        ),
    ] = False,
    fmt: FormatOpt = "text",
) -> None:
    """Build the environment's Docker image from its root Dockerfile.

    Runs the Dockerfile checks first, then builds with the Docker engine ($DOCKER_HOST or
    the local socket), showing each step live. The image is tagged <name>:<version> unless
    --tag, and labelled with OCI labels and the manifest's SHA-256. Dockerfiles that need
    BuildKit (RUN --mount, # syntax=) are built with a docker CLI that has it. Exit 1 when a
    step fails (its last 30 output lines are shown), 2 when the engine is unreachable.

    Examples:
      envkit build
      envkit build envs/my-env --tag my-env:dev --build-arg PIP_INDEX_URL=https://...
      envkit build --no-cache --quiet --format json | jq .size_mb
    """
    from envkit.container import build_image

    if fmt not in ("text", "json"):
        raise UsageError(f"--format {fmt!r} is not supported.", hint="Use text or json.")
    args = parse_key_values(build_arg, "--build-arg")
    labels = parse_key_values(label, "--label")
    progress = BuildProgress(quiet=quiet, live=_output.is_tty())
    with progress:
        result = build_image(
            path,
            tag=tag,
            build_args=args,
            labels=labels,
            no_cache=no_cache,
            pull=pull,
            platform=platform,
            check=not no_check,
            on_event=progress,
        )
    if not quiet:
        _output.success(
            f"Built {_output.esc(', '.join(result.tags))} in {result.seconds:.1f} s "
            f"({result.cache_hits}/{len(result.steps)} steps from cache). "
            f"Next: envkit run --docker {_output.esc(str(path))}"
            # the image just built: without --tag, run --docker would build the default tag
            + (f" --tag {_output.esc(tag)}" if tag is not None else "")
        )
    render_result(result, fmt)


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("build")(handled(build_cmd))
