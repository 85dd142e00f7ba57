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

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from envkit.envdir.constants import DEFAULT_APP
from envkit.findings import RULES, Finding, Stage, codes_of, family_digits
from envkit.validation.report import CheckResult, RuntimeNote, ValidationReport

__all__ = ["CheckResult", "RuntimeNote", "ValidationReport", "run_static_only", "validate"]


def raw_app(root: Path) -> tuple[str | None, str]:
    """The app to start when ``openenv.yaml`` cannot be read as a manifest:
    its raw ``app`` key when the file is YAML with a ``module:attr`` string there, else
    ``server.app:app`` when ``server/app.py`` exists.

    Returns:
        ``(app, where it came from)``; ``(None, why not)`` when there is nothing to start.
    """
    from envkit.envdir.constants import APP_PATTERN, MANIFEST_NAME
    from envkit.errors import SpecError
    from envkit.manifest import load_yaml

    path = root / MANIFEST_NAME
    if path.is_file():
        try:
            data = load_yaml(path).data
        except SpecError:
            data = None
        app = data.get("app") if isinstance(data, dict) else None
        if isinstance(app, str) and APP_PATTERN.fullmatch(app):
            return app, f"`{app}` from openenv.yaml's `app` key"
    if (root / "server" / "app.py").is_file():
        return DEFAULT_APP, f"`{DEFAULT_APP}` (the default: openenv.yaml names no usable app)"
    return None, (
        "openenv.yaml is missing or invalid (see EK1xx) and there is no server/app.py to start"
    )


