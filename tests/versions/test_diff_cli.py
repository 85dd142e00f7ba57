"""`envkit diff` on real environments: the guess template, copies of it, a git revision and a
running server. Each directory's schemas come from its own app in the test interpreter (which
has openenv); the same files are read once per session (the schemas are remembered by
environment digest)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.envdir.digest import digests_of
from envkit.schemas import path_digests, schemas_from_url
from envkit.versions.snapshot import from_path, from_url

# every test imports an environment's app in a fresh interpreter (10-20 s on a loaded 2-core
# machine), and one plays the session's echo server
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def guess(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`envkit init g --template guess` (no lock, no skills); tests copy it before editing."""
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("guess")
    return init_project("g", template="guess", output_dir=parent, lock=False, skills=False).path


def _renamed(src: Path, dst: Path) -> Path:
    """A copy of the guess environment whose action field `guess` is called `number`."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    models = dst / "models.py"
    text = models.read_text()
    assert "    guess: int = Field(" in text
    models.write_text(text.replace("    guess: int = Field(", "    number: int = Field("))
    env_py = next((dst / "server").glob("*_environment.py"))
    env_py.write_text(env_py.read_text().replace("action.guess", "action.number"))
    return dst


def test_a_renamed_action_field_is_one_breaking_change(cli, guess: Path, tmp_path: Path) -> None:
    new = _renamed(guess, tmp_path / "g2")
    r = cli("diff", guess, new, "--format", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    breaking = [c for c in data["changes"] if c["impact"] == "breaking"]
    assert len(breaking) == 1, data["changes"]
    assert breaking[0]["field"] == "guess" and breaking[0]["new"] == "number"
    assert data["summary"]["breaking"] == 1
    assert data["old"]["env_digest"] != data["new"]["env_digest"]
    assert data["old"]["schema_digest"] != data["new"]["schema_digest"]
    text = cli("diff", guess, new)
    assert text.exit_code == 1
    assert "action field `guess` renamed to `number`" in text.stdout
    assert "1 breaking, 0 compatible" in text.stdout


def test_schema_digest_ignores_the_readme_and_follows_the_action(guess: Path, tmp_path: Path):
    base = path_digests(guess)
    assert base.schema is not None, base.schema_note
    readme = tmp_path / "readme"
    shutil.copytree(guess, readme)
    (readme / "README.md").write_text((readme / "README.md").read_text() + "\nMore words.\n")
    edited = path_digests(readme)
    assert edited.env != base.env  # the README is uploaded to the Space
    assert edited.schema == base.schema  # but a policy never sees it
    renamed = path_digests(_renamed(guess, tmp_path / "g2"))
    assert renamed.schema is not None and renamed.schema != base.schema


def test_a_new_observation_field_is_compatible_exit_0(cli, guess: Path, tmp_path: Path) -> None:
    new = tmp_path / "g3"
    shutil.copytree(guess, new)
    models = new / "models.py"
    anchor = "    attempts_left: int = Field("
    text = models.read_text()
    assert anchor in text
    extra = '    streak: int = Field(default=0, description="Correct guesses in a row.")\n'
    models.write_text(text.replace(anchor, extra + anchor))
    r = cli("diff", guess, new, "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [(c["area"], c["field"], c["impact"]) for c in data["changes"]] == [
        ("observation", "streak", "compatible")
    ]


def test_a_git_revision_against_the_working_tree(cli, guess: Path, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(guess, repo / "g")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "guess")
    shutil.rmtree(repo / "g")
    _renamed(guess, repo / "g")
    monkeypatch.chdir(repo)
    r = cli("diff", "HEAD:g", "g", "--format", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    assert data["old"]["kind"] == "git" and data["old"]["label"] == "HEAD:g"
    assert [c["field"] for c in data["changes"] if c["impact"] == "breaking"] == ["guess"]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True).stdout
    # REV alone is the current directory at REV
    monkeypatch.chdir(repo / "g")
    assert cli("diff", "HEAD", ".").exit_code == 1


def test_a_directory_and_its_running_server_agree(cli, echo_env: Path, echo_server) -> None:
    """The schemas asked of the app in-process are the ones the server sends on the wire."""
    assert from_path(echo_env).schemas == from_url(echo_server.url).schemas
    r = cli("diff", echo_env, echo_server.url, "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["summary"]["breaking"] == 0
    assert data["new"]["kind"] == "url" and data["new"]["env_digest"] is None
    assert any("reward range not compared" in n for n in data["notes"])
    # an eval run against a bare URL stamps (from the /schema it played by) the same schema
    # digest a diff computes
    stamped = digests_of(None, schemas_from_url(echo_server.url), None)
    assert stamped.schema == from_url(echo_server.url).schema_digest


def test_usage_errors_exit_2(cli, guess: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # not a git repository
    r = cli("diff", "no-such-thing", guess)
    assert r.exit_code == 2
    assert "not inside a git repository" in r.output
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    r = cli("diff", "no-such-rev:g", guess)
    assert r.exit_code == 2 and "not a directory, a URL or a git revision" in r.output
    assert cli("diff", guess).exit_code == 2  # NEW missing
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("diff", empty, guess)  # a directory with nothing to import: a side unread
    assert r.exit_code == 2 and "Cannot read the schemas of" in r.output
