"""``envkit push``: deploy the environment to a Hugging Face Docker Space."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import EnvVarOpt, FormatOpt, TokenOpt, parse_key_values
from envkit.hub import push


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def quiet_hub_client() -> None:
    """The client's own progress bars and warnings would interleave with ours."""
    from huggingface_hub.utils import disable_progress_bars, logging

    disable_progress_bars()
    logging.set_verbosity_error()


# The options of `envkit push`, named once so push_cmd's signature reads as a list.
PathArg = Annotated[Path, typer.Argument(help="Environment directory (holds openenv.yaml).")]
RepoIdOpt = Annotated[
    str | None,
    typer.Option(
        "--repo-id", help="Space NS/NAME \\[default: <you>/<manifest name in kebab-case>]."
    ),
]
PrivateOpt = Annotated[
    bool | None,
    typer.Option(
        "--private/--public",
        help="Visibility; applied to an existing Space too \\[default: keep; new Spaces are public].",
        show_default=False,
    ),
]
HardwareOpt = Annotated[
    str | None,
    typer.Option(
        "--hardware",
        help="Hardware flavour (cpu-basic, cpu-upgrade, t4-small, a10g-small, "
        "...); applied to an existing Space too.",
    ),
]
SecretOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--secret",
        help="Space secret KEY=VALUE, or KEY to read it from your environment "
        "(repeatable). Values are never printed.",
    ),
]
CreatePrOpt = Annotated[
    bool, typer.Option("--create-pr", help="Open a pull request instead of committing to main.")
]
MessageOpt = Annotated[
    str | None,
    typer.Option("--message", "-m", help="Commit message \\[default: envkit push <version>]."),
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Make no write request: print the plan (repo, files and sizes, "
        "README changes, variables, secret names).",
    ),
]
DryRunDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--dry-run-dir",
        metavar="DIR",
        help="With --dry-run (implied): also write the staged folder to DIR.",
    ),
]
WaitOpt = Annotated[
    bool,
    typer.Option("--wait", help="Wait until the Space is RUNNING (or fails), then check the app."),
]
WaitTimeoutOpt = Annotated[
    float, typer.Option("--wait-timeout", min=1, help="Seconds to wait with --wait.")
]
NoValidateOpt = Annotated[
    bool,
    typer.Option(
        "--no-validate",
        help="Push despite static validate errors (secrets still stop the "
        "push: no option uploads them).",
    ),
]


def push_cmd(
    path: PathArg = Path("."),
    repo_id: RepoIdOpt = None,
    private: PrivateOpt = None,
    hardware: HardwareOpt = None,
    env: EnvVarOpt = None,
    secret: SecretOpt = None,
    create_pr: CreatePrOpt = False,
    message: MessageOpt = None,
    dry_run: DryRunOpt = False,
    dry_run_dir: DryRunDirOpt = None,
    wait: WaitOpt = False,
    wait_timeout: WaitTimeoutOpt = 900.0,
    no_validate: NoValidateOpt = False,
    token: TokenOpt = None,
    fmt: FormatOpt = "text",
) -> None:
    """Deploy the environment to a Hugging Face Docker Space, safely and verifiably.

    Runs static validate first (secrets in the upload set always stop the push), uploads
    exactly the files that `.gitignore`/`.dockerignore` allow as ONE commit (unchanged files
    are not sent; nothing changed -> no commit), with the Dockerfile at the root and the README
    card repaired in a staged copy (your files are never modified). Variables come from
    openenv.yaml `variables:` and --env.

    Examples:
      envkit push --dry-run
      envkit push --repo-id alice/echo-env --private --hardware cpu-upgrade
      envkit push -e MAX_CONCURRENT_ENVS=32 --secret OPENAI_API_KEY --wait
      envkit push --create-pr -m "Harder levels"
      envkit push --dry-run-dir /tmp/staged   # look at exactly what would be uploaded
    """
    if fmt not in ("text", "json"):
        raise typer.BadParameter("expected text or json", param_hint="--format")
    variables = parse_key_values(env, "--env")
    secrets: dict[str, str | None] = {}
    for item in secret or []:
        key, sep, value = item.partition("=")
        secrets[key.strip()] = value if sep else None
    quiet_hub_client()
    with _output.err.status("Pushing…") as status:
        result = push(
            path,
            repo_id=repo_id,
            private=private,
            hardware=hardware,
            env=variables,
            secrets=secrets,
            create_pr=create_pr,
            message=message,
            dry_run=dry_run or dry_run_dir is not None,
            dry_run_dir=dry_run_dir,
            wait=wait,
            wait_timeout_s=wait_timeout,
            validate=not no_validate,
            token=token,
            progress=lambda line: status.update(_output.esc(line)),
        )
    if fmt == "json":
        _output.Output(_output.Format.JSON).data(result.to_dict())
    else:
        _render(result)
    if not result.ok:
        raise typer.Exit(1)


