"""`envkit.hub.upload`: ``apply_push`` carries out a plan, against the Hub stand-in
(tests/hubstub); the commit says which environment it holds (environment and schema digests
in the commit message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.envdir.digest import env_digest, short
from envkit.errors import UsageError
from envkit.hub.plan import PushOptions, plan_push
from envkit.hub.upload import apply_push
from envkit.schemas import path_digests
from tests.hubstub import WRITE_TOKEN


def test_apply_carries_out_the_plan(hub, env_copy, space_id):
    options = PushOptions(repo_id=space_id, token=WRITE_TOKEN, env={"A": "1"})
    with plan_push(env_copy, options) as plan:
        result = apply_push(plan)
    assert result.committed and result.commit_oid == hub.head(space_id)
    assert set(hub.files(space_id)) >= set(plan.added)
    assert result.variables_changed == ["A"]
    # A second plan of the same files has nothing to add, update or delete.
    with plan_push(env_copy, options) as again:
        assert (again.added, again.updated, again.deleted) == ((), (), ())
        assert again.remote is not None and again.variables_changed == ()


def test_a_plan_without_a_token_cannot_be_applied(hub, env_copy):
    options = PushOptions(dry_run=True)  # no token anywhere: a dry run still plans
    with plan_push(env_copy, options) as plan:
        assert plan.creds is None and plan.repo_id.startswith("<your-namespace>/")
        assert hub.requests == []  # without a token nothing is asked of the Hub
        with pytest.raises(UsageError, match="without a Hub token"):
            apply_push(plan)
    assert hub.writes() == []


def test_the_commit_message_carries_both_digests(cli, hub, env_copy: Path, space_id: str):
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN)
    assert r.exit_code == 0, r.output
    summary = hub.space(space_id).commits[hub.head(space_id)]["summary"]
    digests = path_digests(env_copy)  # the same files in the same interpreter: remembered
    assert digests.env == env_digest(env_copy)
    assert digests.schema is not None, digests.schema_note
    assert f"env-digest: {short(digests.env)}" in summary
    assert f"schema-digest: {short(digests.schema)}" in summary
