"""The SQLite label store: WAL, replace-on-relabel, undo, concurrent writers (issue #15)."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from envkit.errors import UsageError
from envkit.label import LabelStore, load_eval, select_pairs
from tests.label.conftest import label_server


def test_wal_and_persistence(tmp_path: Path):
    db = tmp_path / "labels.sqlite"
    store = LabelStore(db)
    store.add(labeler="alice", a=1, b=2, left_id=2, label="left", note="clearer")
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    again = LabelStore(db)  # a restart resumes: same salt, same labels
    assert again.salt == store.salt
    [lab] = again.labels()
    assert (lab.labeler, lab.a, lab.b, lab.left_id, lab.right_id, lab.label, lab.note) == (
        "alice",
        1,
        2,
        2,
        1,
        "left",
        "clearer",
    )
    assert lab.winner == 2 and lab.verdict == "b"


def test_relabel_replaces_and_undo_removes_the_latest(tmp_path: Path):
    store = LabelStore(tmp_path / "l.sqlite")
    store.add(labeler="alice", a=1, b=2, left_id=1, label="left")
    store.add(labeler="alice", a=3, b=4, left_id=3, label="tie")
    store.add(labeler="alice", a=1, b=2, left_id=1, label="right")  # back button, new answer
    assert [(x.a, x.label) for x in store.labels("alice")] == [(3, "tie"), (1, "right")]
    undone = store.undo("alice")
    assert undone is not None and (undone.a, undone.label) == (1, "right")
    assert [(x.a, x.label) for x in store.labels()] == [(3, "tie")]
    assert store.undo("bob") is None


def test_bad_input_is_refused(tmp_path: Path):
    store = LabelStore(tmp_path / "l.sqlite")
    with pytest.raises(UsageError):
        store.add(labeler="", a=1, b=2, left_id=1, label="left")
    with pytest.raises(UsageError):
        store.add(labeler="x", a=1, b=2, left_id=1, label="great")
    with pytest.raises(UsageError):
        store.add(labeler="x", a=2, b=1, left_id=1, label="left")
    assert store.labels() == []


def test_concurrent_writers_lose_nothing(tmp_path: Path):
    """Two labelers, 8 threads, separate connections, 2 x 60 labels at once."""
    db = tmp_path / "l.sqlite"
    LabelStore(db)
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        store = LabelStore(db)
        start.wait()
        name = "alice" if worker % 2 else "bob"
        for i in range(worker // 2, 60, 4):
            store.add(labeler=name, a=i, b=i + 1000, left_id=i, label="left")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    labels = LabelStore(db).labels()
    assert len(labels) == 120
    assert {(x.labeler, x.a) for x in labels} == {
        (n, i) for n in ("alice", "bob") for i in range(60)
    }


def test_concurrent_http_requests_from_two_labelers(eval_dir: Path):
    """The real server (`envkit label`) under concurrent POSTs from two labelers."""
    folder = load_eval(eval_dir)
    pairs = select_pairs(folder, "all")
    with label_server(eval_dir, "--labeler", "alice") as url:

        def post(job: tuple[str, str]) -> int:
            name, key = job
            r = httpx.post(
                f"{url}/label", data={"pair": key, "label": "tie", "labeler": name}, timeout=30
            )
            return r.status_code

        jobs = [(name, p.key) for p in pairs for name in ("alice", "bob")]
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(post, jobs))
        assert statuses == [303] * len(jobs)
        page = httpx.get(f"{url}/?labeler=bob", follow_redirects=True, timeout=10)
        assert f"All {len(pairs)} pairs are labeled" in page.text
    labels = LabelStore(folder.db_path).labels()
    assert len(labels) == 2 * len(pairs)
    assert {(x.labeler, x.pair_key) for x in labels} == set(jobs)
