"""The stages every lane of a validate run shares: the checked environment directory, the
static stage, the runtime plan and target, the runtime stage and the report's digests (the
training lane is :mod:`envkit.validation.lanes.training`'s).

A lane (:mod:`envkit.validation.lanes.source`, :mod:`envkit.container.lane`) strings these
together with one :class:`RunOptions` and one :class:`~envkit.validation.options.Budget`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.constants import DEFAULT_APP, MANIFEST_NAME
from envkit.envdir.digest import Digests, digests_of
from envkit.envdir.manifest import EnvSpec, Manifest
from envkit.errors import UsageError
from envkit.findings import Stage, codes_of, family_digits
from envkit.schemas import schemas_from_url
from envkit.validation import report as R
from envkit.validation.config import RuleSelection
from envkit.validation.engine import DEFAULT_MAX_STEPS, OutOfTime
from envkit.validation.options import Budget, RunOptions
from envkit.validation.report import Evaluated
from envkit.validation.rules import lane_only_codes
from envkit.validation.rules.liveness import STOP_CODES
from envkit.validation.runtime import RuntimeOutcome, RuntimeTarget, run_runtime
from envkit.validation.static import run_static


def raw_app(root: Path) -> tuple[str | None, str]:
    """:func:`app_to_start` of the directory ``root``."""
    return app_to_start(EnvDir(root))


def app_to_start(envdir: EnvDir) -> tuple[str | None, str]:
    """The app to start when ``openenv.yaml`` cannot be read as a manifest:
    its raw ``app`` key when the file is YAML with a ``module:attr`` string there, else
    ``server.app:app`` when ``server/app.py`` exists.

    Returns:
        ``(app, where it came from)``; ``(None, why not)`` when there is nothing to start.
    """
    app = envdir.raw_app
    if app is not None:
        return app, f"`{app}` from openenv.yaml's `app` key"
    if (envdir.root / "server" / "app.py").is_file():
        return DEFAULT_APP, f"`{DEFAULT_APP}` (the default: openenv.yaml names no usable app)"
    return None, (
        "openenv.yaml is missing or invalid (see EK1xx) and there is no server/app.py to start"
    )


def assumed_defaults(why: str) -> list[str]:
    """What the runtime stage assumes without a readable manifest (the defaults of
    :class:`envkit.envdir.manifest.EnvSpec`)."""

    spec = EnvSpec()
    lo, hi = spec.reward_range
    return [
        f"reward range [{lo:g}, {hi:g}] (the default: {why})",
        f"max_steps {spec.max_steps or DEFAULT_MAX_STEPS} (the default)",
        f"seeds {list(spec.seeds)[:3]}, floor margin {spec.floor_margin:g} (the defaults)",
        "no oracle: the oracle checks (EK506, EK507) were not played",
    ]


@dataclass
class RuntimePlan:
    """Whether and how the runtime stage plays: ``not_run`` is the skip reason when it does
    not; ``app`` the app to start without a readable manifest; ``assumptions`` what it assumes
    then."""

    not_run: str = ""
    app: str | None = None
    assumptions: list[str] = field(default_factory=list)


def checked_root(path: str | Path | None, url: str | None, episodes: int) -> Path | None:
    """The resolved environment directory (``None``: ``--url`` only).

    Raises:
        UsageError: neither ``path`` nor ``url``, ``episodes`` < 1, ``path`` missing,
            not a directory, or not an environment (see :func:`_refuse_outside_environment`).
    """

    if path is None and not url:
        raise UsageError(
            "Nothing to validate: give an environment directory or --url.",
            hint="Run `envkit validate PATH` or `envkit validate --url URL`.",
        )
    if episodes < 1:
        raise UsageError(f"--episodes must be >= 1; got {episodes}.", hint="Pass --episodes 5.")
    if path is None:
        return None
    root = Path(path).expanduser()
    if not root.exists():
        raise UsageError(
            f"{root} does not exist.",
            hint="Pass the environment's directory (it holds openenv.yaml).",
        )
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a directory.", hint="Pass the directory that holds openenv.yaml."
        )
    # Before anything is scanned: a refusal must come at once.
    _refuse_outside_environment(root)
    return root.resolve()


def _refuse_outside_environment(root: Path) -> None:
    """Refuse a directory that is not an environment before anything is scanned.

    A directory without ``openenv.yaml`` and without ``server/app.py`` is not an environment
    (one that lost only its manifest still gets EK101 and a runtime stage). Scanning it would
    walk whatever it holds (every ``site-packages`` under ``/tmp`` or a home directory, for
    the secret rules) for minutes. Costs a few ``stat`` calls: the directory's children, one
    level down, and its ancestors.

    Raises:
        UsageError: ``root`` is not an environment; the hint names an environment one level
            down or above (``envkit validate wordle``, ``envkit validate ..``) when there is
            one.
    """
    if (root / MANIFEST_NAME).is_file() or (root / "server" / "app.py").is_file():
        return
    found = [shlex.quote(_typed(p)) for p in _nearby_environments(root.resolve())]
    if found:
        others = "".join(f" or `envkit validate {p}`" for p in found[1:3])
        hint = f"Did you mean `envkit validate {found[0]}`{others}?"
    else:
        hint = "Pass the environment's directory (it holds openenv.yaml), or --url URL."
    raise UsageError(
        f"{root.resolve()} is not an OpenEnv environment: it has no {MANIFEST_NAME}; "
        "nothing was checked.",
        hint=hint,
    )


def _nearby_environments(root: Path) -> list[Path]:
    """Directories holding ``openenv.yaml``: ``root``'s children (sorted, hidden ones left
    out), then its nearest ancestor that holds one. Unreadable directories are skipped."""

    found: list[Path] = []
    try:
        children = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    except OSError:
        children = []
    for child in children:
        try:
            if (child / MANIFEST_NAME).is_file():
                found.append(child)
        except OSError:
            continue
    parent = next((p for p in root.parents if (p / MANIFEST_NAME).is_file()), None)
    return found + ([parent] if parent is not None else [])


def _typed(target: Path) -> str:
    """``target`` as the user would type it from the current directory: relative when it is
    inside the current directory or one of its ancestors (``wordle``, ``..``), else absolute."""
    cwd = Path.cwd().resolve()
    if target.is_relative_to(cwd) or cwd.is_relative_to(target):
        return os.path.relpath(target, cwd)
    return str(target)


def read_schemas(url: str) -> dict[str, Any] | None:
    """``GET URL/schema`` for the report's schema digest (``None``: no usable answer)."""

    return schemas_from_url(url, timeout_s=5.0)


