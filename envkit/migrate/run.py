"""The migration, file by file: dependencies, Dockerfiles, the manifest, the probe plan; nothing
is written until every file has been read and parsed."""

from __future__ import annotations

from pathlib import Path

from envkit.envdir import EnvDir
from envkit.envdir.constants import MANIFEST_NAME, PROBE_PLAN_PATH
from envkit.errors import SpecError
from envkit.migrate.changes import FileChange, MigrationResult, apply_changes
from envkit.migrate.dependencies import migrate_dependencies, migrate_dockerfiles
from envkit.migrate.manifest import DirFacts, ManifestChange, migrate_manifest
from envkit.migrate.plan import (
    PlanChecker,
    PlanMaker,
    default_plan_checker,
    default_plan_maker,
    make_plan,
    refresh_plan,
)


def migrate(
    path: str | Path = ".",
    *,
    dry_run: bool = False,
    python: str | None = None,
    probe_plan: bool = True,
    plan_maker: PlanMaker | None = None,
    plan_checker: PlanChecker | None = None,
) -> MigrationResult:
    """Move the environment at ``path`` forward to OpenEnv 0.10 and envkit's manifest layout.

    Args:
        path: environment directory (holds ``openenv.yaml``).
        dry_run: compute the changes and return them; write nothing.
        python: interpreter that serves the environment, used to play the oracle for the
            probe plan (default: ``PATH/.venv/bin/python`` if present, else the current one).
        probe_plan: make ``validation/runtime.json`` by playing the oracle when it is
            missing, invalid or stale and an oracle is declared (checking a declared plan
            starts the server once to replay it). ``False``: never start anything.
        plan_maker: ``root -> plan`` (default: :func:`envkit.probe_plan.make_probe_plan`
            with ``python``); for callers that already have a server.
        plan_checker: ``(root, plan) -> reason or None`` telling whether a declared,
            schema-valid plan is stale (default: serve the environment with ``python`` and
            replay the plan; a refused action makes it stale).

    Returns:
        The :class:`MigrationResult`; ``changes`` is empty when the environment is already
        current (migrate is idempotent).

    Raises:
        SpecError: ``path`` is not an environment directory (no ``openenv.yaml``).
        MigrationRefused: a file migrate would change cannot be parsed (YAML, TOML); the
            message names the file and line; nothing was written.
        OSError: a file cannot be written (files written before it stay written; each
            write is atomic).
    """
    env = EnvDir(path)
    root = env.root
    if not env.has_manifest:
        raise SpecError(
            f"No {MANIFEST_NAME} in {root}: this is not an OpenEnv environment directory.",
            hint="Pass the environment's directory: `envkit migrate PATH`.",
        )
    notes: list[str] = []
    changes = migrate_dependencies(env)
    dockerfile_changes, has_root_dockerfile = migrate_dockerfiles(env)
    changes += dockerfile_changes
    facts = DirFacts(
        has_root_dockerfile=has_root_dockerfile,
        plan_exists=(root / PROBE_PLAN_PATH).is_file(),
        plan_possible=probe_plan,
    )
    manifest_change, oracle = migrate_manifest(env, facts, notes)
    maker = plan_maker or default_plan_maker(python)
    if manifest_change is not None:
        changes += _manifest_and_plan(root, manifest_change, maker, oracle, notes)
    if not any(c.path == PROBE_PLAN_PATH for c in changes):
        checker = plan_checker or default_plan_checker(python)
        changes += refresh_plan(env, maker, checker if probe_plan else None, notes)
    if not dry_run:
        apply_changes(root, changes)
    return MigrationResult(root=root, changes=changes, notes=notes, dry_run=dry_run)


def _manifest_and_plan(
    root: Path,
    manifest_change: ManifestChange,
    maker: PlanMaker,
    oracle: str | None,
    notes: list[str],
) -> list[FileChange]:
    """The manifest's change and, when it adds ``validation.execution``, the probe plan it
    points at. A plan that cannot be made drops ``validation.execution`` again (the reason is
    appended to ``notes``), so the manifest never names a missing file."""
    plan_change = None
    if manifest_change.plan_needed:
        plan_change = make_plan(root, maker, oracle, notes)
        if plan_change is None:
            manifest_change = manifest_change.without_execution()
    return [c for c in (manifest_change.change, plan_change) if c is not None]
