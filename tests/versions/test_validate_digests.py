"""`envkit validate` reports both digests; the schema digest read from the server it played
equals the one computed from the directory without a server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.envdir.digest import env_digest, short
from envkit.schemas import path_digests
from envkit.validation import validate
from envkit.validation.report import render

pytestmark = pytest.mark.slow  # serves the environment


def test_report_carries_the_digests_of_the_run(echo_env: Path, copy_env) -> None:
    env = copy_env(echo_env)
    report = validate(env, select=["EK401"], episodes=1, train_path=False)
    assert report.runtime_ran
    versions = json.loads(render(report, "json"))["versions"]
    assert versions["env_digest"] == env_digest(env)
    assert versions["schema_digest"] == path_digests(env).schema  # wire == in-process
    assert versions["schema_digest_note"] is None
    text = render(report, "text")
    assert f"schema-digest: {short(versions['schema_digest'])}" in text
