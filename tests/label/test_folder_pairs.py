"""Reading eval folders (located errors) and pair selection (issue #15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.errors import UsageError
from envkit.label import EvalFolderError, load_eval, select_pairs
from tests.label.conftest import GROUP, SEEDS


def test_real_eval_folder_is_read(eval_dir: Path):
    folder = load_eval(eval_dir)
    assert len(folder.trajectories) == SEEDS * GROUP
    assert sorted(folder.groups()) == list(range(SEEDS))
    assert folder.summary["settings"]["group_size"] == GROUP
    t = folder.trajectories[0]
    # the openai policy's reply is the assistant message; the reset observation the prompt
    assert t.completion_messages()[0] == {"role": "assistant", "content": t.steps[0]["reply"]}
    assert "The episode starts." in t.prompt_messages()[0]["content"]


def test_pair_modes(eval_dir: Path):
    folder = load_eval(eval_dir)
    fps = {t.id: t.fingerprint for t in folder.trajectories}
    every = select_pairs(folder, "all")
    # 6 pairs per group of 4, minus the one pair of identical rollouts (codes 1 and 1)
    assert len(every) == SEEDS * 5
    assert all(fps[p.a] != fps[p.b] for p in every)
    assert all(folder.by_id()[p.a].seed == folder.by_id()[p.b].seed == p.seed for p in every)
    adjacent = select_pairs(folder, "adjacent")
    assert len(adjacent) == SEEDS * 3  # 0-1, 1-2, 2-3 per group; none identical
    assert {(p.a, p.b) for p in adjacent} <= {(p.a, p.b) for p in every}
    disagree = select_pairs(folder, "disagree")
    assert sorted(p.key for p in disagree) == sorted(p.key for p in every)
    ties = [p for p in disagree if p.reward_tie]
    assert ties and disagree[: len(ties)] == ties  # equal returns first
    by_id = folder.by_id()
    assert all(by_id[p.a].ret == by_id[p.b].ret for p in ties)
    with pytest.raises(UsageError, match="unknown pair selection"):
        select_pairs(folder, "best")


def test_sides_are_random_per_pair_but_stable(eval_dir: Path):
    folder = load_eval(eval_dir)
    pairs = select_pairs(folder, "all")
    sides = [p.sides("salt-1") for p in pairs]
    assert sides == [p.sides("salt-1") for p in pairs]
    assert any(s[0] == p.a for s, p in zip(sides, pairs))
    assert any(s[0] == p.b for s, p in zip(sides, pairs))


def _lines(eval_dir: Path) -> list[str]:
    return (eval_dir / "trajectories.jsonl").read_text().splitlines()


def test_truncated_file_gives_a_located_error(eval_dir: Path):
    path = eval_dir / "trajectories.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # cut in the middle of the last record
    with pytest.raises(EvalFolderError) as info:
        load_eval(eval_dir)
    n = len(_lines(eval_dir))
    assert f"trajectories.jsonl:{n}:" in info.value.message
    assert "truncated" in info.value.message


def test_malformed_line_and_missing_field_are_located(eval_dir: Path):
    lines = _lines(eval_dir)
    path = eval_dir / "trajectories.jsonl"
    path.write_text("\n".join(lines[:2] + ["{not json"] + lines[3:]) + "\n")
    with pytest.raises(EvalFolderError, match=r"trajectories\.jsonl:3:"):
        load_eval(eval_dir)
    rec = json.loads(lines[4])
    del rec["seed"]
    path.write_text("\n".join(lines[:4] + [json.dumps(rec)] + lines[5:]) + "\n")
    with pytest.raises(EvalFolderError, match=r"trajectories\.jsonl:5: .*lacks `seed`"):
        load_eval(eval_dir)
    path.write_text("\n".join(lines[:1] + ["[1, 2]"]) + "\n")
    with pytest.raises(EvalFolderError, match=r":2: expected a JSON object"):
        load_eval(eval_dir)


def test_no_group_of_two_says_how_to_make_one(eval_dir: Path):
    lines = _lines(eval_dir)
    firsts = [ln for ln in lines if json.loads(ln)["member"] == 0]
    (eval_dir / "trajectories.jsonl").write_text("\n".join(firsts) + "\n")
    with pytest.raises(EvalFolderError) as info:
        load_eval(eval_dir)
    assert "envkit eval -g 2" in info.value.hint
    assert len(load_eval(eval_dir, require_pairs=False).trajectories) == SEEDS


def test_missing_folder(tmp_path: Path):
    with pytest.raises(UsageError, match="no such eval folder"):
        load_eval(tmp_path / "nope")
    with pytest.raises(EvalFolderError, match=r"has no trajectories\.jsonl"):
        load_eval(tmp_path)


@pytest.mark.parametrize("sub", [[], ["export"], ["stats"]])
def test_cli_errors_exit_2_without_traceback(cli, tmp_path: Path, eval_dir: Path, sub):
    result = cli("label", *sub, tmp_path / "missing")
    assert result.exit_code == 2
    assert "no such eval folder" in result.stderr and "Traceback" not in result.output
    path = eval_dir / "trajectories.jsonl"
    path.write_bytes(path.read_bytes()[:-30])
    result = cli("label", *sub, eval_dir)
    assert result.exit_code == 2
    assert "trajectories.jsonl:" in result.stderr and "truncated" in result.stderr
    assert "Traceback" not in result.output


def test_cli_no_groups_hint(cli, eval_dir: Path):
    lines = _lines(eval_dir)
    (eval_dir / "trajectories.jsonl").write_text(lines[0] + "\n")
    result = cli("label", "stats", eval_dir)
    assert result.exit_code == 2
    assert "envkit eval -g 2" in " ".join(result.stderr.split())


def test_default_folder_is_the_newest_under_evals(
    cli, eval_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import os
    import shutil

    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    shutil.copytree(eval_dir, project / "evals" / "b-new")
    shutil.copytree(eval_dir, project / "evals" / "a-old")
    old = project / "evals" / "a-old" / "trajectories.jsonl"
    os.utime(old, (1, 1))
    monkeypatch.chdir(project)
    result = cli("label", "stats")
    assert result.exit_code == 0, result.output
    assert "b-new" in result.stdout
