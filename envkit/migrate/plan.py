"""The probe plan ``validation/runtime.json``: made by playing the oracle, re-recorded when the
plan ``validation.execution`` declares is missing, invalid or stale."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.constants import PROBE_PLAN_PATH
from envkit.envdir.manifest import read_manifest
from envkit.envdir.project import resolve_python
from envkit.errors import EnvkitError
from envkit.migrate.changes import FileChange
from envkit.probe_plan import PlanError, make_probe_plan, read_plan
from envkit.server import start_server
from envkit.wire import EnvErrorFrame, EnvSession

PlanMaker = Callable[[Path], dict[str, Any]]
# ``(root, plan) -> why the plan is stale`` (``None``: it still replays).
PlanChecker = Callable[[Path, dict[str, Any]], str | None]


def default_plan_maker(python: str | None) -> PlanMaker:
    """Play the oracle with ``python`` (:func:`envkit.probe_plan.make_probe_plan`)."""

    def make(root: Path) -> dict[str, Any]:
        return make_probe_plan(root, python=python)

    return make


def make_plan(
    root: Path,
    maker: PlanMaker,
    oracle: str | None,
    notes: list[str],
    *,
    before: str | None = None,
    why: str | None = None,
) -> FileChange | None:
    """Play the oracle with ``maker`` and return the plan's :class:`FileChange`.

    Args:
        root: the environment directory.
        maker: ``root -> plan``.
        oracle: ``envkit.oracle`` (``module:attr``), for the messages.
        notes: a plan that cannot be made appends the reason here (and returns ``None``).
        before: the current plan's text when it is re-recorded (``None``: a new file).
        why: why an existing plan is re-recorded (``missing``, ``stale: ...``); ``None`` for
            a plan that ``validation.execution`` is about to declare.
    """
    try:
        plan = maker(root)
    except EnvkitError as exc:
        tail = (
            "the plan was not re-recorded"
            if why is not None
            else "`validation.execution` was not added"
        )
        notes.append(
            f"Could not make {PROBE_PLAN_PATH} by playing the oracle ({oracle}): "
            f"{exc.message} {tail}; fix the cause and run `envkit migrate` again."
        )
        return None
    text = json.dumps(plan, indent=2) + "\n"
    played = f"reset + {len(plan.get('actions', []))} action(s) played by the oracle ({oracle})"
    line = f"probe plan: {played}" if why is None else f"probe plan re-recorded ({why}): {played}"
    return FileChange(PROBE_PLAN_PATH, before, text, [line])


def refresh_plan(
    env: EnvDir, maker: PlanMaker, checker: PlanChecker | None, notes: list[str]
) -> list[FileChange]:
    """Re-record the probe plan that ``validation.execution`` already declares when it is
    missing, breaks the plan schema, or is stale (``checker`` says why).

    Only the default ``probe_path`` (:data:`PROBE_PLAN_PATH`) is re-recorded: a plan kept
    elsewhere was placed by hand, and envkit does not overwrite hand-made files.

    Args:
        env: the environment directory (its manifest as it was before this migration:
            ``validation.execution`` is only ever added by migrate together with its plan).
        maker: ``root -> plan``.
        checker: ``(root, plan) -> reason or None``; ``None`` when ``--no-probe-plan`` forbids
            starting anything (then a missing or invalid plan only gets a note).
        notes: what could not be done is appended here.

    Returns:
        The plan's change, or nothing.
    """
    spec = env.spec
    if env.manifest is None or spec.probe_path != PROBE_PLAN_PATH:
        return []
    path = env.root / PROBE_PLAN_PATH
    before = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    why: str | None = None
    try:
        plan = read_plan(env.root, PROBE_PLAN_PATH)
    except PlanError as exc:
        why = "missing" if before is None else f"invalid: {exc.message}"
    if checker is None or not spec.oracle:
        if why is not None:
            how = (
                "run `envkit migrate` without --no-probe-plan to re-record it"
                if spec.oracle
                else "declare `envkit.oracle` and run `envkit migrate` again, or write it by hand"
            )
            notes.append(f"{PROBE_PLAN_PATH} is {why}; it was not re-recorded: {how}.")
        return []
    if why is None:
        try:
            why = checker(env.root, plan)
        except EnvkitError as exc:
            notes.append(
                f"Could not check whether {PROBE_PLAN_PATH} still replays: {exc.message} "
                "It was left as it is."
            )
            return []
    if why is None:
        return []
    change = make_plan(env.root, maker, spec.oracle, notes, before=before, why=why)
    return [change] if change is not None else []


def default_plan_checker(python: str | None) -> PlanChecker:
    """Serve the environment with ``python`` (one server start, 1-3 s) and replay the plan:
    the first refused action makes it stale (the check EK431 makes in ``envkit validate``)."""

    def check(root: Path, plan: dict[str, Any]) -> str | None:
        manifest = read_manifest(root)
        spec = manifest.spec
        server = start_server(root, manifest.app, python=resolve_python(root, python))
        try:
            server.wait_healthy(timeout_s=spec.startup_timeout_s)
            return _replay_refusal(server.url, plan, timeout_s=max(spec.step_timeout_s * 6, 30.0))
        finally:
            server.stop()

    return check


def _replay_refusal(base_url: str, plan: dict[str, Any], *, timeout_s: float) -> str | None:
    """Replay ``plan`` on one session at ``base_url``: why it is stale (its first refused
    action), or ``None`` when every action is accepted up to ``done``.

    Raises:
        WireError: the server cannot be reached or does not answer within ``timeout_s``
            seconds (that says nothing about the plan).
    """
    reset, actions = plan["reset"], plan["actions"]
    with EnvSession(base_url, timeout_s=timeout_s) as session:
        result = session.reset(
            seed=reset["seed"], episode_id=reset["episode_id"], **(reset.get("options") or {})
        )
        for i, action in enumerate(actions):
            if result.done:
                break
            try:
                result = session.step(action)
            except EnvErrorFrame as exc:
                return f"stale: the environment refused its action {i + 1} of {len(actions)}: {exc.message}"
    return None
