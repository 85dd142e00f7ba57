"""``envkit eval``: roll out a model (or random / oracle / your own policy) in an environment."""

from __future__ import annotations

import datetime as _dt
import enum
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from typer.core import TyperCommand

from envkit.cli import _output
from envkit.cli._group import value_names
from envkit.cli._options import (
    Format,
    FormatOpt,
    PythonOpt,
    ReplyTimeoutOpt,
    StartupTimeoutOpt,
    TimeoutOpt,
    UrlOpt,
)
from envkit.errors import UsageError

if TYPE_CHECKING:
    from envkit.evaluation import EpisodeRecord, EvalResult
    from envkit.evaluation.replay import EpisodeReplay, ReplayReport

# envkit.evaluation (pydantic, httpx, websockets: about a second) is imported inside the
# functions that use it, so that `envkit eval --help` stays fast.

_BAR = "█"

UrlsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--url",
        help="A running server, e.g. http://127.0.0.1:8000 or a Space app URL. Repeat it to "
        "spread sessions over several servers (replicas, Spaces) round-robin.",
        show_default=False,
    ),
]


def eval_cmd(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(
            help="Environment directory; its server is started on a free 127.0.0.1 port and "
            "stopped afterwards \\[default: . unless --url].",
            show_default=False,
        ),
    ] = None,
    url: UrlsOpt = None,
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            "-P",
            help="openai, random, oracle (envkit.oracle of openenv.yaml), "
            "module:callable (run in the environment's interpreter) or actions:JSON (a "
            "fixed list of actions, e.g. the replay `envkit validate` prints; actions:@FILE).",
        ),
    ] = "openai",
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="Model id for --policy openai \\[default: $MODEL_NAME].",
            show_default=False,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible endpoint \\[default: $API_BASE_URL, else "
            "https://router.huggingface.co/v1].",
            show_default=False,
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            metavar="NAME",
            help="Environment variable holding the API key "
            "\\[default: HF_TOKEN, then OPENAI_API_KEY]. The key is never printed.",
            show_default=False,
        ),
    ] = None,
    episodes: Annotated[
        int,
        typer.Option(
            "--episodes",
            "-n",
            min=1,
            help="Seeds to play (groups); each is played --group-size times.",
        ),
    ] = 8,
    group_size: Annotated[
        int,
        typer.Option(
            "--group-size", "-g", min=1, help="Rollouts per seed (GRPO-style groups; pass@k)."
        ),
    ] = 1,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            help="Parallel WebSocket sessions (capped by the server's capacity).",
        ),
    ] = 1,
    max_steps: Annotated[
        int | None,
        typer.Option(
            "--max-steps",
            min=1,
            help="Steps before an episode is cut off \\[default: envkit.max_steps, else 32].",
            show_default=False,
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature",
            "-t",
            min=0.0,
            help="Sampling temperature \\[default: 0 with --group-size 1, else 1].",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            min=0,
            help="First reset seed (seeds are SEED..SEED+episodes-1); also seeds --policy random.",
        ),
    ] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output directory \\[default: evals/<name>-<UTC time>].",
            show_default=False,
        ),
    ] = None,
    format_: FormatOpt = Format.TEXT,
    system_prompt: Annotated[
        Path | None,
        typer.Option(
            "--system-prompt",
            metavar="FILE",
            help="System prompt to use instead of the one derived from the environment's /schema.",
            show_default=False,
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            min=1,
            help="Completion token cap per model call \\[default: the endpoint's].",
            show_default=False,
        ),
    ] = None,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries",
            min=0,
            help="Retries of a failed model call (429, 5xx, network), with exponential backoff.",
        ),
    ] = 4,
    session_retries: Annotated[
        int,
        typer.Option(
            "--session-retries",
            min=0,
            help="Replays of an episode whose session was lost mid-episode (connection "
            "dropped, replica gone), each from reset on a fresh session; still lost, it is "
            "reported apart from the returns and --resume plays it again.",
        ),
    ] = 2,
    python: PythonOpt = None,
    timeout: TimeoutOpt = None,
    startup_timeout: StartupTimeoutOpt = None,
    reply_timeout: ReplyTimeoutOpt = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="DIR",
            help="Continue the run in DIR (its run.json settings): keep its finished "
            "episodes, play only the missing ones. Only -c, --python, --format and the "
            "timeouts may be given with it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Play episodes with a model and report rewards, success rate and pass@k.

    Starts the environment's server (or uses --url), plays --episodes seeds --group-size
    times each over WebSocket sessions, and writes OUT/trajectories.jsonl (one line per
    episode), OUT/summary.json and OUT/rewards.png (with the `plot` extra). The episode
    return is the sum of its step rewards; an episode succeeds when a step reaches the
    manifest's maximum reward. Replies that are not an action count as parse failures
    (reward 0), never crashes. Ctrl-C writes the episodes finished so far (exit 130). Exit 1
    when an episode ended with an environment error or was lost (its session lost, also
    after --session-retries). The run stops (exit 2, finished episodes written) when
    --timeout runs out, when 3 episodes in a row are lost (e.g. no answer within
    --reply-timeout), or when the server exits. OUT/run.json keeps the run's settings and
    each episode is appended to trajectories.jsonl as it finishes: `--resume OUT` continues
    an interrupted run. `envkit eval replay OUT [PATH | --url URL]` replays the saved
    episodes against another version and names those whose rewards changed.

    Examples:
      envkit eval --model Qwen/Qwen3-4B-Instruct-2507 --episodes 20
      envkit eval envs/my-env --policy random --episodes 50 --concurrency 8
      envkit eval --policy oracle --format json | jq .success_rate
      envkit eval --url https://me-my-env.hf.space --base-url http://127.0.0.1:8080/v1 -m local -g 4
      envkit eval --policy random --timeout 300 --reply-timeout 10
      envkit eval --url https://me-env-1.hf.space --url https://me-env-2.hf.space -c 16
      envkit eval --resume evals/my-env-20260101-120000
      envkit eval replay evals/my-env-20260101-120000 ../my-env-v2
    """
    from envkit.evaluation import evaluate

    output = _output.Output(format_)
    if resume is not None:
        _resume(ctx, resume, output)
        return

    prompt = _read_system_prompt(system_prompt)
    if out is None:
        out = _default_out_dir(path, url[0] if url else None)
    progress = _Progress(episodes * group_size)
    _finish(
        output,
        progress,
        _resume_command(ctx, out),
        lambda: evaluate(
            path,
            url=url or None,
            policy=policy,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            episodes=episodes,
            group_size=group_size,
            concurrency=concurrency,
            max_steps=max_steps,
            temperature=temperature,
            seed=seed,
            out_dir=out,
            system_prompt=prompt,
            max_tokens=max_tokens,
            max_retries=max_retries,
            session_retries=session_retries,
            python=python,
            timeout_s=timeout,
            startup_timeout_s=startup_timeout,
            reply_timeout_s=reply_timeout,
            on_episode=progress.episode,
            on_note=progress.note,
        ),
    )


# eval_cmd's parameters that --resume accepts: how fast and where the run goes on, never
# what it plays (envkit.evaluation.rundir.RESUME_MAY_CHANGE).
_RESUME_MAY_CHANGE = frozenset(
    {
        "resume",
        "concurrency",
        "python",
        "format_",
        "timeout",
        "startup_timeout",
        "reply_timeout",
        "max_retries",
        "session_retries",
    }
)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the parameter ``name`` was given (command line or environment variable)."""
    # By name: typer's context may come from its own copy of click, whose enum is not
    # click's.
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", None) in ("COMMANDLINE", "ENVIRONMENT")


