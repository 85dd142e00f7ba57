"""`envkit label push`: the real huggingface_hub client against the Hub stand-in."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.label import LabelStore, load_eval, select_pairs
from tests.hubstub import READ_TOKEN, WRITE_TOKEN, HubStub


@pytest.fixture(scope="module")
def hub_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubStub]:
    with HubStub.start(tmp_path_factory.mktemp("hub")) as stub:
        yield stub


@pytest.fixture
def hub(hub_server: HubStub, monkeypatch: pytest.MonkeyPatch) -> HubStub:
    hub_server.clear()
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    return hub_server


@pytest.fixture
def labeled(eval_dir: Path) -> Path:
    folder = load_eval(eval_dir)
    store = LabelStore(folder.db_path)
    for p in select_pairs(folder, "all")[:5]:
        left, _ = p.sides(store.salt)
        store.add(
            labeler="ann",
            a=p.a,
            b=p.b,
            left_id=left,
            label="left",
            a_fingerprint=folder.by_id()[p.a].fingerprint,
            b_fingerprint=folder.by_id()[p.b].fingerprint,
        )
    return eval_dir


def test_push_creates_a_dataset_with_card_and_parquet(
    cli, hub: HubStub, labeled: Path, monkeypatch: pytest.MonkeyPatch
):
    import pyarrow.parquet as pq

    monkeypatch.setenv("HF_TOKEN", WRITE_TOKEN)
    result = cli("label", "push", labeled, "--repo-id", "alice/echo-prefs", "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["rows"] == 5 and out["url"] == f"{hub.url}/datasets/alice/echo-prefs"
    assert WRITE_TOKEN not in result.output
    files = hub.dataset_files("alice/echo-prefs")
    assert {"README.md", "data/train.parquet", ".gitattributes"} == set(files)
    card = files["README.md"].decode()
    assert "path: data/train.parquet" in card and "- trl" in card
    table = pq.read_table(io.BytesIO(files["data/train.parquet"]))
    assert table.num_rows == 5
    assert {"prompt", "chosen", "rejected", "agreement"} <= set(table.column_names)
    assert "alice/echo-prefs" not in hub.state.spaces  # a dataset, not a Space
    # a second push of the same data changes nothing: no new commit
    commits = len(hub.state.datasets["alice/echo-prefs"].commits)
    again = cli("label", "push", labeled, "--repo-id", "alice/echo-prefs")
    assert again.exit_code == 0, again.output
    assert len(hub.state.datasets["alice/echo-prefs"].commits) == commits


def test_push_token_rules(cli, hub: HubStub, labeled: Path, monkeypatch: pytest.MonkeyPatch):
    result = cli("label", "push", labeled, "--repo-id", "alice/p1")
    assert result.exit_code == 2 and "Not logged in" in result.stderr
    assert hub.writes() == []
    result = cli("label", "push", labeled, "--repo-id", "alice/p1", "--token", "hf_wrong")
    assert result.exit_code == 2 and "401" in result.stderr
    result = cli("label", "push", labeled, "--repo-id", "envkit-org/p1", "--token", READ_TOKEN)
    assert result.exit_code == 2 and "403" in result.stderr
    assert READ_TOKEN not in result.output
    result = cli("label", "push", labeled, "--repo-id", "not a repo", "--token", WRITE_TOKEN)
    assert result.exit_code == 2 and "not a valid dataset id" in result.stderr


def test_push_without_preferences_says_label_first(
    cli, hub: HubStub, eval_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HF_TOKEN", WRITE_TOKEN)
    result = cli("label", "push", eval_dir, "--repo-id", "alice/empty")
    assert result.exit_code == 2 and "No preference pairs" in result.stderr
    assert hub.writes() == []
