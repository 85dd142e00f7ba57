"""``envkit label``: label pairs of rollouts in a browser, then export, inspect and upload the
preference data."""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from envkit.cli import _output
from envkit.cli._options import FormatOpt, TokenOpt
from envkit.cli.push import quiet_hub_client
from envkit.label import LabelStore, export, label_stats, load_eval, push_dataset
from envkit.label.pairs import select_pairs
from envkit.label.store import check_labeler
from envkit.label.web import serve

if TYPE_CHECKING:
    import click

SUBCOMMANDS = ("serve", "export", "stats", "push")


class _ServeByDefault(TyperGroup):
    """``envkit label [EVAL_DIR] [OPTIONS]`` runs ``serve``; ``export``/``stats``/``push``
    are subcommands. (A group whose callback took EVAL_DIR would swallow the subcommand name.)"""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


label_app = typer.Typer(
    name="label",
    cls=_ServeByDefault,
    help="Human preference data from rollouts: compare two rollouts of the same seed in a "
    "local web page (left better / right better / tie / can't tell), then export the labels "
    "in TRL's preference format (prompt/chosen/rejected) for reward models and DPO.\n\n"
    "`envkit label [EVAL_DIR]` serves the page (same as `envkit label serve`). EVAL_DIR is "
    "an `envkit eval` output folder with groups (`envkit eval -g 2` or more); labels are kept "
    "in EVAL_DIR/labels.sqlite.\n\n"
    "Examples:\n\n"
    "  envkit eval -m Qwen/Qwen3-4B-Instruct-2507 -n 20 -g 4 -o evals/run1\n\n"
    "  envkit label evals/run1 --labeler alice --pairs disagree --open\n\n"
    "  envkit label stats evals/run1\n\n"
    "  envkit label export evals/run1 -o prefs.parquet --min-agreement 0.66\n\n"
    "  envkit label push evals/run1 --repo-id alice/echo-preferences",
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

EvalDirArg = Annotated[
    Path | None,
    typer.Argument(
        help="`envkit eval` output folder (trajectories.jsonl + summary.json) \\[default: ., else "
        "the newest evals/*].",
        show_default=False,
    ),
]


def _load(eval_dir: Path | None, *, require_pairs: bool = True):  # noqa: ANN202

    folder = load_eval(eval_dir, require_pairs=require_pairs)
    return folder, LabelStore(folder.db_path)


def serve_cmd(
    eval_dir: EvalDirArg = None,
    port: Annotated[
        int, typer.Option("--port", "-p", min=1, max=65535, help="TCP port of the page.")
    ] = 8765,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Bind address. The page has no login: keep 127.0.0.1 unless you trust "
            "the network.",
        ),
    ] = "127.0.0.1",
    labeler: Annotated[
        str,
        typer.Option(
            "--labeler",
            "-l",
            help="Your name, stored with each label (others can use "
            "/?labeler=NAME on the same server).",
        ),
    ] = "anonymous",
    pairs: Annotated[
        str,
        typer.Option(
            "--pairs",
            help="all (every pair within a seed), adjacent (neighbouring rollouts), "
            "disagree (equal returns first: where the reward cannot tell them apart).",
        ),
    ] = "all",
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in your web browser.")
    ] = False,
) -> None:
    """Serve the labeling page for EVAL_DIR until Ctrl-C.

    Keys: 1 left better, 2 right better, 3 tie, 0 can't tell, s skip, u undo. Restarting
    resumes where you stopped; several labelers can label the same folder at once.

    Examples:
      envkit label evals/run1
      envkit label evals/run1 --labeler bob --port 8766 --pairs disagree
      envkit label --open    # the newest folder under ./evals
    """
    labeler = check_labeler(labeler)
    folder, store = _load(eval_dir)
    n = len(select_pairs(folder, pairs))

    def ready(url: str) -> None:
        _output.success(
            f"Labeling {n} pair(s) of {_output.esc(folder.path)} as {_output.esc(labeler)}: {url}"
        )
        _output.info(
            f"Ctrl-C stops the server; labels are saved as you go ({_output.esc(folder.db_path)})."
        )
        if open_browser:
            webbrowser.open(url)

    serve(folder, store, host=host, port=port, labeler=labeler, pairs=pairs, on_ready=ready)


def export_cmd(
    eval_dir: EvalDirArg = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output file \\[default: EVAL_DIR/preferences.jsonl or .parquet].",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="jsonl (always) or parquet (needs the `label` extra) "
            "\\[default: from -o's suffix, else jsonl].",
            show_default=False,
        ),
    ] = None,
    min_agreement: Annotated[
        float,
        typer.Option(
            "--min-agreement",
            min=0.0,
            max=1.0,
            help="Drop pairs whose majority label has less "
            "than this share of the votes (0.66: 2 of 3 labelers agree).",
        ),
    ] = 0.0,
) -> None:
    """Write the labels as a preference dataset in TRL's conversational format.

    Columns: prompt, chosen, rejected (lists of chat messages), seed, chosen_return,
    rejected_return, labeler, agreement, n_labels, chosen_id, rejected_id. Ties and
    can't-tell are counted, not exported; with several labelers a pair's label is the
    majority.

    Examples:
      envkit label export evals/run1
      envkit label export evals/run1 -o prefs.parquet --min-agreement 0.66
      python -c "from datasets import load_dataset; print(load_dataset('json', data_files='evals/run1/preferences.jsonl'))"
    """
    folder, store = _load(eval_dir)
    r = export(folder, store, out, format=fmt, min_agreement=min_agreement)
    _output.out.print(
        f"wrote {r.rows} preference pair(s) to {r.path} ({r.format}); excluded: {r.ties} "
        f"tie, {r.cant_tell} can't tell, {r.contested} contested, {r.below_agreement} below "
        f"--min-agreement; {r.unlabeled} pair(s) unlabeled",
        markup=False,
    )
    if r.stale:
        _output.warn(
            f"{r.stale} label(s) ignored: their trajectories changed since they were "
            "labeled (a new eval in the same folder?)."
        )


