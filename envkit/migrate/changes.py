"""The file changes migrate computes (:class:`FileChange`), their sum (:class:`MigrationResult`)
and their writing."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from envkit.fsutil import write_atomic


@dataclass
class FileChange:
    """One file migrate writes, moves or creates.

    Attributes:
        path: POSIX path relative to the environment root.
        before: current text (``None``: the file is new).
        after: new text (``None``: the file is removed, e.g. moved elsewhere).
        summary: one line per change made in this file, for people.
    """

    path: str
    before: str | None
    after: str | None
    summary: list[str] = field(default_factory=list)

    def diff(self) -> str:
        """Unified diff (``a/PATH`` -> ``b/PATH``; ``/dev/null`` for a new or removed file)."""
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        a = f"a/{self.path}" if self.before is not None else "/dev/null"
        b = f"b/{self.path}" if self.after is not None else "/dev/null"
        text = "".join(difflib.unified_diff(old, new, a, b))
        return text if text.endswith("\n") or not text else text + "\n"


@dataclass
class MigrationResult:
    """What :func:`migrate` changed (or would change, with ``dry_run``).

    Attributes:
        root: the environment directory.
        changes: files written, created or removed, in a stable order.
        notes: what migrate could not do, each with the next step.
        dry_run: nothing was written.
    """

    root: Path
    changes: list[FileChange]
    notes: list[str]
    dry_run: bool

    @property
    def changed(self) -> bool:
        """Something was (or, with ``dry_run``, would be) written, created or removed."""
        return bool(self.changes)

    def diff(self) -> str:
        """All changes as one unified diff."""
        return "".join(c.diff() for c in self.changes)


def add_change(changes: list[FileChange], change: FileChange | None) -> None:
    """Append ``change`` to ``changes`` unless it is ``None`` (the file needs no change)."""
    if change is not None:
        changes.append(change)


def rel_path(root: Path, p: Path) -> str:
    """``p`` as a POSIX path relative to ``root`` (``p`` must be under ``root``)."""
    return p.relative_to(root).as_posix()


def apply_changes(root: Path, changes: list[FileChange]) -> None:
    """Write every new text (atomically, per file), then remove the files moved away, so an
    interrupted run never loses a file's content.

    Raises:
        OSError: a file cannot be written or removed (the ones before it stay written).
    """
    for c in changes:
        if c.after is not None:
            write_atomic(root / c.path, c.after)
    for c in changes:
        if c.after is None:
            (root / c.path).unlink(missing_ok=True)
