"""Labels in SQLite: ``labels.sqlite`` in the eval folder, WAL mode.

One row per (labeler, pair): labeling a pair again replaces that labeler's earlier label, so
the back button and a re-submitted form never count twice. Each call opens its own connection
and writes in a ``BEGIN IMMEDIATE`` transaction with a busy timeout, so several labelers (and
a server's worker threads) can write at once without losing a label; readers never block
writers in WAL mode.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import UsageError, UserError

LABELS = ("left", "right", "tie", "cant_tell", "skip")
"""What a labeler can answer: ``left``/``right`` better, ``tie``, ``cant_tell``, or ``skip``
(not answered; shown again after the unanswered pairs)."""

SCHEMA_VERSION = "1"
_BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    labeler TEXT NOT NULL,
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    left_id INTEGER NOT NULL,
    right_id INTEGER NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('left', 'right', 'tie', 'cant_tell', 'skip')),
    note TEXT NOT NULL DEFAULT '',
    a_fingerprint TEXT NOT NULL DEFAULT '',
    b_fingerprint TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (labeler, a, b)
);
CREATE INDEX IF NOT EXISTS labels_by_labeler ON labels (labeler, id);
"""


class LabelStoreError(UserError):
    """``labels.sqlite`` cannot be opened or written (permissions, not a database, locked)."""


@dataclass(frozen=True)
class Label:
    """One stored label.

    Attributes:
        id: increasing row id (the latest label of a labeler has the largest).
        labeler: who labeled.
        a, b: the pair's trajectory ids (``a < b``).
        left_id, right_id: which trajectory was shown on which side.
        label: one of :data:`LABELS`.
        note: free text ("" when none).
        a_fingerprint, b_fingerprint: the trajectories' content hashes when labeled (a label
            whose trajectories changed since is stale and not exported).
        created_at: ISO 8601 UTC time.
    """

    id: int
    labeler: str
    a: int
    b: int
    left_id: int
    right_id: int
    label: str
    note: str
    a_fingerprint: str
    b_fingerprint: str
    created_at: str

    @property
    def pair_key(self) -> str:
        return f"{self.a}-{self.b}"

    @property
    def winner(self) -> int | None:
        """The preferred trajectory id for ``left``/``right``, else ``None``."""
        return {"left": self.left_id, "right": self.right_id}.get(self.label)

    @property
    def verdict(self) -> str:
        """Side-free answer: ``"a"``, ``"b"``, ``"tie"``, ``"cant_tell"`` or ``"skip"``."""
        w = self.winner
        if w is None:
            return self.label
        return "a" if w == self.a else "b"


def check_labeler(name: str) -> str:
    """A labeler name: 1-64 printable characters, surrounding spaces removed.

    Raises:
        UsageError: empty, too long or with control characters.
    """
    clean = (name or "").strip()
    if not clean or len(clean) > 64 or not clean.isprintable():
        raise UsageError(
            f"--labeler {name!r}: expected 1-64 printable characters.",
            hint="Pass a short name, e.g. --labeler alice.",
        )
    return clean


