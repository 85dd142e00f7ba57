"""The template family end to end: own tests, an oracle episode over openenv-core's client,
`envkit validate` with zero findings, `openenv validate` (issue 6)."""

from __future__ import annotations

import subprocess

import pytest

from envkit.catalog import DEFAULT_TEMPLATE
from envkit.resources import templates_dir
from tests.templates.conftest import SHIPPED, TEMPLATES, WITH_ADAPTER

pytestmark = pytest.mark.timeout(900)


def test_the_template_tests_cover_every_shipped_template() -> None:
    """The lists these tests play come from the templates directory, not from a list typed
    here: every folder with a template.toml (not ``_common``, ``_import``, ``_partials``)."""
    on_disk = {p.parent.name for p in templates_dir().glob("*/template.toml")}
    on_disk -= {name for name in on_disk if name.startswith("_")}
    assert set(SHIPPED) == on_disk and len(SHIPPED) >= 6, (SHIPPED, on_disk)
    assert set(TEMPLATES) == on_disk - {DEFAULT_TEMPLATE}
    adapters = {p.parent.name for p in templates_dir().glob("*/trl_env.py.jinja")}
    assert set(WITH_ADAPTER) == adapters - {DEFAULT_TEMPLATE}


@pytest.mark.parametrize("template", TEMPLATES)
def test_own_tests_pass(built_envs, template):
    env = built_envs[template]
    proc = subprocess.run(
        [env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=env.path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


@pytest.mark.parametrize("template", TEMPLATES)
def test_oracle_episode_over_openenv_client_reaches_max(built_envs, served, template):
    from openenv.core import GenericEnvClient

    from envkit.envdir.manifest import read_manifest
    from envkit.policy import PolicyProcess

    env = built_envs[template]
    spec = read_manifest(env.path).spec
    hi = spec.reward_range[1]
    oracle = PolicyProcess(spec.oracle, env.path, env.python)
    try:
        with GenericEnvClient(base_url=served[template]).sync() as client:
            for seed in spec.seeds:
                result = client.reset(seed=seed)
                rewards = []
                while not result.done:
                    assert len(rewards) < spec.max_steps, "episode longer than max_steps"
                    result = client.step(oracle(result.observation))
                    rewards.append(result.reward)
                assert max(rewards) == hi, (template, seed, rewards[-5:])
                assert all(spec.reward_range[0] <= r <= hi for r in rewards)
    finally:
        oracle.close()


@pytest.mark.parametrize("template", TEMPLATES)
def test_envkit_validate_has_zero_findings(built_envs, template):
    from envkit.validation import validate

    env = built_envs[template]
    report = validate(env.path, python=env.python)
    assert [f"{f.code} {f.message}" for f in report.findings] == []
    assert report.passed