def read_schemas_while_up(target: RuntimeTarget, seen: dict[str, Any]) -> None:
    """Make ``target.while_up`` read ``GET /schema`` into ``seen["schemas"]`` first (the
    server envkit started is stopped when the runtime stage returns), then do what it did."""
    inner = target.while_up

    def while_up(live_url: str) -> None:
        seen["schemas"] = read_schemas(live_url)
        if inner is not None:
            inner(live_url)

    target.while_up = while_up


def report_digests(envdir: EnvDir | None, schemas: dict[str, Any] | None, not_run: str) -> Digests:
    """The report's :class:`envkit.envdir.digest.Digests`; ``not_run``: why the runtime
    stage did not play (``""``: it did)."""
    return digests_of(envdir, schemas, R.NO_RUNTIME_STAGE.format(why=not_run) if not_run else None)


def train_path_skip(
    opts: RunOptions, selection: RuleSelection, plan: RuntimePlan, *, static: bool
) -> str:
    """Why the training-path lane does not run (``""``: it runs)."""
    if not opts.train_path:
        return R.NO_TRAIN_PATH
    if static:
        return R.STATIC_GIVEN
    if not selection.wants_stage(family_digits(Stage.TRAINING)):
        return R.DESELECTED
    # a runtime stage left out by --select EK7 still leaves this lane to play
    return "" if plan.not_run == R.NO_RUNTIME_SELECTED else plan.not_run


def lane_name(url: str | None) -> str:
    return "url" if url else "source"


def report_label(root: Path | None, url: str | None) -> str:
    """The report's target: ``PATH``, ``URL`` or ``PATH @ URL``."""
    if root is not None and url:
        return f"{root} @ {url}"
    return str(root) if root is not None else str(url)


def wants_runtime(selection: RuleSelection) -> bool:
    return selection.wants_stage(family_digits(Stage.RUNTIME))