def _resume_command(ctx: typer.Context, run_dir: Path) -> str:
    """The command that continues the run in ``run_dir``: ``envkit eval --resume DIR`` with
    the options given now that ``--resume`` accepts (the others are stored in run.json)."""
    parts = ["envkit", "eval", "--resume", str(run_dir)]
    for param in ctx.command.params:
        name = param.name
        if not name or name == "resume" or name not in _RESUME_MAY_CHANGE or not _given(ctx, name):
            continue
        value = ctx.params[name]
        if value is None:
            continue
        parts += [
            max(param.opts, key=len),
            str(value.value if isinstance(value, enum.Enum) else value),
        ]
    return shlex.join(parts)


def _resume(ctx: typer.Context, run_dir: Path, output: _output.Output) -> None:
    """``--resume DIR``: continue the run with its stored settings, then report over all
    its episodes.

    Raises:
        UsageError: an option that would change what the run plays was given, or DIR is not
            a run directory.
    """
    from envkit.evaluation import resume
    from envkit.evaluation.rundir import read_run

    given = [
        max(param.opts, key=len)
        for param in ctx.command.params
        if param.name and param.name not in _RESUME_MAY_CHANGE and _given(ctx, param.name)
    ]
    if given:
        raise UsageError(
            f"--resume continues a run with its own settings: {', '.join(given)} cannot be "
            "given with it.",
            hint="Drop them (only -c, --python, --format, --max-retries, --session-retries and "
            "the timeouts may change), or start a new run without --resume.",
        )
    planned = read_run(run_dir)["options"]
    progress = _Progress(int(planned.get("episodes", 1)) * int(planned.get("group_size", 1)))
    p = ctx.params
    _finish(
        output,
        progress,
        _resume_command(ctx, run_dir),
        lambda: resume(
            run_dir,
            **{
                k: p[name]
                for k, name in (
                    ("concurrency", "concurrency"),
                    ("max_retries", "max_retries"),
                    ("session_retries", "session_retries"),
                )
                if _given(ctx, name)
            },
            python=p["python"],
            timeout_s=p["timeout"],
            startup_timeout_s=p["startup_timeout"],
            reply_timeout_s=p["reply_timeout"],
            on_episode=progress.episode,
            on_note=progress.note,
        ),
    )


