"""``envkit validate`` as a library: static lint plus live protocol checks.

.. code-block:: python

    from envkit.validation import validate

    report = validate("envs/my-env", static=True)
    if not report.passed:
        for f in report.errors:
            print(f.code, f.location, f.message)

Two stages: *static* (EK1xx manifest, EK2xx project, EK3xx Dockerfile, EK6xx deployment; reads
files only) and *runtime* (EK4xx protocol, EK5xx reward; starts or contacts a server, see
:mod:`envkit.validation.runtime`). ``envkit build`` and ``envkit push`` run the static stage
as a preflight.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.constants import DEFAULT_APP
from envkit.findings import Stage, codes_of, family_digits
from envkit.validation import report as R
from envkit.validation.report import CheckResult, Evaluated, RuntimeNote, ValidationReport

__all__ = [
    "CheckResult",
    "RuntimeNote",
    "ValidationReport",
    "run_static_only",
    "validate",
    "validate_docker",
]


def raw_app(root: Path) -> tuple[str | None, str]:
    """The app to start when ``openenv.yaml`` cannot be read as a manifest:
    its raw ``app`` key when the file is YAML with a ``module:attr`` string there, else
    ``server.app:app`` when ``server/app.py`` exists.

    Returns:
        ``(app, where it came from)``; ``(None, why not)`` when there is nothing to start.
    """
    from envkit.envdir import EnvDir

    app = EnvDir(root).raw_app
    if app is not None:
        return app, f"`{app}` from openenv.yaml's `app` key"
    if (root / "server" / "app.py").is_file():
        return DEFAULT_APP, f"`{DEFAULT_APP}` (the default: openenv.yaml names no usable app)"
    return None, (
        "openenv.yaml is missing or invalid (see EK1xx) and there is no server/app.py to start"
    )


def _assumed_defaults(why: str) -> list[str]:
    """What the runtime stage assumes without a readable manifest (the defaults of
    :class:`envkit.envdir.manifest.EnvSpec`)."""
    from envkit.envdir.manifest import EnvSpec
    from envkit.validation.engine import DEFAULT_MAX_STEPS

    spec = EnvSpec()
    lo, hi = spec.reward_range
    return [
        f"reward range [{lo:g}, {hi:g}] (the default: {why})",
        f"max_steps {spec.max_steps or DEFAULT_MAX_STEPS} (the default)",
        f"seeds {list(spec.seeds)[:3]}, floor margin {spec.floor_margin:g} (the defaults)",
        "no oracle: the oracle checks (EK506, EK507) were not played",
    ]


def _load_rules() -> None:
    import envkit.validation.rules  # noqa: F401 - the one import that registers every rule


@dataclass(frozen=True)
class RunOptions:
    """The options of one ``envkit validate`` run, shared by every lane.

    Attributes:
        python: interpreter for the server (source lane) and the oracle (``--python``).
        select: rule codes or prefixes to run (replaces the config's ``select``).
        ignore: codes or prefixes to drop (added to the config's ``ignore``).
        episodes: fuzzed episodes in the runtime stage (>= 1).
        seed: seed of the action generator.
        timeout_s: the whole run's budget in seconds (``--timeout``; ``None``: 600).
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``).
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        progress: called with short progress lines.
        train_path: play the training-path lane (EK7xx) when the environment has a TRL
            adapter (``--no-train-path``: False).
    """

    python: str | None = None
    select: Sequence[str] | None = None
    ignore: Sequence[str] | None = None
    episodes: int = 5
    seed: int = 0
    timeout_s: float | None = None
    startup_timeout_s: float | None = None
    reply_timeout_s: float | None = None
    progress: Callable[[str], None] | None = None
    train_path: bool = True


@dataclass
class _RuntimePlan:
    """Whether and how the runtime stage plays: ``not_run`` is the skip reason when it does
    not; ``app`` the app to start without a readable manifest; ``assumptions`` what it assumes
    then."""

    not_run: str = ""
    app: str | None = None
    assumptions: list[str] = field(default_factory=list)


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
        train_path: play the training-path lane (EK7xx, :mod:`envkit.validation.lanes.training`)
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
    from envkit.validation.engine import Budget

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
    t0 = time.perf_counter()
    budget = Budget.start(timeout_s)
    root = _checked_root(path, url, episodes)
    return _run(root, url, opts, budget, static=static, oracle_with_url=oracle_with_url, t0=t0)


def _checked_root(path: str | Path | None, url: str | None, episodes: int) -> Path | None:
    """The resolved environment directory (``None``: ``--url`` only).

    Raises:
        UsageError: neither ``path`` nor ``url``, ``episodes`` < 1, ``path`` missing,
            not a directory, or not an environment (see :func:`_refuse_outside_environment`).
    """
    from envkit.errors import UsageError

    if path is None and not url:
        raise UsageError(
            "Nothing to validate: give an environment directory or --url.",
            hint="Run `envkit validate PATH` or `envkit validate --url URL`.",
        )
    if episodes < 1:
        raise UsageError(f"--episodes must be >= 1; got {episodes}.", hint="Pass --episodes 5.")
    if path is None:
        _load_rules()
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
    # Before the rules are imported (about 1 s): a refusal must come at once.
    _refuse_outside_environment(root)
    _load_rules()
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
    import shlex

    from envkit.envdir.constants import MANIFEST_NAME
    from envkit.errors import UsageError

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
    from envkit.envdir.constants import MANIFEST_NAME

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


def _run(
    root: Path | None,
    url: str | None,
    opts: RunOptions,
    budget: Any,
    *,
    static: bool = False,
    oracle_with_url: bool = False,
    t0: float,
) -> ValidationReport:
    """The source and ``--url`` lanes: static stage, runtime plan, runtime stage, report.

    Args:
        root: checked environment directory or ``None``. url: a running server or ``None``.
        opts: the run's options. budget: the run's :class:`~envkit.validation.engine.Budget`.
        static: skip the runtime stage. oracle_with_url: see :func:`validate`.
        t0: ``time.perf_counter()`` at the start of the run (for ``timings["total"]``).
    """
    from envkit.validation.config import build_selection

    selection = build_selection(root, select=opts.select, ignore=opts.ignore)
    ev = Evaluated()
    manifest = _static_stage(root, opts.progress, ev)
    plan = _runtime_plan(root, url, manifest, static=static, wanted=_wants_runtime(selection))
    note = RuntimeNote(ran=not plan.not_run, reason=plan.not_run or None)
    note.assumptions = plan.assumptions
    skip = _train_path_skip(opts, selection, plan, static=static)
    lane_notes: list[str] | None = None  # None: the lane has not played yet
    seen: dict[str, Any] = {}  # the /schema body, for the report's schema digest
    if plan.not_run:
        ev.skipped.update(dict.fromkeys(codes_of(Stage.RUNTIME), plan.not_run))
    else:
        target = _runtime_target(root, url, manifest, plan, opts, oracle_with_url)
        lane = None
        if url is None and not skip:  # it runs: while the server is up, or not at all
            # started now, its imports overlap the runtime stage; it plays the server that
            # stage started, instead of starting another
            lane = _start_train_path(root, manifest, plan, opts, budget, ev)
            if isinstance(lane, list):
                lane_notes, lane = lane, None
            else:
                started = lane

                def while_up(live_url: str) -> None:
                    nonlocal lane_notes
                    lane_notes = started.play(live_url)

                target.while_up = while_up
                skip = R.TRAIN_PATH_NO_SERVER  # unless while_up runs
        _read_schemas_while_up(target, seen)
        try:
            note.launch, note.notes = _runtime_stage(target, opts, budget, ev, lane=_lane(url))
        finally:
            if lane is not None:
                lane.stop()
        if manifest is None and root is None:
            plan.assumptions[-1] = "no oracle (no manifest): EK507 reports it, EK506 not played"
    if lane_notes is None:
        lane_notes = _train_path(root, url, manifest, plan, opts, budget, ev, skip)
    note.notes += lane_notes
    ev.timings["total"] = time.perf_counter() - t0
    report = R.assemble_report(_label(root, url), _lane(url), root, ev, selection, note)
    if url is not None and not plan.not_run:
        seen["schemas"] = _read_schemas(url)  # the server is the user's: still up
    report.digests = _digests(root, seen.get("schemas"), plan.not_run)
    return report


def _read_schemas(url: str) -> dict[str, Any] | None:
    """``GET URL/schema`` for the report's schema digest (``None``: no usable answer)."""
    from envkit.schemas import schemas_from_url

    return schemas_from_url(url, timeout_s=5.0)


def _read_schemas_while_up(target: Any, seen: dict[str, Any]) -> None:
    """Make ``target.while_up`` read ``GET /schema`` into ``seen["schemas"]`` first (the
    server envkit started is stopped when the runtime stage returns), then do what it did."""
    inner = target.while_up

    def while_up(live_url: str) -> None:
        seen["schemas"] = _read_schemas(live_url)
        if inner is not None:
            inner(live_url)

    target.while_up = while_up


def _digests(root: Path | None, schemas: dict[str, Any] | None, not_run: str) -> Any:
    """The report's :class:`envkit.envdir.digest.Digests`; ``not_run``: why the runtime
    stage did not play (``""``: it did)."""
    from envkit.envdir.digest import digests_of

    why = f"the runtime stage did not run: {not_run}" if not_run else None
    return digests_of(root, schemas, why)


def _start_train_path(
    root: Path | None, manifest: Any, plan: _RuntimePlan, opts: RunOptions, budget: Any, ev: Any
) -> Any:
    """The training-path lane, started before its server
    (:func:`envkit.validation.lanes.training.start_lane`): a ``StartedLane``, or the notes for
    the report when it does not run."""
    from envkit.validation.lanes.training import LanePlan, start_lane

    return start_lane(LanePlan(root, None, manifest, plan.app, ""), opts, budget, ev)


def _train_path(
    root: Path | None,
    url: str | None,
    manifest: Any,
    plan: _RuntimePlan,
    opts: RunOptions,
    budget: Any,
    ev: Evaluated,
    skip: str,
) -> list[str]:
    """The training-path lane (:func:`envkit.validation.lanes.training.play_lane`); its notes.
    ``skip``: why it does not run (``""``: it runs)."""
    from envkit.validation.lanes.training import LanePlan, play_lane

    return play_lane(LanePlan(root, url, manifest, plan.app, skip), opts, budget, ev)


def _train_path_skip(opts: RunOptions, selection: Any, plan: _RuntimePlan, *, static: bool) -> str:
    """Why the training-path lane does not run (``""``: it runs)."""
    if not opts.train_path:
        return R.NO_TRAIN_PATH
    if static:
        return R.STATIC_GIVEN
    if not selection.wants_stage(family_digits(Stage.TRAINING)):
        return R.DESELECTED
    # a runtime stage left out by --select EK7 still leaves this lane to play
    return "" if plan.not_run == R.NO_RUNTIME_SELECTED else plan.not_run


def _lane(url: str | None) -> str:
    return "url" if url else "source"


def _label(root: Path | None, url: str | None) -> str:
    """The report's target: ``PATH``, ``URL`` or ``PATH @ URL``."""
    if root is not None and url:
        return f"{root} @ {url}"
    return str(root) if root is not None else str(url)


def _wants_runtime(selection: Any) -> bool:
    return selection.wants_stage(family_digits(Stage.RUNTIME))


def _static_stage(root: Path | None, progress: Callable[[str], None] | None, ev: Evaluated) -> Any:
    """Run the static stage on ``root`` into ``ev``; the manifest, or ``None`` when there is
    no directory or its ``openenv.yaml`` cannot be read."""
    if root is None:
        return None
    from envkit.envdir.project import spec_or_none
    from envkit.validation.static import run_static

    static_findings, static_ran, static_skipped, secs = run_static(root, progress)
    ev.findings += static_findings
    ev.ran.update(static_ran)
    ev.skipped.update(static_skipped)
    ev.timings["static"] = secs
    return spec_or_none(root)


def _runtime_plan(
    root: Path | None, url: str | None, manifest: Any, *, static: bool, wanted: bool
) -> _RuntimePlan:
    """Whether the runtime stage plays, and what it assumes without a readable manifest (it
    is never skipped silently: play what can be played, say what was assumed)."""
    if static or not wanted:
        return _RuntimePlan(R.STATIC_GIVEN if static else R.NO_RUNTIME_SELECTED)
    plan = _RuntimePlan()
    if manifest is not None:
        return plan
    why = (
        "openenv.yaml is missing or invalid (see EK1xx)"
        if root is not None
        else "--url without an environment directory"
    )
    if root is not None and not url:
        plan.app, source = raw_app(root)
        if plan.app is None:
            return _RuntimePlan(source)
        plan.assumptions.append(f"server started from {source}")
    plan.assumptions += _assumed_defaults(why)
    return plan


def _runtime_target(
    root: Path | None,
    url: str | None,
    manifest: Any,
    plan: _RuntimePlan,
    opts: RunOptions,
    oracle_with_url: bool,
) -> Any:
    from envkit.validation.runtime import RuntimeTarget

    # run_runtime resolves the interpreter once and hands it to the server and the oracle
    return RuntimeTarget(
        url=url,
        root=root if oracle_with_url or not url else None,
        manifest=manifest,
        python=opts.python,
        app=plan.app,
    )


def _runtime_stage(
    target: Any, opts: RunOptions, budget: Any, ev: Evaluated, *, lane: str
) -> tuple[str | None, list[str]]:
    """Play the runtime stage into ``ev``; ``(launch, notes)`` for the report's note.

    Rules of other lanes are skipped with :func:`~envkit.validation.report.only_in_lanes`,
    rules the stage did not reach with :data:`~envkit.validation.report.NOT_EVALUATED_BY_RUNTIME`.
    """
    from envkit.validation.rules import lane_only_codes
    from envkit.validation.runtime import run_runtime

    outcome = run_runtime(
        target,
        episodes=opts.episodes,
        seed=opts.seed,
        timeout_s=opts.timeout_s,
        startup_timeout_s=opts.startup_timeout_s,
        reply_timeout_s=opts.reply_timeout_s,
        progress=opts.progress,
        budget=budget,
    )
    findings = outcome.findings
    if target.manifest is None and target.root is not None:
        # the oracle may be declared in the unreadable manifest: "none declared" would
        # be a guess, so the oracle rules are not evaluated
        oracle_codes = {"EK506", "EK507"}
        findings = [f for f in findings if f.code not in oracle_codes]
        ev.ran.update(c for c in outcome.checks_run if c not in oracle_codes)
        ev.skipped.update(dict.fromkeys(oracle_codes, R.ORACLE_UNKNOWN))
    else:
        ev.ran.update(outcome.checks_run)
    ev.findings += findings
    elsewhere = lane_only_codes(lane)
    for code in codes_of(Stage.RUNTIME):
        if code in elsewhere:
            ev.skipped.setdefault(code, R.only_in_lanes(elsewhere[code]))
        elif code not in outcome.checks_run:
            ev.skipped.setdefault(code, R.NOT_EVALUATED_BY_RUNTIME)
    ev.timings.update(outcome.timings)
    return outcome.launch, list(outcome.notes)


def run_static_only(
    path: str | Path = ".",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> ValidationReport:
    """The static stage only (what ``envkit build`` and ``envkit push`` run as a preflight).
    Same as ``validate(path, static=True, ...)``."""
    return validate(path, static=True, select=select, ignore=ignore)


@dataclass(frozen=True)
class DockerOptions:
    """What only the docker lane takes.

    Attributes:
        image: image to play; ``None`` builds it first (``NAME:VERSION``).
        labels: extra labels for the image (when built) and the container.
        build_options: extra keyword arguments for :func:`envkit.container.build_image`.
        on_event: build progress (:class:`envkit.container.BuildEvent`).
    """

    image: str | None = None
    labels: Mapping[str, str] | None = None
    build_options: Mapping[str, Any] | None = None
    on_event: Callable[[Any], None] | None = None


def validate_docker(
    path: str | os.PathLike[str] = ".",
    *,
    image: str | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    episodes: int = 5,
    seed: int = 0,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    labels: Mapping[str, str] | None = None,
    build_options: Mapping[str, Any] | None = None,
    on_event: Callable[[Any], None] | None = None,
    progress: Callable[[str], None] | None = None,
    python: str | None = None,
    train_path: bool = True,
) -> ValidationReport:
    """``envkit validate --docker``: static checks, then the runtime stage played against the
    environment's image run hardened (:func:`envkit.container.lane.run_lane`).

    Args:
        path: environment directory (holds ``openenv.yaml`` and the ``Dockerfile``).
        image: image to play; ``None`` builds it first (``NAME:VERSION``, as
            :func:`envkit.container.build_image`; the build cache makes rebuilds fast).
        select, ignore, episodes, seed: as :func:`validate`.
        timeout_s: the whole run's budget in seconds (``--timeout``; ``None``: 600): the
            build, the container's start-up and the runtime stage all spend it.
        startup_timeout_s: seconds to wait for the container's ``GET /health``
            (``--startup-timeout``; default ``envkit.startup_timeout_s``, 60), never past
            the run's deadline.
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        labels: extra labels for the image (when built) and the container.
        build_options: extra keyword arguments for ``build_image``.
        on_event: build progress (:class:`envkit.container.BuildEvent`).
        progress: short progress lines.
        python: interpreter that runs the oracle (the agent side, on the host) against the
            container (default as :func:`envkit.envdir.project.resolve_python`).
        train_path: play the training-path lane against the container (as :func:`validate`).

    Returns:
        A :class:`ValidationReport` with ``lane == "docker"``.

    Raises:
        UsageError, SpecError: as :func:`validate`, or no ``openenv.yaml``.
        BuildError, UserError: the build failed (nothing is left behind);
            ``BuildTimeoutError`` when the build outlives the deadline (with a
            ``build_image`` that takes one).
        DockerUnavailableError: no engine answers.
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
    docker = DockerOptions(
        image=image, labels=labels, build_options=build_options, on_event=on_event
    )
    return _docker_lane(path, opts, docker)


def _docker_lane(
    path: str | os.PathLike[str], opts: RunOptions, docker: DockerOptions
) -> ValidationReport:
    """Build (or take) the image, run it hardened, play the runtime stage through it, and
    assemble one report; one :class:`~envkit.validation.engine.Budget` for all of it."""
    from envkit.container.hardening import container_facts
    from envkit.errors import UsageError
    from envkit.validation.config import build_selection
    from envkit.validation.engine import Budget

    t0 = time.perf_counter()
    budget = Budget.start(opts.timeout_s)
    root = Path(path).expanduser()
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a directory.",
            hint="Pass the environment's directory (it holds openenv.yaml).",
        )
    root = _checked_root(root.resolve(), None, opts.episodes)
    facts = container_facts(root)
    selection = build_selection(root, select=opts.select, ignore=opts.ignore)
    ev = Evaluated()
    image = docker.image or _build(root, facts.name, docker, budget, ev, opts.progress)
    manifest = _static_stage(root, opts.progress, ev)
    played: list[bool] = []
    seen: dict[str, Any] = {}  # the /schema body, for the report's schema digest

    def play(url: str) -> None:
        plan = _runtime_plan(root, url, manifest, static=False, wanted=_wants_runtime(selection))
        if plan.not_run:
            ev.skipped.update(dict.fromkeys(codes_of(Stage.RUNTIME), plan.not_run))
        else:
            target = _runtime_target(root, url, manifest, plan, opts, oracle_with_url=True)
            _runtime_stage(target, opts, budget, ev, lane="docker")
        seen["schemas"] = _read_schemas(url)
        skip = _train_path_skip(opts, selection, plan, static=False)
        _train_path(root, url, manifest, plan, opts, budget, ev, skip)
        played.append(True)

    startup = opts.startup_timeout_s
    startup = startup if startup is not None else facts.startup_timeout_s
    lane = _container_stage(root, image, budget.cap(startup), opts.progress, docker, play)
    if not played:
        no_health = dict.fromkeys(
            codes_of(Stage.RUNTIME) + codes_of(Stage.TRAINING), R.CONTAINER_NO_HEALTH
        )
        ev.skipped.update(no_health)
    ev.findings += lane.findings
    ev.ran.update(lane.ran)
    for code in codes_of(Stage.RUNTIME):
        if code.startswith("EK44") and code not in lane.ran:
            ev.skipped[code] = R.NETWORK_NOT_ISOLATED
    ev.timings.update(lane.timings)
    ev.timings["total"] = time.perf_counter() - t0
    report = R.assemble_report(f"{root} @ {image}", "docker", root, ev, selection)
    report.digests = _digests(root, seen.get("schemas"), "" if played else R.CONTAINER_NO_HEALTH)
    return report


def _build(
    root: Path,
    name: str,
    docker: DockerOptions,
    budget: Any,
    ev: Evaluated,
    progress: Callable[[str], None] | None,
) -> str:
    """Build the environment's image as ``NAME:VERSION`` within the run's deadline; its tag.

    Raises:
        BuildTimeoutError: the build outlived the run's deadline (the build is stopped).
        BuildError: a build step failed.
    """
    from envkit.container.build import build_image, default_tag
    from envkit.envdir import EnvDir

    version = EnvDir(root).project_table.get("version")
    tag = default_tag(name, version if isinstance(version, str) else None)
    if progress:
        progress(f"building {tag}")
    kwargs = dict(docker.build_options or {})
    kwargs.setdefault("deadline", budget.deadline)
    built = build_image(root, tag=tag, labels=docker.labels, on_event=docker.on_event, **kwargs)
    ev.timings["build"] = round(built.seconds, 3)
    return tag


def _container_stage(
    root: Path,
    image: str,
    startup_s: float,
    progress: Callable[[str], None] | None,
    docker: DockerOptions,
    play: Callable[[str], None],
) -> Any:
    """Run ``image`` hardened, waiting ``startup_s`` seconds at most for ``GET /health``
    (already capped by what is left of the run's budget), and call ``play(url)`` once it
    answers; the :class:`envkit.container.lane.LaneOutcome`."""
    from envkit.container.lane import run_lane

    return run_lane(
        root,
        image,
        timeout_s=max(0.1, startup_s),
        labels=docker.labels,
        play=play,
        progress=progress,
    )
