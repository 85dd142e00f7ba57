"""A Space commit says which environment it holds: `envkit push` against the Hub stand-in
(tests/hubstub) writes the environment and schema digests into the commit message."""

from __future__ import annotations

from pathlib import Path

from envkit.envdir.digest import env_digest, short
from envkit.schemas import path_digests
from tests.hubstub import WRITE_TOKEN


def test_the_commit_message_carries_both_digests(cli, hub, env_copy: Path, space_id: str):
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN)
    assert r.exit_code == 0, r.output
    summary = hub.space(space_id).commits[hub.head(space_id)]["summary"]
    digests = path_digests(env_copy)  # the same files in the same interpreter: remembered
    assert digests.env == env_digest(env_copy)
    assert digests.schema is not None, digests.schema_note
    assert f"env-digest: {short(digests.env)}" in summary
    assert f"schema-digest: {short(digests.schema)}" in summary
