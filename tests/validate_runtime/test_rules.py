"""One misbehaviour per runtime rule, each producing exactly its finding (issue #3).

The knobs server is started once; each case writes its mode to the mode file and runs the
runtime stage against the server's URL with the knobs manifest."""

from __future__ import annotations

import pytest

from envkit.manifest import read_manifest
from envkit.validation.runtime import RuntimeTarget, run_runtime

from .conftest import KNOBS, serve_knobs

# mode -> exact set of finding codes (any severity) the runtime stage must report
CASES = {
    "": set(),
    "bad_health": {"EK402"},
    "bad_schema": {"EK403"},
    "bad_metadata": {"EK404"},
    "obs_mismatch": {"EK406"},
    "step_before_reset_crash": {"EK407"},
    "fragile_ws": {"EK409"},
    "raise_long": {"EK410"},
    "reset_random": {"EK411"},
    "reward_random": {"EK412"},
    "seed_ignored": {"EK413"},
    "never_done": {"EK414"},
    "step_count_wrong": {"EK415"},
    "episode_id_ignored": {"EK416"},
    "step_after_done": {"EK417"},
    "reset_fails": {"EK418"},
    "interfere": {"EK419"},
    "nan_reward": {"EK501"},
    "bool_reward": {"EK502"},
    "out_of_range": {"EK503"},
    "constant": {"EK504"},
    "hackable": {"EK505"},
}


def _run(url: str, manifest=None, **kw):
    return run_runtime(RuntimeTarget(url=url, root=None, manifest=manifest, python=None),
                       episodes=kw.pop("episodes", 3), **kw)


@pytest.mark.parametrize("mode", list(CASES), ids=lambda m: m or "clean")
def test_mode_gives_exactly_its_finding(knobs_server, mode):
    server, mode_file = knobs_server
    mode_file.write_text(mode)
    out = _run(server.url, read_manifest(KNOBS))
    codes = {f.code for f in out.findings}
    assert codes == CASES[mode], [(f.code, f.message) for f in out.findings]
    assert all(f.stage == "runtime" for f in out.findings)
    for code in CASES[mode]:
        assert code in out.checks_run
    assert server.alive()


def test_action_raises_is_minimised(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("raise_long")
    out = _run(server.url, read_manifest(KNOBS))
    (f,) = [f for f in out.findings if f.code == "EK410"]
    assert set(f.data["action"]) == {"message"}
    assert len(f.data["action"]["message"]) == 3  # the env raises from 3 characters on
    assert "cannot parse" in f.data["error"]
    assert "`step(" in f.message and "raised" in f.message


def test_determinism_message_names_field_and_values(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("reset_random")
    out = _run(server.url, read_manifest(KNOBS))
    (f,) = out.findings
    assert f.data["field"] == "target"
    assert f.data["first"] != f.data["second"]
    assert "`reset(seed=" in f.message and "`target`" in f.message


def test_slow_step_breaks_latency_budget(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("slow")
    manifest = read_manifest(KNOBS)
    manifest.spec.step_timeout_s = 0.05
    out = _run(server.url, manifest, episodes=1)
    assert {f.code for f in out.findings} == {"EK421"}
    assert out.findings[0].data["p95_s"] > 0.05


def test_pure_url_uses_defaults_and_reports_no_oracle(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("")
    out = _run(server.url, None, episodes=1)
    assert {f.code for f in out.findings} == {"EK507"}
    assert "EK503" in out.checks_run and "EK414" in out.checks_run


def test_same_seed_same_actions(knobs_server):
    """The fuzzer is deterministic: two runs with one seed send the same actions."""
    from envkit.validation import fuzz
    import httpx

    server, _ = knobs_server
    schema = httpx.get(server.url + "/schema").json()["action"]
    a = fuzz.generate_actions(schema, 12, seed=7)
    assert a == fuzz.generate_actions(schema, 12, seed=7)
    assert a != fuzz.generate_actions(schema, 12, seed=8)
    assert all("metadata" not in x and len(x["message"]) <= 40 for x in a)


@pytest.fixture(scope="module")
def lax_server(tmp_path_factory):
    server, _ = serve_knobs(tmp_path_factory.mktemp("lax"), KNOBS_LAX="1")
    yield server
    server.stop(grace_s=1)


def test_invalid_actions_accepted(lax_server):
    out = _run(lax_server.url, read_manifest(KNOBS), episodes=1)
    assert {f.code for f in out.findings} == {"EK408"}
    msg = out.findings[0].message
    assert "required field `message` missing" in msg and "422" in msg


@pytest.fixture(scope="module")
def unlimited_server(tmp_path_factory):
    server, _ = serve_knobs(tmp_path_factory.mktemp("cap"), KNOBS_CAPACITY="100")
    yield server
    server.stop(grace_s=1)


def test_capacity_not_enforced(unlimited_server):
    out = _run(unlimited_server.url, read_manifest(KNOBS), episodes=1)
    assert {f.code for f in out.findings} == {"EK420"}
    assert out.findings[0].data["accepted"] == 65
