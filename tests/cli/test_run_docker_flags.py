"""`envkit run --docker` refusals that happen before any engine is contacted."""

from __future__ import annotations


def test_hardened_detach_refuses_a_no_network_environment(cli, echo_env):
    # The echo template declares `network.mode: no-network`: a hardened run's port is then an
    # exec relay living in the envkit process, which --detach would end.
    r = cli("run", "--docker", echo_env, "--hardened", "--detach")
    assert r.exit_code == 2, r.output
    assert "--hardened --detach cannot serve a `no-network` environment" in r.stderr
    assert "Drop --detach" in r.stderr
