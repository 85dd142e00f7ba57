"""Export in TRL's preference format (loaded with `datasets`), majority and agreement,
kappa statistics (issue #15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.label import (
    LabelStore,
    cohen_kappa,
    export,
    fleiss_kappa,
    label_stats,
    load_eval,
    select_pairs,
)


def _label(folder, store, name, pair, verdict):
    """Label ``pair`` as ``verdict`` (a, b, tie, cant_tell), whatever side each was on."""
    left, _right = pair.sides(store.salt)
    side = {
        "a": "left" if left == pair.a else "right",
        "b": "left" if left == pair.b else "right",
    }.get(verdict, verdict)
    by_id = folder.by_id()
    store.add(
        labeler=name,
        a=pair.a,
        b=pair.b,
        left_id=left,
        label=side,
        a_fingerprint=by_id[pair.a].fingerprint,
        b_fingerprint=by_id[pair.b].fingerprint,
    )


def test_export_rows_and_load_with_datasets(eval_dir: Path, tmp_path: Path):
    datasets = pytest.importorskip("datasets") if False else __import__("datasets")
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    pairs = select_pairs(folder, "all")
    by_id = folder.by_id()
    # prefer the higher return; equal returns: prefer the shorter rollout
    for p in pairs:
        ta, tb = by_id[p.a], by_id[p.b]
        better = "a" if (ta.ret, -len(ta.steps)) > (tb.ret, -len(tb.steps)) else "b"
        _label(folder, store, "alice", p, better)
    _label(folder, store, "alice", pairs[0], "tie")
    _label(folder, store, "alice", pairs[1], "cant_tell")
    result = export(folder, store)
    assert result.path == eval_dir / "preferences.jsonl"
    assert (result.rows, result.ties, result.cant_tell) == (len(pairs) - 2, 1, 1)
    rows = [json.loads(x) for x in result.path.read_text().splitlines()]
    assert len(rows) == result.rows
    row = rows[0]
    assert set(row) == {
        "prompt",
        "chosen",
        "rejected",
        "seed",
        "chosen_return",
        "rejected_return",
        "labeler",
        "agreement",
        "n_labels",
        "chosen_id",
        "rejected_id",
        "env_digest",
        "schema_digest",
    }
    # the environment the rollouts were played on, as the eval stamped it
    versions = folder.summary["versions"]
    assert versions["env_digest"].startswith("sha256:")
    assert versions["schema_digest"].startswith("sha256:")
    assert {(r["env_digest"], r["schema_digest"]) for r in rows} == {
        (versions["env_digest"], versions["schema_digest"])
    }
    system = folder.summary["settings"]["system_prompt_text"]  # what the openai policy sent
    assert isinstance(system, str) and "action" in system.lower()
    for r in rows:
        assert [m["role"] for m in r["prompt"]] == ["system", "user"]
        assert r["prompt"][0]["content"] == system
        for side in ("chosen", "rejected"):  # TRL: lists of messages ending with the model
            assert r[side] and r[side][-1]["role"] == "assistant"
            assert all(set(m) == {"role", "content"} for m in r[side])
        assert r["chosen_return"] >= r["rejected_return"]
        assert r["labeler"] == "alice" and r["agreement"] == 1.0
        assert by_id[r["chosen_id"]].seed == r["seed"]

    ds = datasets.load_dataset(
        "json", data_files=str(result.path), split="train", cache_dir=str(tmp_path / "hf-cache")
    )
    assert ds.num_rows == result.rows
    assert {"prompt", "chosen", "rejected"} <= set(ds.column_names)
    assert ds[0]["chosen"][0]["role"] == "assistant"

    pq = export(folder, store, tmp_path / "prefs.parquet")
    assert pq.format == "parquet"
    dp = datasets.load_dataset(
        "parquet", data_files=str(pq.path), split="train", cache_dir=str(tmp_path / "hf-cache")
    )
    assert dp.num_rows == result.rows and dp[0]["prompt"] == ds[0]["prompt"]


def test_majority_and_min_agreement(eval_dir: Path):
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    p1, p2, p3 = select_pairs(folder, "all")[:3]
    for name, v in (("ann", "a"), ("ben", "a"), ("cy", "b")):  # 2 of 3
        _label(folder, store, name, p1, v)
    for name, v in (("ann", "a"), ("ben", "b")):  # contested
        _label(folder, store, name, p2, v)
    for name in ("ann", "ben", "cy"):  # unanimous
        _label(folder, store, name, p3, "b")
    rows = {(r["chosen_id"], r["rejected_id"]): r for r in export(folder, store).records}
    assert rows[(p1.a, p1.b)]["agreement"] == pytest.approx(2 / 3)
    assert rows[(p1.a, p1.b)]["labeler"] == "ann,ben" and rows[(p1.a, p1.b)]["n_labels"] == 3
    assert rows[(p3.b, p3.a)]["agreement"] == 1.0
    strict = export(folder, store, min_agreement=0.9)
    assert (strict.rows, strict.below_agreement, strict.contested) == (1, 1, 1)


def test_stale_labels_are_not_exported(eval_dir: Path):
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    pair = select_pairs(folder, "all")[0]
    _label(folder, store, "ann", pair, "a")
    path = eval_dir / "trajectories.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[pair.a])
    rec["steps"][0]["reply"] = "something else entirely"
    lines[pair.a] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    result = export(load_eval(eval_dir), store)
    assert (result.rows, result.stale) == (0, 1)


def test_kappa_textbook_values():
    # Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    items = [[str(c) for c, n in enumerate(row) for _ in range(n)] for row in table]
    assert fleiss_kappa(items) == pytest.approx(0.2099, abs=1e-3)
    # Cohen: 50 items, yes/no, 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no -> 0.4
    x = ["y"] * 25 + ["n"] * 25
    y = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(x, y) == pytest.approx(0.4)
    assert cohen_kappa([], []) is None
    assert fleiss_kappa([["a", "b"], ["a"]]) is None


def test_stats_and_cli(cli, eval_dir: Path):
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    pairs = select_pairs(folder, "all")
    by_id = folder.by_id()
    for p in pairs[:6]:
        higher = "a" if by_id[p.a].ret > by_id[p.b].ret else "b"
        _label(folder, store, "ann", p, higher)
        _label(folder, store, "ben", p, higher)
    s = label_stats(folder, store)
    assert s.pairs_total == len(pairs) and s.pairs_labeled == 6
    assert s.per_labeler["ann"]["total"] == 6
    assert s.cohen[0]["labelers"] == ["ann", "ben"] and s.cohen[0]["overlap"] == 6
    assert s.fleiss is not None and s.fleiss["items"] == 6
    assert s.reward_comparable + s.reward_ties_broken == 6
    if s.reward_comparable:
        assert s.reward_agreement == 1.0
    result = cli("label", "stats", eval_dir)
    assert result.exit_code == 0
    assert "6 of 20 labeled" in result.stdout and "cohen kappa  ann vs ben" in result.stdout
    data = json.loads(cli("label", "stats", eval_dir, "--format", "json").stdout)
    assert data["pairs_labeled"] == 6
    out = cli("label", "export", eval_dir, "-o", eval_dir / "x.jsonl", "--min-agreement", "1")
    assert out.exit_code == 0 and "wrote 6 preference pair(s)" in out.stdout
