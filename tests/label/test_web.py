"""`envkit.label.web`: the labeling app, driven through FastAPI's TestClient over a real eval
folder (made by the real `envkit eval`, see conftest.py) and its real SQLite label store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from envkit.errors import UsageError
from envkit.label import LabelStore, load_eval, select_pairs
from envkit.label.web import LABEL_TEXT, create_app

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient


def make_client(folder_path: Path, **kwargs) -> tuple[TestClient, LabelStore, list]:
    folder = load_eval(folder_path)
    store = LabelStore(folder.db_path)
    app = create_app(folder, store, **kwargs)
    pairs = select_pairs(folder, kwargs.get("pairs", "all"))
    return TestClient(app, follow_redirects=False), store, pairs


def test_healthz_counts_the_selected_pairs(eval_dir):
    client, _store, pairs = make_client(eval_dir)
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"ok": True, "pairs": len(pairs)}
    assert len(pairs) > 0


def test_index_redirects_to_the_first_pair_then_done(eval_dir):
    client, store, pairs = make_client(eval_dir, labeler="alice")
    r = client.get("/")
    assert r.status_code == 303
    assert r.headers["location"] == f"/pair/{pairs[0].key}?labeler=alice"
    for pair in pairs:
        left, _right = pair.sides(store.salt)
        store.add(labeler="alice", a=pair.a, b=pair.b, left_id=left, label="tie")
    assert client.get("/").headers["location"] == "/done?labeler=alice"
    done = client.get("/done?labeler=alice")
    assert done.status_code == 200
    assert f"<b>{len(pairs)}</b> of {len(pairs)} labeled" in done.text
    # Another labeler has labeled nothing yet.
    assert client.get("/?labeler=bob").headers["location"] == f"/pair/{pairs[0].key}?labeler=bob"


def test_pair_page_shows_both_sides_in_the_salted_order(eval_dir):
    client, store, pairs = make_client(eval_dir, labeler="alice")
    pair = pairs[0]
    r = client.get(f"/pair/{pair.key}")
    assert r.status_code == 200
    assert r.headers["cache-control"] == "no-store"
    left, right = pair.sides(store.salt)
    assert f'name="left" value="{left}"' in r.text
    assert f'name="pair" value="{pair.key}"' in r.text
    assert '<b id="labeler">alice</b>' in r.text
    assert f"seed {pair.seed}" in r.text
    assert {left, right} == {pair.a, pair.b}


def test_label_is_stored_with_its_sides_and_moves_on(eval_dir):
    client, store, pairs = make_client(eval_dir, labeler="alice")
    pair = pairs[0]
    r = client.post("/label", data={"pair": pair.key, "label": "left", "note": "clearer"})
    assert r.status_code == 303
    assert r.headers["location"] == "/?labeler=alice"
    [lab] = store.labels()
    left, right = pair.sides(store.salt)
    assert (lab.labeler, lab.a, lab.b, lab.left_id, lab.right_id) == (
        "alice",
        pair.a,
        pair.b,
        left,
        right,
    )
    assert (lab.label, lab.note, lab.winner) == ("left", "clearer", left)
    folder = load_eval(eval_dir)
    assert lab.a_fingerprint == folder.by_id()[pair.a].fingerprint
    assert client.get("/").headers["location"] == f"/pair/{pairs[1].key}?labeler=alice"
    # Labeled pair shows the current label.
    page = client.get(f"/pair/{pair.key}?labeler=alice")
    assert f"You labeled this pair: <b>{LABEL_TEXT['left']}</b>" in page.text


def test_the_form_labeler_wins_and_a_bad_one_falls_back(eval_dir):
    client, store, pairs = make_client(eval_dir, labeler="alice")
    client.post("/label", data={"pair": pairs[0].key, "label": "tie", "labeler": "bob"})
    # A control character makes the name invalid: the server's --labeler is used instead.
    client.post("/label?labeler=a%01b", data={"pair": pairs[1].key, "label": "tie"})
    assert sorted(lab.labeler for lab in store.labels()) == ["alice", "bob"]


@pytest.mark.parametrize(
    "form", [{"pair": "999-1000", "label": "left"}, {"label": "left"}, {"label": "best"}]
)
def test_bad_label_requests_are_400(eval_dir, form):
    client, store, pairs = make_client(eval_dir)
    if form.get("label") == "best":
        form = {**form, "pair": pairs[0].key}
    r = client.post("/label", data=form)
    assert r.status_code == 400
    assert "expected pair=<a>-<b>" in r.json()["error"]
    assert store.labels() == []


def test_skipped_pairs_come_back_after_the_unlabeled_ones(eval_dir):
    client, _store, pairs = make_client(eval_dir, labeler="alice")
    client.post("/label", data={"pair": pairs[0].key, "label": "skip"})
    assert client.get("/").headers["location"] == f"/pair/{pairs[1].key}?labeler=alice"
    for pair in pairs[1:]:
        client.post("/label", data={"pair": pair.key, "label": "right"})
    assert client.get("/").headers["location"] == f"/pair/{pairs[0].key}?labeler=alice"


def test_undo_removes_the_latest_label_and_shows_its_pair(eval_dir):
    client, store, pairs = make_client(eval_dir, labeler="alice")
    assert client.post("/undo").headers["location"] == "/?labeler=alice"  # nothing to undo
    client.post("/label", data={"pair": pairs[0].key, "label": "left"})
    client.post("/label", data={"pair": pairs[1].key, "label": "cant_tell"})
    r = client.post("/undo")
    assert r.status_code == 303
    location = r.headers["location"]
    assert location.startswith(f"/pair/{pairs[1].key}?labeler=alice&flash=")
    assert unquote(location.split("flash=")[1]) == (
        f"Undone: pair {pairs[1].key} ({LABEL_TEXT['cant_tell']})."
    )
    assert [lab.pair_key for lab in store.labels()] == [pairs[0].key]
    shown = client.get(location)
    assert f"Undone: pair {pairs[1].key}" in shown.text


def test_unknown_pair_is_404_with_a_message(eval_dir):
    client, _store, _pairs = make_client(eval_dir)
    r = client.get("/pair/12345-67890")
    assert r.status_code == 404
    assert "No pair 12345-67890 in this folder&#39;s selection." in r.text


def test_trajectories_viewer_filters_sorts_and_selects(eval_dir):
    client, _store, _pairs = make_client(eval_dir)
    folder = load_eval(eval_dir)
    seed = folder.trajectories[0].seed

    def episodes(html: str) -> list[int]:
        return [int(m) for m in re.findall(r'data-episode="(\d+)"', html)]

    every = client.get("/trajectories?sort=episode")
    assert episodes(every.text) == [t.id for t in folder.trajectories]
    low_first = client.get(f"/trajectories?seed={seed}&sort=return_asc")
    in_seed = [t for t in folder.trajectories if t.seed == seed]
    assert episodes(low_first.text) == [t.id for t in sorted(in_seed, key=lambda t: (t.ret, t.id))]
    high_first = client.get(f"/trajectories?seed={seed}&sort=nonsense")  # default sort
    assert episodes(high_first.text) == [
        t.id for t in sorted(in_seed, key=lambda t: (-t.ret, t.id))
    ]
    picked = client.get(f"/trajectories?episode={in_seed[-1].id}")
    assert f"seed {in_seed[-1].seed}</span>" in picked.text
    assert "<b>Task</b>" not in every.text


def test_model_output_is_escaped(eval_dir):
    """A trajectory whose reply holds markup renders it as text, never as HTML."""
    path = eval_dir / "trajectories.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    records[0]["steps"][0]["reply"] = "<script>alert('x')</script>"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    client, _store, _pairs = make_client(eval_dir)
    r = client.get(f"/trajectories?episode={records[0]['episode']}")
    assert r.status_code == 200
    assert "<script>alert(" not in r.text
    assert "&lt;script&gt;alert(" in r.text


def test_bad_labeler_or_pair_mode_is_refused(eval_dir):
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    with pytest.raises(UsageError):
        create_app(folder, store, labeler="tab\tin name")
    with pytest.raises(UsageError):
        create_app(folder, store, labeler="   ")
    with pytest.raises(UsageError):
        create_app(folder, store, pairs="sometimes")