def _finish(
    output: _output.Output, progress: _Progress, resume_cmd: str, run: Callable[[], EvalResult]
) -> None:
    """Run the evaluation under the progress display, render it and exit with its code
    (130 after Ctrl-C, with the partial summary). ``resume_cmd`` continues the run."""
    from envkit.evaluation import EvalInterrupted

    try:
        with progress:
            result = run()
    except EvalInterrupted as exc:
        _render(exc.result, output, resume_cmd)
        _output.warn(
            f"Interrupted: {len(exc.result.episodes)} of "
            f"{exc.result.summary['settings']['episodes_planned']} episodes finished; "
            f"partial results written to {exc.result.out_dir}. Continue with: {resume_cmd}"
        )
        raise typer.Exit(130) from None
    _render(result, output, resume_cmd)
    raise typer.Exit(int(result.exit_code))


def _read_system_prompt(path: Path | None) -> str | None:
    """The text of ``--system-prompt FILE``, or ``None`` when not given.

    Raises:
        UsageError: the file cannot be read as UTF-8 text.
    """
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"--system-prompt {path}: cannot read it: {exc}.",
            hint="Pass a UTF-8 text file.",
        ) from None


def _default_out_dir(path: Path | None, url: str | None) -> Path:
    """``evals/<name>-<UTC time>``: the environment directory's name, else the URL's host
    and port (``host-port``)."""
    name = (
        (path or Path(".")).resolve().name
        if url is None or path
        else url.split("://")[-1].split("/")[0].replace(":", "-")
    )
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
    return Path("evals") / f"{name}-{stamp}"


