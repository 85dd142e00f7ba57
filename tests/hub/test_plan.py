"""`envkit.hub`'s two steps: ``plan_push`` (read-only requests, a frozen PushPlan that
renders without network) and ``apply_push`` (the writes), against the Hub stand-in."""

from __future__ import annotations

import dataclasses

import pytest

from envkit.hub.deploy import push
from envkit.hub.plan import PushOptions, PushPlan, plan_push
from tests.hubstub import WRITE_TOKEN


def test_plan_makes_only_reads_and_renders_without_requests(hub, env_copy, space_id):
    options = PushOptions(
        repo_id=space_id, token=WRITE_TOKEN, env={"LEVEL": "3"}, secrets={"API_KEY": "s3cret"}
    )
    with plan_push(env_copy, options) as plan:
        assert isinstance(plan, PushPlan)
        assert hub.writes() == []
        seen = len(hub.requests)
        assert seen > 0  # whoami and the Space lookup
        result = plan.to_result()
        assert len(hub.requests) == seen  # rendering the plan is offline
        assert plan.staged.path.is_dir()
    assert not plan.staged.path.exists()  # the staging directory ends with the block
    assert result.repo_id == space_id and result.created and not result.committed
    assert result.added == sorted(f.path for f in result.files)
    assert result.secret_names == ["API_KEY"] and result.variables["LEVEL"] == "3"
    assert result.variables_changed == sorted(result.variables)


def test_plan_is_frozen_and_its_repr_hides_secrets_and_token(hub, env_copy, space_id):
    options = PushOptions(repo_id=space_id, token=WRITE_TOKEN, secrets={"API_KEY": "s3cret"})
    with plan_push(env_copy, options) as plan:
        with pytest.raises(dataclasses.FrozenInstanceError):
            plan.repo_id = "alice/other"  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            plan.options.dry_run = True  # type: ignore[misc]
        text = repr(plan)
    assert "s3cret" not in text and WRITE_TOKEN not in text
    assert space_id in text


def test_dry_run_result_is_the_rendered_plan(hub, env_copy, space_id):
    options = PushOptions(repo_id=space_id, token=WRITE_TOKEN, dry_run=True)
    with plan_push(env_copy, options) as plan:
        planned = plan.to_result().to_dict()
    dry = push(env_copy, repo_id=space_id, token=WRITE_TOKEN, dry_run=True).to_dict()
    assert dry == planned
    assert dry["dry_run"] is True and hub.writes() == []
