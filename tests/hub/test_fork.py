"""`envkit fork` against the Hub stand-in, and the --help pages of push and fork."""

from __future__ import annotations

from tests.hubstub import WRITE_TOKEN


def test_fork_copies_files_and_variables(cli, hub, space_id):
    src = hub.seed_space("envkit-org/source-env", {"Dockerfile": b"FROM x\n", "app.py": b"a\n"})
    src.variables["LEVEL"] = {"value": "2", "updatedAt": "2026-01-01T00:00:00.000Z"}
    r = cli(
        "fork", "envkit-org/source-env", space_id.split("/")[1], "--private", "--token", WRITE_TOKEN
    )
    assert r.exit_code == 0, r.output
    assert hub.files(space_id)["app.py"] == b"a\n"
    assert hub.space(space_id).private is True
    assert hub.space(space_id).variables["LEVEL"]["value"] == "2"
    assert f"/spaces/{space_id}" in r.output and WRITE_TOKEN not in r.output
    again = cli("fork", "envkit-org/source-env", space_id, "--token", WRITE_TOKEN)
    assert again.exit_code == 2 and "already exists (409" in again.output


def test_fork_of_a_missing_space(cli, hub):
    r = cli("fork", "nobody/missing", "alice/copy", "--token", WRITE_TOKEN)
    assert r.exit_code == 2 and "`nobody/missing` was not found (404)" in r.output


def test_help_pages_have_examples(cli):
    for command in ("push", "fork"):
        r = cli(command, "--help")
        assert r.exit_code == 0 and "Examples:" in r.output
    assert "--dry-run" in cli("push", "--help").output