class _Progress:
    """Progress over episodes on stderr: a rich bar on a terminal, one line per episode
    otherwise (logs and CI)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> _Progress:
        if _output.is_tty():
            self.bar = Progress(
                TextColumn("episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=_output.err,
                transient=True,
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def note(self, message: str) -> None:
        _output.err.print(f"note: {_output.esc(message)}")

    def episode(self, rec: EpisodeRecord, finished: int, total: int) -> None:
        status = (
            f"lost: {rec.error}"
            if rec.lost
            else "success"
            if rec.success
            else ("error: " + rec.error if rec.error else "truncated" if rec.truncated else "")
        )
        if rec.retries and not rec.lost:
            lost = f"{rec.retries} lost session{'s' if rec.retries > 1 else ''}"
            status = f"{status}  (replayed after {lost})".lstrip()
        if self.bar is not None and self.task is not None:
            self.bar.update(
                self.task, completed=finished, description=f"last return {rec.return_:.3f}"
            )
            return
        _output.err.print(
            f"episode {finished}/{total}  seed {rec.seed}  return {rec.return_:.3f}  "
            f"steps {rec.steps_taken}  {_output.esc(status)}".rstrip()
        )


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f} ms"


def _render(result: EvalResult, output: _output.Output, resume_cmd: str) -> None:
    """The histogram and notes on stderr, then the summary: JSON with ``--format json``, else
    text lines on stdout (with ``resume_cmd`` when episodes were lost)."""
    from envkit.evaluation import flat_groups_warning, histogram

    s = result.summary
    _render_histogram(
        histogram([e.return_ for e in result.episodes], bins=10), len(result.episodes)
    )
    for note in result.notes:
        _output.err.print(f"note: {_output.esc(note)}")
    flat = flat_groups_warning(s)
    if flat is not None:
        _output.warn(*flat)
    if output.is_json:
        payload = dict(s)
        payload["files"] = {k: str(v) for k, v in result.files.items()}
        output.data(payload)
        return
    o = _output.out
    env = s["environment"]
    who = s["policy"] + (f" · model {s['model']}" if s.get("model") else "")
    o.print(
        f"envkit eval: {_output.esc(env['name'] or env['url'])} · {_output.esc(who)}", markup=False
    )
    for line in _summary_lines(s):
        o.print(line, markup=False)
    if result.out_dir is not None:
        names = ", ".join(p.name for p in result.files.values())
        o.print(f"wrote         {names} in {result.out_dir}", markup=False)
    if s.get("aborted"):
        o.print(f"aborted       {s['aborted']}", markup=False)
    if s.get("lost_episodes") and not result.interrupted:
        o.print(f"resume        {resume_cmd}   (plays the lost episodes again)", markup=False)


def _summary_lines(s: dict[str, Any]) -> list[str]:
    """The text report's statistics lines, from ``summary.json``'s content ``s``."""
    settings, r, sr = s["settings"], s["return"], s["step_reward"]
    succ, lat = s["success_rate"], s["latency_s"]
    lines = [
        (
            f"episodes      {s['episodes']} of {settings['episodes_planned']} "
            f"({settings['groups_planned']} seeds × {settings['group_size']}), "
            f"mean steps {_fmt(s['mean_steps'], '.2f')}, concurrency {settings['concurrency']}"
        ),
        (
            f"return        mean {_fmt(r['mean'])}  std {_fmt(r['std'])}  min {_fmt(r['min'])}"
            f"  max {_fmt(r['max'])}   (per episode: sum of step rewards)"
        ),
        (
            f"step reward   mean {_fmt(sr['mean'])}  std {_fmt(sr['std'])}  "
            f"min {_fmt(sr['min'])}  max {_fmt(sr['max'])}   ({s['steps']} steps)"
        ),
        (
            f"success       {_fmt(None if succ is None else succ * 100, '.1f')}%   "
            f"(a step reached the max reward {s['environment']['reward_range'][1]:g})"
        ),
    ]
    pk = s["pass_at_k"]
    if pk["mean"] and any(v is not None for v in pk["mean"].values()):
        parts = "  ".join(f"pass@{k} {_fmt(v)}" for k, v in pk["mean"].items())
        lines.append(f"pass@k        {parts}   (over {s['complete_groups']} complete groups)")
    flat = s.get("flat_groups") or {}
    if flat.get("groups"):
        lines.append(
            f"flat groups   GRPO gets no gradient from {flat['flat']} of {flat['groups']} groups "
            "(every rollout of the seed got the same return)"
        )
    lines += [
        (
            f"latency       env step p50 {_ms(lat['env_step']['p50'])} p95 "
            f"{_ms(lat['env_step']['p95'])}; policy p50 {_ms(lat['policy']['p50'])} p95 "
            f"{_ms(lat['policy']['p95'])}"
        ),
        (
            f"problems      parse failures {s['parse_failures']}, invalid actions "
            f"{s['invalid_actions']}, null rewards {s['null_rewards']}, episode errors "
            f"{s['episode_errors']}, truncated {s['truncated_episodes']}"
        ),
    ]
    if s.get("lost_episodes"):
        lines.append(
            f"lost          {s['lost_episodes']} episode(s): their session was lost "
            f"(--session-retries {settings.get('session_retries', 0)}); no result, not in "
            "return, success or pass@k"
        )
    if s.get("replayed_episodes"):
        lines.append(
            f"replayed      {s['replayed_episodes']} episode(s) played again from reset after a "
            'lost session; the last play counts ("retries" in trajectories.jsonl)'
        )
    if s.get("usage"):
        u = s["usage"]
        lines.append(
            f"tokens        prompt {u['prompt_tokens']}, completion "
            f"{u['completion_tokens']}, total {u['total_tokens']}"
        )
    lines.append(f"time          {s['timings']['wall_s']:.1f} s")
    return lines


def _render_histogram(bins: list[tuple[float, float, int]], n: int) -> None:
    err = _output.err
    if not bins:
        err.print("No finished episodes.")
        return
    err.print(f"Episode returns ({n} episode{'s' if n != 1 else ''}):")
    peak = max(c for _, _, c in bins) or 1
    for left, right, count in bins:
        bar = _BAR * max(1 if count else 0, round(30 * count / peak))
        err.print(f"  {left:8.3f} – {right:<8.3f} │{bar} {count}", markup=False)


def replay_cmd(
    run_dir: Annotated[
        Path,
        typer.Argument(help="An `envkit eval` run directory (its --out).", show_default=False),
    ],
    path: Annotated[
        Path | None,
        typer.Argument(
            help="The environment version to check; its server is started on a free "
            "127.0.0.1 port and stopped afterwards \\[default: . unless --url].",
            show_default=False,
        ),
    ] = None,
    url: UrlOpt = None,
    format_: FormatOpt = Format.TEXT,
    python: PythonOpt = None,
    startup_timeout: StartupTimeoutOpt = None,
    reply_timeout: ReplyTimeoutOpt = None,
) -> None:
    """Replay a run's saved episodes against another version of the environment; name the
    episodes whose rewards changed.

    Each saved episode is reset with its seed and sent the actions it sent, in order; the
    rewards (and done) of every step are compared with the saved ones. Each episode is
    replayed twice first: when the two replays differ, the environment is not deterministic
    for that episode and it is reported as such, not as changed. Exit 1 when an episode
    changed, 0 when none did: a regression check before a push.

    Examples:
      envkit eval replay evals/my-env-20260101-120000 .
      envkit eval replay evals/run1 --url http://127.0.0.1:8000 --format json
    """
    from envkit.evaluation.replay import replay

    output = _output.Output(format_)
    progress = _ReplayProgress()
    report = replay(
        run_dir,
        path,
        url=url,
        python=python,
        startup_timeout_s=startup_timeout,
        reply_timeout_s=reply_timeout,
        on_episode=progress.episode,
    )
    _render_replay(report, output)
    raise typer.Exit(int(report.exit_code))


class _ReplayProgress:
    """One line per replayed episode on stderr."""

    def episode(self, result: EpisodeReplay, done: int, total: int) -> None:
        _output.err.print(
            f"replayed {done}/{total}  episode {result.episode}  seed {result.seed}  "
            f"{result.status}",
            markup=False,
        )


def _render_replay(report: ReplayReport, output: _output.Output) -> None:
    """The replay report: JSON with ``--format json``, else one line per episode that
    changed or is not deterministic, then the counts."""
    from envkit.evaluation.replay import (
        CHANGED,
        MAX_CHANGES_SHOWN,
        NONDETERMINISTIC,
        SAME,
        SKIPPED,
    )

    if output.is_json:
        output.data(report.to_json())
        return
    o = _output.out
    o.print(
        f"envkit eval replay: {len(report.episodes)} episodes of {report.run_dir} against "
        f"{report.target}",
        markup=False,
    )
    for e in report.episodes:
        if e.status not in (CHANGED, NONDETERMINISTIC):
            continue
        o.print(
            f"{e.status:<18} episode {e.episode} (seed {e.seed}): return "
            f"{e.saved_return:.4g} -> {_fmt(e.new_return, '.4g')}",
            markup=False,
        )
        first, second = ("saved", "new") if e.status == CHANGED else ("replay 1", "replay 2")
        for c in e.changes[:MAX_CHANGES_SHOWN]:
            o.print(
                f"    step {c['step']}: {first} {_entry(c['saved'])}, {second} {_entry(c['new'])}",
                markup=False,
            )
        if len(e.changes) > MAX_CHANGES_SHOWN:
            o.print(f"    ... {len(e.changes) - MAX_CHANGES_SHOWN} more step(s)", markup=False)
    counts = {s: len(report.with_status(s)) for s in (SAME, CHANGED, NONDETERMINISTIC, SKIPPED)}
    o.print(
        f"changed {counts[CHANGED]}, not deterministic {counts[NONDETERMINISTIC]}, "
        f"unchanged {counts[SAME]}, skipped {counts[SKIPPED]}",
        markup=False,
    )


def _entry(entry: dict[str, Any] | None) -> str:
    """One trace entry as text: ``reward 0.5`` (``, done``), ``error CODE`` or ``(none)``."""
    if entry is None:
        return "(no step)"
    if "error" in entry:
        return f"error {entry['error']}"
    reward = entry.get("reward")
    text = f"reward {reward:.6g}" if isinstance(reward, (int, float)) else f"reward {reward}"
    return text + (", done" if entry.get("done") else "")


class _EvalCommand(TyperCommand):
    """``envkit eval``: a command (so ``envkit eval PATH`` and ``envkit eval --help`` stay as
    they were) whose first argument ``replay`` hands the rest to ``envkit eval replay``. A
    group would take PATH for a subcommand name; to evaluate a directory named ``replay``,
    write ``./replay``."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: typer.Context | None = None,
        **extra: object,
    ) -> typer.Context:
        if args and args[0] == "replay":
            command = _replay_command()
            if parent is not None:
                value_names(command, parent)
            return command.make_context(
                f"{info_name or 'eval'} replay", args[1:], parent=parent, **extra
            )
        return super().make_context(info_name, args, parent=parent, **extra)


_HANDLED: list[Callable] = []  # the CLI's error handler, kept by register()


def _replay_command() -> TyperCommand:
    """``replay_cmd`` as a click command, wrapped in the CLI's error handler."""
    sub = typer.Typer(rich_markup_mode="rich")
    wrap = _HANDLED[0] if _HANDLED else (lambda f: f)
    sub.command("replay", context_settings={"help_option_names": ["-h", "--help"]})(
        wrap(replay_cmd)
    )
    return typer.main.get_command(sub)


def register(app: typer.Typer, handled: Callable) -> None:
    _HANDLED[:] = [handled]
    app.command("eval", cls=_EvalCommand)(handled(eval_cmd))