def _render(r) -> None:  # noqa: ANN001 - PushResult, imported lazily
    """The plan (every line of a dry run), then, after a real push, :func:`_render_outcome`."""
    out, esc = _output.out, _output.esc
    head = "Plan (dry run, nothing was sent)" if r.dry_run else "Push"
    if not r.remote_known:
        space = "Space unknown: the Hub was not reachable"
    else:
        space = "new Space" if r.created else "existing Space"
    out.print(f"[bold]{head}[/bold]: {esc(r.repo_id)} ({space})")
    total = sum(f.size for f in r.files)
    if r.remote_known:
        out.print(
            f"  files      {len(r.files)} ({_size(total)}): {len(r.added)} to add, "
            f"{len(r.updated)} to update, {len(r.deleted)} to delete; "
            f"{_size(r.bytes_uploaded)} to upload"
        )
        marks = dict.fromkeys(r.added, "+") | dict.fromkeys(r.updated, "~")
    else:
        out.print(
            f"  files      {len(r.files)} ({_size(total)}); what changes against the Space: unknown"
        )
        marks = {}
    if r.dry_run:
        unchanged = "=" if r.remote_known else "?"
        for f in r.files:
            out.print(f"    {marks.get(f.path, unchanged)} {esc(f.path)}  {_size(f.size)}")
        for p in r.deleted:
            out.print(f"    - {esc(p)}")
        if r.left_out:
            out.print(f"  left out   {len(r.left_out)} (not uploaded):")
            for left in r.left_out:
                out.print(f"    ! {esc(left.path)}  {esc(left.reason)}")
    for note in r.notes:
        out.print(f"  staging    {esc(note)}")
    for change in r.readme_changes:
        out.print(f"  README     {esc(change)}")
    for key, value in sorted(r.variables.items()):
        flag = " (changed)" if key in r.variables_changed and r.remote_known else ""
        out.print(f"  variable   {esc(key)}={esc(value)}{flag}")
    for key in r.secret_names:
        out.print(f"  secret     {esc(key)} (value hidden)")
    for line in r.settings_changed:
        out.print(f"  setting    {esc(line)}")
    if r.hardware and not any(s.startswith("hardware") for s in r.settings_changed):
        out.print(f"  hardware   {esc(r.hardware)}")
    out.print(f"  preflight  {esc(r.preflight)}")
    for w in r.warnings:
        _output.warn(w)
    if r.staged_dir:
        out.print(f"  staged in  {esc(r.staged_dir)}")
    if r.hub_unreachable:
        _output.warn(
            f"{r.hub_unreachable} The plan above was made offline: the namespace, whether "
            "the Space exists, and its files, settings and variables are unknown.",
            "Check your network connection (and HF_ENDPOINT if you set it), then re-run.",
        )
    if r.dry_run:
        _output.info("Dry run: run again without --dry-run to push.")
        return
    _render_outcome(r)


def _render_outcome(r) -> None:  # noqa: ANN001 - PushResult, imported lazily
    """What the push did: the commit (or none), the Space's stage, the app check, the URLs."""
    out, esc = _output.out, _output.esc
    if r.committed:
        what = f"pull request {r.pr_url}" if r.pr_url else f"commit {(r.commit_oid or '')[:12]}"
        _output.success(
            f"Pushed {esc(r.repo_id)}: {esc(what)} "
            f"({len(r.added) + len(r.updated) + len(r.deleted)} file(s) changed)."
        )
    else:
        _output.success(f"{esc(r.repo_id)} is up to date: nothing changed, no commit made.")
    if r.runtime_stage is not None:
        if r.runtime_stage == "RUNNING":
            _output.success("Space is RUNNING.")
        else:
            _output.error(
                f"The Space did not start: {r.runtime_stage}.",
                f"See the build and container logs at {r.space_url}?logs=build",
            )
    if r.app_check is not None:
        if r.app_check.ok:
            _output.success(esc(r.app_check.detail))
        else:
            _output.error(
                f"The app check failed: {r.app_check.detail}",
                f"Look at the logs at {r.space_url}?logs=container, then run "
                f"`envkit validate --url {r.app_url}`.",
            )
    out.print(f"Space: {esc(r.space_url)}")
    out.print(f"App:   {esc(r.app_url)}")


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("push")(handled(push_cmd))
