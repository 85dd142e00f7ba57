"""``envkit validate``: static lint plus live protocol checks, with coded findings.

envkit.validation and envkit.container import httpx, which imports its own command line and
with it rich.syntax and pygments (0.1-0.2 s): they are imported where the command uses them,
so ``envkit validate --help`` stays fast (tests/cli/test_startup.py).
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import (
    Format,
    PythonOpt,
    ReplyTimeoutOpt,
    ReportFormatOpt,
    StartupTimeoutOpt,
    UrlOpt,
)
from envkit.errors import ExitCode, UsageError
from envkit.findings import RULES

if TYPE_CHECKING:
    from envkit.container import BuildEvent
    from envkit.validation import RunOptions, ValidationReport


def explain(code: str) -> str:
    """The documentation of one rule (``--explain``).

    Raises:
        UsageError: unknown code (with the closest known one).
    """
    import envkit.validation.rules  # noqa: F401 - registers every rule

    key = code.strip().upper()
    rule = RULES.get(key) or next((r for r in RULES.values() if r.name == code.strip()), None)
    if rule is None:
        close = difflib.get_close_matches(key, list(RULES), n=1)
        raise UsageError(
            f"--explain: unknown rule {code!r}{f' (did you mean {close[0]}?)' if close else ''}.",
            hint="List the rules with `envkit rules`.",
        )
    return rule.explain() + f"\nDocs: {rule.url}\n"


# `validate`'s own --timeout: the shared option's help says "[default: none]", but a validate
# run always has a budget (600 s, envkit.validation.options.DEFAULT_BUDGET_S) in every lane.
ValidateTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        metavar="SECONDS",
        show_default=False,
        help="Budget of the whole run in seconds, in every lane: static checks, start-up, "
        "every check or episode and the stop; with --docker the build too. "
        "\\[default: 600]",
    ),
]


# `verifiers:DIR` and other import sources (`KIND:TARGET`, envkit.importers.parse_source);
# a directory whose name has a colon stays a directory.
_IMPORT_SOURCE = re.compile(r"^[A-Za-z][\w-]+:")


def validate_cmd(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="Environment directory (holds openenv.yaml) \\[default: . unless --url], "
            "or `verifiers:DIR` / `verifiers:MODULE`: a verifiers taskset, imported into a "
            "temporary environment for the run.",
            show_default=False,
        ),
    ] = None,
    url: UrlOpt = None,
    python: PythonOpt = None,
    static: Annotated[
        bool, typer.Option("--static", help="Static checks only: never start or contact a server.")
    ] = False,
    fmt: ReportFormatOpt = Format.TEXT,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the report to FILE (atomically) instead of stdout."
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select",
            help="Only these rule codes or prefixes (EK5, EK503, ALL); comma-separated "
            "or repeated; a runtime check that feeds none of them is not played. Replaces "
            "`select` of \\[tool.envkit.validate].",
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore", help="Skip these codes or prefixes; added to the config's `ignore`."
        ),
    ] = None,
    exit_zero: Annotated[
        bool,
        typer.Option(
            "--exit-zero", help="Exit 0 even when error findings remain (adopting in CI)."
        ),
    ] = False,
    timeout: ValidateTimeoutOpt = None,
    startup_timeout: StartupTimeoutOpt = None,
    reply_timeout: ReplyTimeoutOpt = None,
    episodes: Annotated[
        int, typer.Option("--episodes", min=1, help="Fuzzed episodes in the runtime stage.")
    ] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the action generator.")] = 0,
    search_budget: Annotated[
        float | None,
        typer.Option(
            "--search-budget",
            min=0.0,
            metavar="SECONDS",
            show_default=False,
            help="Seconds of the reward-guided exploit search (EK525); 0 turns it off. It "
            "stops sooner when it finds nothing. \\[default: 30]",
        ),
    ] = None,
    explain_code: Annotated[
        str | None,
        typer.Option(
            "--explain", metavar="CODE", help="Print the documentation of one rule and exit."
        ),
    ] = None,
    docker: Annotated[
        bool,
        typer.Option(
            "--docker",
            help="Container lane: build the image (or use --image), run it hardened "
            "(read-only, uid 65532, no capabilities, declared memory/CPU/network) and play the "
            "runtime stage through its port.",
        ),
    ] = False,
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            metavar="TAG",
            help="--docker: play this image instead of building one.",
            show_default=False,
        ),
    ] = None,
    show_all: Annotated[
        bool,
        typer.Option(
            "--show-all",
            help="Text format: list generic hygiene warnings (.gitignore, "
            "BuildKit syntax, ...) one by one instead of one line per family, and every "
            "skipped check with the reason it was not evaluated.",
        ),
    ] = False,
    no_train_path: Annotated[
        bool,
        typer.Option(
            "--no-train-path",
            help="Skip the training-path stage (EK7xx): importing the TRL adapter (trl_env.py), "
            "client, inference script and tests in the environment's interpreter, and playing "
            "the oracle through the adapter.",
        ),
    ] = False,
) -> None:
    """Check an environment: manifest, packaging, Dockerfile, secrets, live protocol, rewards.

    PATH (default .) gets the static checks, then the runtime checks against a server envkit
    starts from its openenv.yaml on a free 127.0.0.1 port (stopped afterwards). --url checks
    a running server instead (with PATH too: static on PATH, runtime on the URL using PATH's
    manifest). Exit 0 when no error finding remains, 1 when one does, 2 for usage or config
    errors. Findings go to stdout, progress to stderr. --timeout bounds the whole run
    (default 600 s; with --docker the build too). Configure in pyproject.toml under
    \\[tool.envkit.validate] (select, ignore, severity).

    Examples:
      envkit validate
      envkit validate envs/my-env --static
      envkit validate --url https://me-my-env.hf.space
      envkit validate --docker
      envkit validate --docker --image my-env:0.1.0
      envkit validate --format github --select EK1,EK2,EK3
      envkit validate --format junit --output report.xml --exit-zero
      envkit validate --explain EK503
      envkit validate --show-all
    """
    if explain_code is not None:
        _output.out.print(explain(explain_code), end="", markup=False, emoji=False)
        return
    from envkit.validation import RunOptions

    if path is None and not url:
        path = Path(".")
    # On a terminal progress is one transient status line; in CI logs, one line per stage.
    status = _output.err.status("Validating…") if _output.is_tty() else None

    def progress(line: str) -> None:
        if status is not None:
            status.update(f"Validating: {_output.esc(line)}")
        else:
            _output.err.print(f"[dim]{_output.esc(line)}[/dim]")

    opts = RunOptions(
        python=python,
        select=select,
        ignore=ignore,
        episodes=episodes,
        seed=seed,
        timeout_s=timeout,
        startup_timeout_s=startup_timeout,
        reply_timeout_s=reply_timeout,
        progress=progress,
        train_path=not no_train_path,
        search_budget_s=search_budget,
    )
    with status if status is not None else contextlib.nullcontext():
        if path is not None and _IMPORT_SOURCE.match(str(path)) and not path.exists():
            report = _validate_imported(
                str(path), url=url, static=static, docker=docker or image is not None, opts=opts
            )
        elif docker or image is not None:
            report = _validate_docker(path, image, url=url, static=static, opts=opts)
        else:
            report = _validate_source(path, url=url, static=static, opts=opts)
    _emit(report, fmt, output, show_all=show_all)
    if not report.passed and not exit_zero:
        raise typer.Exit(int(ExitCode.FINDINGS))


def _validate_source(
    path: Path | None, *, url: str | None, static: bool, opts: RunOptions
) -> ValidationReport:
    """The source directory or ``--url`` lane (:func:`envkit.validation.run_source`)."""
    from envkit.validation import run_source

    return run_source(path, opts, url=url, static=static)


def _validate_imported(
    source: str, *, url: str | None, static: bool, docker: bool, opts: RunOptions
) -> ValidationReport:
    """``verifiers:DIR|MODULE``: import the source into a temporary environment (removed
    after, :func:`envkit.importers.scratch.imported`) and run the source lane on it; the
    report names the source.

    Raises:
        UsageError: --url or --docker was given too; the import or its venv failed.
    """
    for flag, used in (("--url", url is not None), ("--docker", docker)):
        if used:
            raise UsageError(
                f"{flag} does not apply to `{source}` (envkit imports it and plays it itself).",
                hint=f"Drop {flag}, or import it with `envkit import {source} NAME` first.",
            )
    from envkit.importers.scratch import imported

    with imported(source, progress=opts.progress) as root:
        report = _validate_source(root, url=None, static=static, opts=opts)
    report.target = f"{source} (imported into a temporary environment, removed after)"
    return report


def _emit(report: ValidationReport, fmt: Format, output: Path | None, *, show_all: bool) -> None:
    """Write the report to ``output`` (atomically) or stdout; the summary line on stderr.

    Raises:
        UsageError: ``output`` cannot be written.
    """
    from envkit.validation.report import (
        render,
        render_text_styled,
        summary_line,
        write_atomic,
    )

    sink = _output.Output(fmt)
    text = render(report, fmt.value, show_all=show_all)
    if output is not None:
        try:
            write_atomic(output, text, parents=False)
        except OSError as exc:
            raise UsageError(
                f"Cannot write {output}: {exc.strerror or exc}.",
                hint="Pass a writable --output path.",
            ) from None
        _output.info(f"Report written to {_output.esc(output)}.")
        _output.info(_output.esc(summary_line(report)))
    elif fmt is Format.TEXT and _output.colour(_output.out):
        # On a terminal the same text, coloured by severity; piped, redirected, under
        # NO_COLOR, TERM=dumb or --output: plain (the branches around this one).
        _output.out.print(render_text_styled(report, show_all=show_all), end="", soft_wrap=True)
    else:
        sink.text(text, end="")
        if fmt is not Format.TEXT:
            _output.info(_output.esc(summary_line(report)))


def _validate_docker(
    path: Path | None, image: str | None, *, url: str | None, static: bool, opts: RunOptions
) -> ValidationReport:
    """``--docker`` / ``--image``: the container lane (:func:`envkit.container.lane.run_docker`).

    Raises:
        UsageError: ``--url`` or ``--static`` was given too.
    """
    for flag, used in (("--url", url is not None), ("--static", static)):
        if used:
            raise UsageError(
                f"{flag} does not apply to --docker (the lane plays the image).",
                hint=f"Drop {flag} or --docker.",
            )
    from envkit.container.lane import DockerOptions, run_docker

    progress = opts.progress

    def on_event(event: BuildEvent) -> None:
        if event.kind == "step":
            progress(f"build step {event.step}/{event.total}: {event.text}")

    return run_docker(path or Path("."), opts, DockerOptions(image=image, on_event=on_event))


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("validate")(handled(validate_cmd))