def static_stage(
    envdir: EnvDir | None, progress: Callable[[str], None] | None, ev: Evaluated
) -> Manifest | None:
    """Run the static stage on ``envdir`` into ``ev``; the manifest, or ``None`` when there
    is no directory or its ``openenv.yaml`` cannot be read."""
    if envdir is None:
        return None
    static_findings, static_ran, static_skipped, secs = run_static(envdir, progress)
    ev.findings += static_findings
    ev.ran.update(static_ran)
    ev.skipped.update(static_skipped)
    ev.timings["static"] = secs
    return envdir.manifest


def runtime_plan(
    envdir: EnvDir | None, url: str | None, *, static: bool, wanted: bool
) -> RuntimePlan:
    """Whether the runtime stage plays, and what it assumes without a readable manifest (it
    is never skipped silently: play what can be played, say what was assumed)."""
    if static or not wanted:
        return RuntimePlan(R.STATIC_GIVEN if static else R.NO_RUNTIME_SELECTED)
    plan = RuntimePlan()
    if envdir is not None and envdir.manifest is not None:
        return plan
    why = (
        "openenv.yaml is missing or invalid (see EK1xx)"
        if envdir is not None
        else "--url without an environment directory"
    )
    if envdir is not None and not url:
        plan.app, source = app_to_start(envdir)
        if plan.app is None:
            return RuntimePlan(source)
        plan.assumptions.append(f"server started from {source}")
    plan.assumptions += assumed_defaults(why)
    return plan


def runtime_target(
    envdir: EnvDir | None,
    url: str | None,
    plan: RuntimePlan,
    opts: RunOptions,
    oracle_with_url: bool,
) -> RuntimeTarget:
    """What the runtime stage plays: ``url``, or the server envkit starts from ``envdir``;
    with ``url`` the environment's own code (the oracle) runs from ``envdir`` only when
    ``oracle_with_url``."""

    return RuntimeTarget(
        url=url,
        envdir=envdir,
        python=opts.python,
        app=plan.app,
        oracle_with_url=oracle_with_url,
    )


def runtime_stage(
    target: RuntimeTarget, opts: RunOptions, budget: Budget, ev: Evaluated, *, lane: str
) -> tuple[str | None, list[str]]:
    """Play the runtime stage into ``ev``; ``(launch, notes)`` for the report's note.

    Rules of other lanes are skipped with :func:`~envkit.validation.report.only_in_lanes`,
    rules the stage did not reach with :data:`~envkit.validation.report.NOT_EVALUATED_BY_RUNTIME`.
    """

    outcome = run_runtime(target, opts, budget)
    findings = outcome.findings
    if target.spec is None and target.root is not None:
        # the oracle may be declared in the unreadable manifest: "none declared" would
        # be a guess, so the oracle rules are not evaluated
        oracle_codes = {"EK506", "EK507"}
        findings = [f for f in findings if f.code not in oracle_codes]
        ev.ran.update(c for c in outcome.checks_run if c not in oracle_codes)
        ev.skipped.update(dict.fromkeys(oracle_codes, R.ORACLE_UNKNOWN))
    else:
        ev.ran.update(outcome.checks_run)
    ev.findings += findings
    for code, why in outcome.skipped.items():
        if code not in outcome.checks_run:
            ev.skipped.setdefault(code, why)
    elsewhere = lane_only_codes(lane)
    for code in codes_of(Stage.RUNTIME):
        if code in elsewhere:
            ev.skipped.setdefault(code, R.only_in_lanes(elsewhere[code]))
        elif code not in outcome.checks_run:
            ev.skipped.setdefault(code, _unplayed_because(outcome, code))
    ev.timings.update(outcome.timings)
    ev.out_of_time += outcome.out_of_time
    return outcome.launch, list(outcome.notes)


def _unplayed_because(outcome: RuntimeOutcome, code: str) -> str:
    """Why the runtime rule ``code`` was not evaluated: the time ran out (the whole stage's,
    or, for a reward-design rule, the probes' share), the stage stopped on a finding of its
    own (an observation over the size limit, a hang, a crash), else not reached."""
    timed_out = outcome.out_of_time
    if isinstance(outcome.stopped, OutOfTime) or (timed_out and code.startswith("EK5")):
        return R.OUT_OF_TIME
    if outcome.stopped is not None:
        cause = next((f.code for f in outcome.findings if f.code in STOP_CODES), "its findings")
        return R.STAGE_STOPPED.format(code=cause)
    return R.NOT_EVALUATED_BY_RUNTIME