class LabelStore:
    """The labels of one eval folder.

    Args:
        path: the SQLite file (created with its tables when missing).

    Raises:
        LabelStoreError: the file cannot be created or is not an envkit label store.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        try:
            with self._connect() as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("BEGIN IMMEDIATE")
                for stmt in filter(str.strip, _SCHEMA.split(";")):
                    conn.execute(stmt)
                row = conn.execute("SELECT value FROM meta WHERE key='salt'").fetchone()
                if row is None:
                    conn.execute("INSERT INTO meta VALUES ('salt', ?)", (secrets.token_hex(8),))
                    conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                conn.execute("COMMIT")
                self.salt = conn.execute("SELECT value FROM meta WHERE key='salt'").fetchone()[0]
        except sqlite3.Error as exc:
            raise LabelStoreError(
                f"Cannot use {self.path} as the label store: {exc}.",
                hint="Check the folder is writable; move the file away if it "
                "is not envkit's labels.sqlite.",
            ) from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
            yield conn
        finally:
            conn.close()

    def _write(self, sql_fn) -> object:  # noqa: ANN001 - a callable taking the connection
        try:
            with self._connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = sql_fn(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return result
        except sqlite3.Error as exc:
            raise LabelStoreError(
                f"Cannot write a label to {self.path}: {exc}.",
                hint="Check the folder is writable and not on a network "
                "file system (SQLite WAL needs local files).",
            ) from None

    def add(
        self,
        *,
        labeler: str,
        a: int,
        b: int,
        left_id: int,
        label: str,
        note: str = "",
        a_fingerprint: str = "",
        b_fingerprint: str = "",
    ) -> Label:
        """Store ``labeler``'s answer for pair ``(a, b)``, replacing an earlier one.

        Args:
            labeler: checked with :func:`check_labeler`.
            a, b: trajectory ids, ``a < b``.
            left_id: ``a`` or ``b``, the one shown on the left.
            label: one of :data:`LABELS`.
            note: optional free text (at most 2000 characters kept).

        Raises:
            UsageError: bad labeler, label, ids.
            LabelStoreError: the database cannot be written.
        """
        labeler = check_labeler(labeler)
        if label not in LABELS:
            raise UsageError(f"Unknown label {label!r}.", hint=f"Use one of {', '.join(LABELS)}.")
        if not a < b or left_id not in (a, b):
            raise UsageError(
                f"Bad pair {a}-{b} with left {left_id}.",
                hint="Label pairs shown by the labeling page.",
            )
        right_id = b if left_id == a else a
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
        values = (
            labeler,
            a,
            b,
            left_id,
            right_id,
            label,
            (note or "")[:2000],
            a_fingerprint,
            b_fingerprint,
            now,
        )

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("DELETE FROM labels WHERE labeler=? AND a=? AND b=?", (labeler, a, b))
            cur = conn.execute(
                "INSERT INTO labels (labeler, a, b, left_id, right_id, label, note, "
                "a_fingerprint, b_fingerprint, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                values,
            )
            return int(cur.lastrowid or 0)

        row_id = self._write(run)
        return Label(int(row_id), *values)  # type: ignore[arg-type]

    def undo(self, labeler: str) -> Label | None:
        """Delete ``labeler``'s most recent label and return it (``None``: nothing to undo)."""
        labeler = check_labeler(labeler)

        def run(conn: sqlite3.Connection) -> Label | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM labels WHERE labeler=? ORDER BY id DESC LIMIT 1",
                (labeler,),
            ).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM labels WHERE id=?", (row[0],))
            return Label(*row)

        return self._write(run)  # type: ignore[return-value]

    def labels(self, labeler: str | None = None) -> list[Label]:
        """Every label (of ``labeler`` when given), oldest first."""
        try:
            with self._connect() as conn:
                if labeler is None:
                    rows = conn.execute(f"SELECT {_COLUMNS} FROM labels ORDER BY id").fetchall()
                else:
                    rows = conn.execute(
                        f"SELECT {_COLUMNS} FROM labels WHERE labeler=? ORDER BY id", (labeler,)
                    ).fetchall()
        except sqlite3.Error as exc:
            raise LabelStoreError(
                f"Cannot read {self.path}: {exc}.",
                hint="Move the file away if it is not envkit's labels.sqlite.",
            ) from None
        return [Label(*r) for r in rows]

    def get(self, labeler: str, a: int, b: int) -> Label | None:
        """``labeler``'s label of pair ``(a, b)``, if any."""
        for lab in self.labels(labeler):
            if lab.a == a and lab.b == b:
                return lab
        return None


_COLUMNS = (
    "id, labeler, a, b, left_id, right_id, label, note, a_fingerprint, b_fingerprint, created_at"
)