def stats_cmd(
    eval_dir: EvalDirArg = None,
    fmt: FormatOpt = "text",
) -> None:
    """Progress and agreement: per labeler, Cohen's/Fleiss' kappa, and with the reward.

    Prints labels per labeler, inter-labeler agreement (Cohen's kappa per pair of labelers,
    Fleiss' kappa over pairs every labeler labeled) and how often the majority prefers the
    rollout with the higher environment return (a quick reward sanity check).

    Examples:
      envkit label stats evals/run1
      envkit label stats evals/run1 --format json | jq .reward_agreement
    """
    if fmt not in ("text", "json"):
        raise typer.BadParameter("expected text or json", param_hint="--format")

    folder, store = _load(eval_dir)
    s = label_stats(folder, store)
    if fmt == "json":
        _output.Output(_output.Format.JSON).data(s.to_dict())
        return
    o = _output.out

    def k(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    o.print(f"{folder.path}", markup=False)
    o.print(
        f"pairs        {s.pairs_labeled} of {s.pairs_total} labeled (at least once)", markup=False
    )
    if not s.per_labeler:
        o.print("labelers     none yet: run `envkit label` to start", markup=False)
    for name, c in sorted(s.per_labeler.items()):
        o.print(
            f"labeler      {name}: {c['total']} ({c['left'] + c['right']} preference, "
            f"{c['tie']} tie, {c['cant_tell']} can't tell, {c['skip']} skipped)",
            markup=False,
        )
    m = s.majority
    o.print(
        f"majority     {m['preference']} preference, {m['tie']} tie, {m['cant_tell']} can't "
        f"tell, {m['contested']} contested",
        markup=False,
    )
    for c in s.cohen:
        o.print(
            f"cohen kappa  {c['labelers'][0]} vs {c['labelers'][1]}: {k(c['kappa'])} over "
            f"{c['overlap']} shared pair(s)",
            markup=False,
        )
    if s.fleiss:
        o.print(
            f"fleiss kappa {k(s.fleiss['kappa'])} ({s.fleiss['labelers']} labelers, "
            f"{s.fleiss['items']} pair(s) labeled by all)",
            markup=False,
        )
    if s.reward_agreement is None:
        o.print("reward       no preferred pair with different returns yet", markup=False)
    else:
        o.print(
            f"reward       people prefer the higher-return rollout in "
            f"{s.reward_agreement * 100:.1f}% of {s.reward_comparable} pair(s); "
            f"{s.reward_ties_broken} equal-return pair(s) got a preference",
            markup=False,
        )
    if s.stale:
        _output.warn(f"{s.stale} stale label(s) ignored (their trajectories changed).")


def push_cmd(
    eval_dir: Annotated[Path, typer.Argument(help="`envkit eval` output folder with labels.")],
    repo_id: Annotated[
        str, typer.Option("--repo-id", help="Dataset NS/NAME (created when missing).")
    ],
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public",
            help="Visibility of a new dataset \\[default: the Hub's].",
            show_default=False,
        ),
    ] = None,
    min_agreement: Annotated[
        float, typer.Option("--min-agreement", min=0.0, max=1.0, help="As for `export`.")
    ] = 0.0,
    message: Annotated[
        str | None,
        typer.Option(
            "--message",
            "-m",
            help="Commit message \\[default: envkit label push <version>].",
            show_default=False,
        ),
    ] = None,
    token: TokenOpt = None,
    fmt: FormatOpt = "text",
) -> None:
    """Upload the preference data as a Hugging Face Hub dataset.

    One commit: data/train.parquet (data/train.jsonl without pyarrow) and a README dataset
    card. Same token rules as `envkit push`: --token, else HF_TOKEN, else `hf auth login`.

    Examples:
      envkit label push evals/run1 --repo-id alice/echo-preferences
      envkit label push evals/run1 --repo-id my-org/prefs --private --min-agreement 0.66
    """
    if fmt not in ("text", "json"):
        raise typer.BadParameter("expected text or json", param_hint="--format")

    folder, store = _load(eval_dir)
    quiet_hub_client()
    with _output.status("Uploading…"):
        r = push_dataset(
            folder,
            store,
            repo_id,
            private=private,
            token=token,
            min_agreement=min_agreement,
            message=message,
        )
    if fmt == "json":
        _output.Output(_output.Format.JSON).data(r.to_dict())
        return
    _output.success(
        f"Pushed {r.export.rows} preference pair(s) to {_output.esc(r.repo_id)} "
        f"(commit {(r.commit_oid or '-')[:12]})."
    )
    _output.out.print(f"Dataset: {r.url}", markup=False)


def register(app: typer.Typer, handled: Callable) -> None:
    label_app.command("serve")(handled(serve_cmd))
    label_app.command("export")(handled(export_cmd))
    label_app.command("stats")(handled(stats_cmd))
    label_app.command("push")(handled(push_cmd))
    app.add_typer(label_app, name="label")
