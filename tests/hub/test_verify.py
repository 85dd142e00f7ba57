"""`envkit.hub.verify`: ``envkit push --wait`` polls the Space until RUNNING or an error stage,
then checks the app (against the Hub stand-in, tests/hubstub)."""

from __future__ import annotations

from tests.hubstub import WRITE_TOKEN


def test_wait_checks_the_running_app(cli, hub, env_copy, space_id, echo_server):
    hub.seed_space(space_id, {})
    hub.set_host(space_id, echo_server.url)
    hub.set_runtime(space_id, "BUILDING", "RUNNING_BUILDING", "RUNNING")
    r = cli(
        "push",
        env_copy,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "--wait",
        "--wait-timeout",
        "60",
    )
    assert r.exit_code == 0, r.output
    assert "RUNNING" in r.output and echo_server.url in r.output
    hub.set_runtime(space_id, "BUILDING", "BUILD_ERROR")
    (env_copy / "models.py").write_text((env_copy / "models.py").read_text() + "\n# v3\n")
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, "--wait")
    assert r.exit_code == 1, r.output
    assert "BUILD_ERROR" in r.output and "logs=build" in r.output
