"""The source and ``--url`` lanes of ``envkit validate``: the static stage on the
environment directory, then the runtime stage against the server envkit starts from it (or the
``--url`` server), the training lane beside it, and one report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.digest import digests_of
from envkit.findings import Stage, codes_of
from envkit.validation import report as R
from envkit.validation.config import build_selection
from envkit.validation.lanes.stages import (
    checked_root,
    lane_name,
    read_schemas,
    read_schemas_while_up,
    report_label,
    runtime_plan,
    runtime_stage,
    runtime_target,
    static_stage,
    train_path_skip,
    wants_runtime,
)
from envkit.validation.lanes.training import LanePlan, play_lane, start_lane
from envkit.validation.options import Budget, RunOptions
from envkit.validation.report import Evaluated, RuntimeNote, ValidationReport


def validate(
    path: str | Path | None = ".",
    *,
    url: str | None = None,
    python: str | None = None,
    static: bool = False,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    episodes: int = 5,
    seed: int = 0,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    oracle_with_url: bool = False,
    train_path: bool = True,
) -> ValidationReport:
    """Validate an environment directory, a running server, or both.

    Args:
        path: environment directory (holds ``openenv.yaml``): static checks run on it, and
            the runtime checks start its server unless ``url`` is given. ``None`` with
            ``url``: runtime checks only.
        url: a running server (``http://127.0.0.1:8000`` or a Space URL): the runtime checks
            run against it instead of a server envkit starts. With ``path`` too, the runtime
            stage uses ``path``'s manifest (reward range, max_steps, oracle).
        python: interpreter that serves the environment (default ``PATH/.venv/bin/python``,
            else the current one).
        static: skip the runtime stage.
        select: rule codes or prefixes to run (``EK5``, ``EK503``, ``ALL``); replaces the
            ``select`` of ``[tool.envkit.validate]``.
        ignore: codes or prefixes to drop; added to the config's ``ignore``.
        episodes: fuzzed episodes in the runtime stage (>= 1).
        seed: seed of the action generator (runs are reproducible).
        timeout_s: the whole run's budget in seconds (``--timeout``; ``None``: 600 s, the
            engine's default), static stage included. See :class:`envkit.envdir.project.Timeouts`.
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``).
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        progress: called with short progress lines (the CLI prints them on stderr).
        oracle_with_url: with ``url`` and ``path``, also play ``path``'s oracle (in
            ``python``) against the URL.
        train_path: play the training-path lane (EK7xx, :mod:`envkit.validation.train_path`)
            when the environment has a TRL adapter; ``False`` skips it (``--no-train-path``).

    Returns:
        The :class:`ValidationReport`; ``report.passed`` is False when an error finding
        remains after selection and severity overrides.

    Raises:
        UsageError: neither ``path`` nor ``url``, ``path`` not a directory or not an
            environment (no ``openenv.yaml``; refused before any scan), bad select/ignore
            codes, ``episodes`` < 1 (exit 2).
        SpecError: invalid ``[tool.envkit.validate]`` (unknown key, code or severity).
    """
    opts = RunOptions(
        python=python,
        select=select,
        ignore=ignore,
        episodes=episodes,
        seed=seed,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        reply_timeout_s=reply_timeout_s,
        progress=progress,
        train_path=train_path,
    )
    return run_source(path, opts, url=url, static=static, oracle_with_url=oracle_with_url)


def run_source(
    path: str | Path | None,
    opts: RunOptions,
    *,
    url: str | None = None,
    static: bool = False,
    oracle_with_url: bool = False,
) -> ValidationReport:
    """The source and ``--url`` lanes with the run's options already made (the CLI's entry):
    arguments, return value and errors as :func:`validate`."""
    t0 = time.perf_counter()
    budget = Budget.start(opts.timeout_s)
    root = checked_root(path, url, opts.episodes)
    label = report_label(root, url)
    envdir = EnvDir(root) if root is not None else None  # the run's one reader of the files
    selection = build_selection(envdir, select=opts.select, ignore=opts.ignore)
    ev = Evaluated()
    static_stage(envdir, opts.progress, ev)
    plan = runtime_plan(envdir, url, static=static, wanted=wants_runtime(selection))
    note = RuntimeNote(ran=not plan.not_run, reason=plan.not_run or None)
    note.assumptions = plan.assumptions
    skip = train_path_skip(opts, selection, plan, static=static)
    lane_notes: list[str] | None = None  # None: the lane has not played yet
    seen: dict[str, Any] = {}  # the /schema body, for the report's schema digest
    if plan.not_run:
        ev.skipped.update(dict.fromkeys(codes_of(Stage.RUNTIME), plan.not_run))
    else:
        target = runtime_target(envdir, url, plan, opts, oracle_with_url)
        target.wanted = selection.enabled
        lane = None
        if url is None and not skip:  # it runs: while the server is up, or not at all
            # started now, its imports overlap the runtime stage; it plays the server that
            # stage started, instead of starting another
            lane = start_lane(LanePlan(envdir, None, plan.app), opts, budget, ev)
            if isinstance(lane, list):
                lane_notes, lane = lane, None
            else:
                started = lane

                def while_up(live_url: str) -> None:
                    nonlocal lane_notes
                    lane_notes = started.play(live_url)

                target.while_up = while_up
                skip = R.TRAIN_PATH_NO_SERVER  # unless while_up runs
        read_schemas_while_up(target, seen)
        try:
            note.launch, note.notes = runtime_stage(target, opts, budget, ev, lane=lane_name(url))
        finally:
            if lane is not None:
                lane.stop()
        if envdir is None:
            plan.assumptions[-1] = "no oracle (no manifest): EK507 reports it, EK506 not played"
    if lane_notes is None:
        lane_notes = play_lane(LanePlan(envdir, url, plan.app, skip), opts, budget, ev)
    note.notes += lane_notes
    ev.timings["total"] = time.perf_counter() - t0
    report = R.assemble_report(label, lane_name(url), root, ev, selection, note)
    if url is not None and not plan.not_run:
        seen["schemas"] = read_schemas(url)  # the server is the user's: still up
    why = R.NO_RUNTIME_STAGE.format(why=plan.not_run) if plan.not_run else None
    report.digests = digests_of(envdir, seen.get("schemas"), why)
    return report


def run_static_only(
    path: str | Path = ".",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> ValidationReport:
    """The static stage only (what ``envkit build`` and ``envkit push`` run as a preflight).
    Same as ``validate(path, static=True, ...)``."""
    return validate(path, static=True, select=select, ignore=ignore)