def _assumed_defaults(why: str) -> list[str]:
    """What the runtime stage assumes without a readable manifest (the defaults of
    :class:`envkit.manifest.EnvSpec`)."""
    from envkit.manifest import EnvSpec
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
        timeout_s: overall runtime-stage budget in seconds (``--timeout``; ``None``: the
            engine's default). See :class:`envkit.project.Timeouts`.
        startup_timeout_s: seconds to wait for ``GET /health`` (``--startup-timeout``).
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        progress: called with short progress lines (the CLI prints them on stderr).
        oracle_with_url: with ``url`` and ``path``, also play ``path``'s oracle (in
            ``python``) against the URL; the docker lane does.

    Returns:
        The :class:`ValidationReport`; ``report.passed`` is False when an error finding
        remains after selection and severity overrides.

    Raises:
        UsageError: neither ``path`` nor ``url``, ``path`` not a directory, bad select/ignore
            codes, ``episodes`` < 1 (exit 2).
        SpecError: invalid ``[tool.envkit.validate]`` (unknown key, code or severity).
    """
    from envkit.errors import UsageError
    from envkit.validation.config import build_selection

    _load_rules()
    t0 = time.perf_counter()
    if path is None and not url:
        raise UsageError(
            "Nothing to validate: give an environment directory or --url.",
            hint="Run `envkit validate PATH` or `envkit validate --url URL`.",
        )
    if episodes < 1:
        raise UsageError(f"--episodes must be >= 1; got {episodes}.", hint="Pass --episodes 5.")
    root: Path | None = None
    if path is not None:
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
        root = root.resolve()
    selection = build_selection(root, select=select, ignore=ignore)

    findings: list[Finding] = []
    ran: set[str] = set()
    skipped: dict[str, str] = {}
    timings: dict[str, float] = {}
    manifest = None

    if root is not None:
        from envkit.validation.static import run_static

        static_findings, static_ran, static_skipped, secs = run_static(root, progress)
        findings += static_findings
        ran.update(static_ran)
        skipped.update(static_skipped)
        timings["static"] = secs
        from envkit.project import spec_or_none

        manifest = spec_or_none(root)

    runtime_codes = codes_of(Stage.RUNTIME)
    app: str | None = None
    assumptions: list[str] = []
    launch: str | None = None
    runtime_notes: list[str] = []
    not_run = ""
    if static or not selection.wants_stage(family_digits(Stage.RUNTIME)):
        not_run = "--static was given" if static else "no runtime rule is selected"
    elif manifest is None:
        # never skipped silently: play what can be played, say what was assumed
        why = (
            "openenv.yaml is missing or invalid (see EK1xx)"
            if root is not None
            else "--url without an environment directory"
        )
        if root is not None and not url:
            app, source = raw_app(root)
            if app is None:
                not_run = source
            else:
                assumptions.append(f"server started from {source}")
        if not not_run:
            assumptions += _assumed_defaults(why)
    if not_run:
        skipped.update(dict.fromkeys(runtime_codes, not_run))
    else:
        from envkit.validation.runtime import RuntimeTarget, run_runtime

        # run_runtime resolves the interpreter once and hands it to the server and the oracle
        target = RuntimeTarget(
            url=url,
            root=root if oracle_with_url or not url else None,
            manifest=manifest,
            python=python,
            app=app,
        )
        outcome = run_runtime(
            target,
            episodes=episodes,
            seed=seed,
            timeout_s=timeout_s,
            startup_timeout_s=startup_timeout_s,
            reply_timeout_s=reply_timeout_s,
            progress=progress,
        )
        runtime_findings = outcome.findings
        launch, runtime_notes = outcome.launch, list(outcome.notes)
        if manifest is None and root is not None:
            # the oracle may be declared in the unreadable manifest: "none declared" would
            # be a guess, so the oracle rules are not evaluated
            oracle_codes = {"EK506", "EK507"}
            runtime_findings = [f for f in runtime_findings if f.code not in oracle_codes]
            ran.update(c for c in outcome.checks_run if c not in oracle_codes)
            skipped.update(
                dict.fromkeys(oracle_codes, "openenv.yaml is invalid: the oracle is unknown")
            )
        else:
            ran.update(outcome.checks_run)
            if manifest is None:
                assumptions[-1] = "no oracle (no manifest): EK507 reports it, EK506 not played"
        findings += runtime_findings
        from envkit.validation.rules import lane_only_codes

        elsewhere = lane_only_codes("url" if url else "source")
        for code in runtime_codes:
            if code in elsewhere:
                skipped.setdefault(
                    code,
                    "only in the "
                    + " and ".join(f"`{lane}`" for lane in elsewhere[code])
                    + " lane (`envkit validate --docker`)",
                )
            elif code not in outcome.checks_run:
                skipped.setdefault(code, "not evaluated by the runtime stage")
        timings.update(outcome.timings)

    # select / ignore / severity overrides
    kept: list[Finding] = []
    for f in findings:
        if not selection.enabled(f.code):
            continue
        f.severity = selection.severity_of(f.code, f.severity)
        kept.append(f)
    checks: list[CheckResult] = []
    for code in sorted(set(RULES) | {f.code for f in findings}):
        rule = RULES.get(code)
        name = rule.name if rule else next(f.name for f in findings if f.code == code)
        stage = rule.stage if rule else "runtime"
        mine = [f for f in kept if f.code == code]
        if not selection.enabled(code):
            status, reason = "skipped", "deselected"
        elif code in ran or mine:
            status, reason = (
                ("failed" if any(f.severity.value == "error" for f in mine) else "passed"),
                "",
            )
        else:
            status, reason = "skipped", skipped.get(code, "not evaluated")
        checks.append(CheckResult(code, name, stage, status, reason, mine))

    if root is not None and url:
        label = f"{root} @ {url}"
    else:
        label = str(root) if root is not None else str(url)
    timings["total"] = time.perf_counter() - t0
    note = RuntimeNote(
        ran=not not_run,
        reason=not_run or None,
        assumptions=assumptions,
        launch=launch,
        notes=runtime_notes,
    )
    return ValidationReport(
        target=label,
        findings=kept,
        checks=checks,
        timings=timings,
        root=root,
        lane="url" if url else "source",
        runtime=note,
    )


def run_static_only(
    path: str | Path = ".",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> ValidationReport:
    """The static stage only (what ``envkit build`` and ``envkit push`` run as a preflight).
    Same as ``validate(path, static=True, ...)``."""
    return validate(path, static=True, select=select, ignore=ignore)
