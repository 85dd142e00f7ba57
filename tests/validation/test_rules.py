"""One fixture per runtime rule, each producing exactly its finding (issues #3 and #12).

Most cases switch one misbehaviour of the knobs environment (its mode file) and play the
shared knobs server by URL, so one server start serves many rules; a rule about starting,
hanging or dying has envkit start the server itself (``root``); capacity needs a server of
its own. The rules of OpenEnv 0.10's wire (issue #11 item 4) use the ``v010`` environment
(``fixture``), started by envkit with ``env`` set; the reward-integrity probes of issue
#13 play a ``realworld_*`` environment (``realworld``, started by envkit). A test fails
when a runtime rule has no case here. The clean look-alikes (issue #13 item 3) must give
no finding.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from envkit.envdir import EnvDir
from envkit.findings import Finding, Stage, codes_of
from envkit.validation.options import RunOptions
from envkit.validation.runtime import RuntimeOutcome, RuntimeTarget, run_runtime
from tests.helpers import descendants

from .conftest import KNOBS, serve_knobs

ENVS = KNOBS.parent

Extra = Callable[[RuntimeOutcome, Finding], None]


@dataclass(frozen=True)
class Case:
    """How to make the knobs environment trigger one rule.

    Attributes:
        mode: the knobs misbehaviour (``models.mode()`` in the knobs environment).
        root: envkit starts the server itself (rules about starting, hanging, dying, the
            oracle); otherwise the shared knobs server is played by URL.
        start: ``KNOBS_START`` (a server that cannot start), root mode only.
        unlimited: play a dedicated knobs server with capacity 100 (above the probe limit).
        manifest: ``False``: a pure ``--url`` run without the knobs manifest.
        yaml_edit: ``(old, new)`` text replaced in knobs' openenv.yaml.
        episodes: fuzzed episodes.
        crash: ``module.function`` of a runtime rule module made to raise (an envkit bug).
        extra: further assertions on the outcome and the one finding.
        fixture: another environment under ``envs/`` than knobs, started by envkit (root
            mode) with its own manifest.
        env: environment variables of that server (e.g. ``OPENENV_MODE``).
        realworld: a ``realworld_*`` environment envkit starts itself (its own manifest).
        also: codes the environment gives by design besides the rule's (e.g. EK507 where
            no oracle is declared); documented per row.
    """

    mode: str = ""
    root: bool = False
    start: str = ""
    unlimited: bool = False
    manifest: bool = True
    yaml_edit: tuple[str, str] | None = None
    episodes: int = 3
    crash: str = ""
    extra: Extra | None = None
    fixture: str = ""
    env: tuple[tuple[str, str], ...] = ()
    realworld: str = ""
    also: frozenset[str] = frozenset()


def _says(*parts: str) -> Extra:
    def check(_out: RuntimeOutcome, f: Finding) -> None:
        for part in parts:
            assert part in f.message, (part, f.message)

    return check


def _minimised(_out: RuntimeOutcome, f: Finding) -> None:
    assert set(f.data["action"]) == {"message"}
    assert len(f.data["action"]["message"]) == 3  # the env raises from 3 characters on
    assert "cannot parse" in f.data["error"]
    assert "`step(" in f.message and "raised" in f.message


def _names_field(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["field"] == "target" and f.data["first"] != f.data["second"]
    assert "`reset(seed=" in f.message and "`target`" in f.message


def _start_failed(out: RuntimeOutcome, f: Finding) -> None:
    assert "knobs_missing_dependency" in f.message  # the tail of the server's log
    assert out.checks_run == ["EK401"]


def _crash_reported(out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["check"] == "determinism" and "envkit bug in a check" in f.data["error"]
    assert "`determinism` check" in f.message
    assert {"EK420", "EK505", "EK501"} <= set(out.checks_run)  # later checks still ran


def _accepted_all(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["accepted"] == 65  # the probe limit (64) + 1, all accepted


def _p95_over_budget(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["p95_s"] > 0.05


def _farmed(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["done"] is True and f.data["reward"] == 1.0
    assert f.data["sent"] == {"answer": f.data["sent"]["answer"]} and f.data["seed"] in (0, 1, 2)
    assert "`reset(seed=" in f.message and "`step(" in f.message


def _leaked(field: str, when: str) -> Extra:
    def check(_out: RuntimeOutcome, f: Finding) -> None:
        assert f.data["field"] == field and f.data["when"] == when, f.data
        assert f.data["action"] == {"answer": f.data["value"]} and f.data["reward"] == 1.0
        assert f.rfc008 == "semantic.no_solution_leakage"  # from the rule (issue #13 item 5)
        assert f"`{field}`" in f.message and "`reset(seed=0)`" in f.message

    return check


def _fresh(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["request"] == {"action": {"answer": ""}} and f.data["reward"] == 1.0
    assert "`POST /step`" in f.message


def _ignores(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["comparisons"] >= 5 and len({_key(e["action"]) for e in f.data["examples"]}) >= 2
    assert len({e["reward"] for e in f.data["examples"]}) == 1


def _key(value) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def _seed_control(_out: RuntimeOutcome, f: Finding) -> None:
    assert f.data["field"] == "target" and f.data["first"] != f.data["second"]
    assert "one session reset" in f.message


def _pure_url(out: RuntimeOutcome, f: Finding) -> None:
    assert "without the environment's manifest" in f.message
    assert "EK503" in out.checks_run and "EK414" in out.checks_run


def _production(out: RuntimeOutcome, f: Finding) -> None:
    assert f.severity.value == "info" and "production mode" in f.message
    # episodes still played over /ws; the HTTP /step halves skipped, not failed
    assert {"EK405", "EK407", "EK408", "EK415", "EK416"} <= set(out.checks_run)


def _jsonrpc_both(_out: RuntimeOutcome, f: Finding) -> None:
    assert "`jsonrpc` is null" in f.message and "HTTP 500" in f.message


# rule code -> the case that must produce exactly that rule's finding
# knobs and v010 pay partial credit (the answer's length) on every step: with their oracle
# declared (envkit starts them from their manifest), near misses before the win return more
# than the win (EK513, stalling pays)
STALLS = frozenset({"EK513"})

#: A task no weak policy of envkit solves (a word, a code, a quiz answer): EK523 says a
#: group-relative trainer has no gradient at step 0 (info), besides the row's own finding.
SPARSE = frozenset({"EK523"})

CASES: dict[str, Case] = {
    "EK401": Case(root=True, start="import_error", episodes=2, extra=_start_failed),
    "EK402": Case("bad_health"),
    "EK403": Case("bad_schema"),
    "EK404": Case("bad_metadata"),
    "EK405": Case("bad_state", extra=_says("`step_count`", "after `reset`")),
    "EK406": Case("obs_mismatch", extra=_says("`count`")),
    "EK407": Case("step_before_reset_crash"),
    "EK408": Case("lax", episodes=1, extra=_says("required field `message` missing", "422")),
    "EK409": Case("fragile_ws"),
    "EK410": Case("raise_long", extra=_minimised),
    "EK411": Case("reset_random", extra=_names_field),
    "EK412": Case("reward_random"),
    "EK413": Case("seed_ignored", extra=_seed_control),
    "EK414": Case("never_done"),
    "EK415": Case("step_count_wrong"),
    "EK416": Case("episode_id_ignored"),
    "EK417": Case("step_after_done"),
    "EK418": Case("reset_fails"),
    "EK419": Case("interfere"),
    "EK420": Case(unlimited=True, episodes=1, extra=_accepted_all),
    "EK421": Case(
        "slow",
        yaml_edit=("step_timeout_s: 1.0", "step_timeout_s: 0.05"),
        episodes=1,
        extra=_p95_over_budget,
    ),
    # 2 x step_timeout_s (1.0), at least 2 s
    "EK422": Case("hang", root=True, episodes=2, extra=_says("within 2 s")),
    "EK423": Case("crash", root=True, episodes=2, extra=_says("exited with code 3")),
    "EK424": Case(
        fixture="v010", env=(("V010_MODE", "bad_mcp"),), extra=_jsonrpc_both, also=STALLS
    ),
    "EK425": Case(fixture="v010", env=(("V010_MODE", "no_mcp"),), also=STALLS),
    "EK426": Case(
        fixture="v010", env=(("OPENENV_MODE", "production"),), extra=_production, also=STALLS
    ),
    "EK427": Case(
        fixture="v010",
        env=(("V010_MODE", "half_routes"),),
        extra=_says("/state missing"),
        also=STALLS,
    ),
    "EK428": Case(
        fixture="v010",
        env=(("V010_MODE", "task_500"),),
        extra=_says("`GET /v010/splits`", "500"),
        also=STALLS,
    ),
    "EK430": Case(crash="determinism.check", extra=_crash_reported),
    # every `reset` and `step` answers 10 MB: the stage stops at the first `reset`
    "EK432": Case(fixture="flood", episodes=1, extra=_says("`reset(seed=0)`", "4 MiB", "9.5 MiB")),
    # relative imports: the manifest's `uvicorn server.app:app` exits, the package form serves
    "EK447": Case(
        fixture="declared_relative",
        episodes=1,
        extra=_says("`uvicorn server.app:app in", "attempted relative import", "package form"),
        also=SPARSE,
    ),
    "EK501": Case("nan_reward"),
    "EK502": Case("bool_reward"),
    "EK503": Case("out_of_range", extra=_says("`validation.reward.range` [0, 1]")),
    # judged only when the oracle was played (issue #13: without one a sparse task nobody
    # solved looks the same); the oracle then cannot reach 1 either (EK506)
    "EK504": Case("constant", root=True, episodes=1, also=frozenset({"EK506"})),
    "EK505": Case("hackable"),
    "EK506": Case("oracle_wrong", root=True, episodes=1, extra=_says("server.oracle:policy")),
    "EK507": Case(manifest=False, episodes=1, extra=_pure_url),
    "EK508": Case(realworld="realworld_farming", extra=_farmed, also=SPARSE),
    "EK509": Case(
        realworld="realworld_reveal",
        extra=_leaked("observation.solution", "terminal observation"),
        also=SPARSE,
    ),
    "EK510": Case(realworld="realworld_http_fresh", extra=_fresh, also=SPARSE),
    "EK511": Case("reward_ignores_action", extra=_ignores),
    # a probe plan recorded before the action field was renamed (knobs' stale_plan.json)
    "EK431": Case(
        root=True,
        episodes=1,
        also=STALLS,
        yaml_edit=(
            "  types:\n    tags: [knobs]\n",
            (
                "  types:\n    tags: [knobs]\n  network: {mode: public}\n  execution: {kind: "
                "openenv_ws, probe_path: validation/stale_plan.json, dockerfile: Dockerfile}\n"
            ),
        ),
        extra=_says("`validation/stale_plan.json`", "action 1 of 1", "VALIDATION_ERROR"),
    ),
    # dipg_safety_env (docs/realworld.md): `state.expected_answer`, scored only in a format
    "EK512": Case(
        fixture="realworld_state_leak",
        env=(("STATE_LEAK_MODE", "format"),),
        extra=_says("`state.expected_answer` (after `reset`, seed 0)"),
        also=SPARSE,
    ),
    # the reward-design probes: envs/probe_quiz with one defect per PROBE_MODE
    "EK513": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "stall"),),
        extra=_says("return of 1", "returned 1.8", "stall:near-misses"),
    ),
    "EK514": Case(fixture="probe_quiz", env=(("PROBE_MODE", "format"),), extra=_says("earned 0.5")),
    "EK515": Case(
        fixture="probe_quiz", env=(("PROBE_MODE", "errors"),), extra=_says("error: not a number")
    ),
    "EK516": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "brittle"),),
        extra=_says("a lead-in", "surrounding whitespace", "an equivalent number form"),
        also=SPARSE,
    ),
    "EK517": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "hang"),),
        extra=_says("no answer within 2 s"),
        also=SPARSE,
    ),
    "EK518": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "grow"),),
        extra=_says("bytes a step"),
        also=SPARSE,
    ),
    "EK519": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "leak"),),
        extra=_says("64 KiB a reset"),
        also=SPARSE,
    ),
    "EK520": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "options"),),
        extra=_says('`difficulty="easy"`', '`difficulty="hard"`'),
        also=SPARSE,
    ),
    # envs/probe_code: the grader trusts the child's exit status and its own `==`
    "EK521": Case(
        fixture="probe_code",
        env=(("PROBE_MODE", "exit"),),
        extra=_says("`sys.exit(0)`", "`os._exit(0)`", "always true", "overwriting the tests"),
        also=SPARSE,
    ),
    # envs/probe_code: the grader checks that each output is a positive integer; EK524's
    # corrupted-oracle policies change the source's digits too (`a * b + 6`), also paid
    "EK526": Case(
        fixture="probe_code",
        env=(("PROBE_MODE", "weak"),),
        extra=_says("the constant 1 became 2", "No test tells them apart"),
        also=frozenset({"EK524"}),
    ),
    "EK522": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "reveal"),),
        extra=_says("earned the maximum 1"),
        also=SPARSE,
    ),
    # any non-empty reply earns 0.35: the question-blind policies (the weak ones earn too)
    "EK524": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "anyreply"),),
        extra=_says("earned at least 35% on every seed", "envkit eval"),
    ),
    # a wrong number of six digits or more earns 0.6: found only by the search
    "EK525": Case(
        fixture="probe_quiz",
        env=(("PROBE_MODE", "longnumber"),),
        extra=_says("seeds the search never played", "--policy 'actions:"),
        also=SPARSE,
    ),
    # a seeded code never shown, no oracle (EK507): no weak policy earns anything
    "EK523": Case(
        realworld="realworld_sparse", also=frozenset({"EK507"}), extra=_says("no gradient")
    ),
}

# issue #13: the defect a realworld_* environment shows beyond its CASES row -> (codes, extra)
REALWORLD: dict[str, tuple[set[str], Extra | None]] = {
    # the answer is a field of `state` (no weak policy submits it: EK523)
    "realworld_state_leak": ({"EK509", "EK523"}, _leaked("state.target", "after `reset`")),
    # a secret drawn unseeded that only `state` shows; no oracle declared (EK507); EK523
    "realworld_unseeded": ({"EK411", "EK507", "EK523"}, None),
    # null on every step but the last, then 0.5 whatever the answer: EK504 judged on the
    # numeric rewards; the nulls are EK501; the oracle cannot reach 1 (EK506)
    "realworld_constant": ({"EK501", "EK504", "EK506"}, None),
    # clean look-alikes: no randomness at all (not "seed ignored"); timings and ids that vary
    # on every reply (not determinism or isolation diffs); a sparse task nobody solved (not
    # "constant reward"; it declares no oracle on purpose: EK507). Each is a word or code to
    # find that no weak policy finds: a group-relative trainer gets no gradient (EK523, info)
    "realworld_fixed": ({"EK523"}, None),
    "realworld_timing": ({"EK523"}, None),
    "realworld_sparse": ({"EK507", "EK523"}, None),
    # only the legal moves the observation lists reach the goal, which then pays again
    # (grid_world_env, maze_env); no oracle declared (EK507)
    "realworld_corridor": ({"EK507", "EK508"}, None),
}


def test_every_runtime_rule_has_a_fixture() -> None:
    """Every rule the source lane evaluates has a case here (the container lane's rules have
    theirs in tests/container/test_validate_docker.py)."""
    from envkit.validation.rules import lane_only_codes

    docker_only = lane_only_codes("source")
    assert [c for c in codes_of(Stage.RUNTIME) if c not in docker_only] == sorted(CASES)


@pytest.fixture(scope="module")
def unlimited_server(tmp_path_factory):
    server, _ = serve_knobs(tmp_path_factory.mktemp("cap"), KNOBS_CAPACITY="100")
    yield server
    server.stop(grace_s=1)


def _envdir(case: Case, tmp_path: Path) -> EnvDir | None:
    """The knobs environment as the case declares it: a copy with its edited openenv.yaml."""
    if not case.manifest:
        return None
    if case.yaml_edit is None:
        return EnvDir(KNOBS)
    old, new = case.yaml_edit
    text = (KNOBS / "openenv.yaml").read_text()
    assert old in text, f"fixture drift: {old!r} not in knobs' openenv.yaml"
    copy = shutil.copytree(
        KNOBS, tmp_path / KNOBS.name, ignore=shutil.ignore_patterns("__pycache__")
    )
    (copy / "openenv.yaml").write_text(text.replace(old, new))
    return EnvDir(copy)


def _inject_crash(monkeypatch, dotted: str) -> None:
    import importlib

    module, _, name = dotted.rpartition(".")
    mod = importlib.import_module(f"envkit.validation.rules.{module}")

    def crash(*_a, **_k):
        raise RuntimeError("envkit bug in a check")

    monkeypatch.setattr(mod, name, crash)


@pytest.mark.parametrize("code", list(CASES))
def test_rule_fixture_gives_exactly_its_finding(code, request, monkeypatch, tmp_path):
    case = CASES[code]
    envdir = _envdir(case, tmp_path)
    if case.crash:
        _inject_crash(monkeypatch, case.crash)
    if case.fixture:
        root = KNOBS.parent / case.fixture
        for key, value in case.env:
            monkeypatch.setenv(key, value)
        before = descendants(os.getpid())
        out = run_runtime(
            RuntimeTarget(url=None, envdir=EnvDir(root), python=sys.executable),
            RunOptions(episodes=case.episodes),
        )
        time.sleep(0.2)
        assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    elif case.realworld:
        out = _run_env(case.realworld, case.episodes)
    elif case.root:
        monkeypatch.setenv("KNOBS_MODE", case.mode)
        monkeypatch.setenv("KNOBS_START", case.start)
        monkeypatch.delenv("KNOBS_MODE_FILE", raising=False)
        before = descendants(os.getpid())
        t0 = time.monotonic()
        out = run_runtime(
            RuntimeTarget(url=None, envdir=envdir, python=sys.executable),
            RunOptions(episodes=case.episodes),
        )
        assert time.monotonic() - t0 < 60
        time.sleep(0.2)
        assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    else:
        if case.unlimited:
            server = request.getfixturevalue("unlimited_server")
        else:
            server, mode_file = request.getfixturevalue("knobs_server")
            mode_file.write_text(case.mode)
        out = run_runtime(
            RuntimeTarget(url=server.url, envdir=envdir),
            RunOptions(episodes=case.episodes),
        )
        assert server.alive()
    assert {f.code for f in out.findings} == {code} | case.also, [
        (f.code, f.message) for f in out.findings
    ]
    assert all(f.stage == "runtime" for f in out.findings)
    assert code in out.checks_run
    if case.extra is not None:
        case.extra(out, next(f for f in out.findings if f.code == code))


def _run_env(name: str, episodes: int) -> RuntimeOutcome:
    """Validate a realworld_* environment with envkit starting (and stopping) its server."""
    root = ENVS / name
    before = descendants(os.getpid())
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(root), python=sys.executable),
        RunOptions(episodes=episodes),
    )
    time.sleep(0.2)
    assert descendants(os.getpid()) <= before, "the runtime stage left processes behind"
    return out


@pytest.mark.parametrize("name", list(REALWORLD))
def test_realworld_environment_gives_its_findings(name: str) -> None:
    codes, extra = REALWORLD[name]
    out = _run_env(name, 3)
    assert {f.code for f in out.findings} == codes, [(f.code, f.message) for f in out.findings]
    if extra is not None:
        (first,) = [f for f in out.findings if f.code == "EK509"]
        extra(out, first)
    if name == "realworld_corridor":  # only the exploring policy reached the goal
        (farmed,) = [f for f in out.findings if f.code == "EK508"]
        assert farmed.data["policy"] == "explore", farmed.data
        assert farmed.data["reward"] == 1.0 and farmed.data["done"] is True
        assert "after the explore episode" in farmed.message
    if name == "realworld_sparse":
        assert "EK504" in out.checks_run
        assert any("sparse task" in n for n in out.notes)
    if name == "realworld_fixed":
        assert "EK413" in out.checks_run  # judged, and no randomness found
    if name == "realworld_timing":
        assert {"EK411", "EK419"} <= set(out.checks_run)


def test_leak_tries_play_fresh_sessions(monkeypatch) -> None:
    """EK509 submits each leaf in a fresh session (reasoning_gym_env, docs/realworld.md):
    with ``REVEAL_MODE=next`` another ``reset`` of the same session serves the next word, so
    only a fresh session's ``reset(seed=0)`` scores the revealed answer. That same-session
    reset serving another word is EK411 too (TRL resets the same environment for each rollout),
    and EK412 (the oracle's replay on one session is paid for another word)."""
    monkeypatch.setenv("REVEAL_MODE", "next")
    out = _run_env("realworld_reveal", 3)
    codes = {f.code for f in out.findings}
    assert codes == {"EK509", "EK411", "EK412"} | SPARSE, [
        (f.code, f.message) for f in out.findings
    ]
    (first,) = [f for f in out.findings if f.code == "EK509"]
    _leaked("observation.solution", "terminal observation")(out, first)


def test_call_reset_first_is_one_finding(knobs_server) -> None:
    """repl_env (docs/realworld.md): `step` and `state` before `reset` raise a deliberate
    "Call reset() first."; that is EK407's alone, the malformed-frame probe (EK409) must not
    count it again."""
    server, mode_file = knobs_server
    mode_file.write_text("reset_first")
    out = run_runtime(
        RuntimeTarget(url=server.url, envdir=EnvDir(KNOBS)),
        RunOptions(episodes=2),
    )
    assert {f.code for f in out.findings} == {"EK407"}, [(f.code, f.message) for f in out.findings]
    assert "Call reset() first" in out.findings[0].message
    assert "EK409" in out.checks_run


def test_timings_are_no_determinism_finding(knobs_server) -> None:
    """Clean look-alike (repl_env, docs/realworld.md): `metadata.execution_time` (0.0 after
    `reset` and at the end, a measured float in between) and `state.total_execution_time`
    differ between two runs of one seed; they are timings, not the episode."""
    server, mode_file = knobs_server
    mode_file.write_text("timed")
    out = run_runtime(
        RuntimeTarget(url=server.url, envdir=EnvDir(KNOBS)),
        RunOptions(episodes=2),
    )
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert {"EK411", "EK419"} <= set(out.checks_run)


def test_one_lucky_seed_is_no_reward_hack(knobs_server):
    """Clean look-alike (issue #13): the empty answer wins with seed 0 only; over all seeds
    it stays far below the maximum."""
    server, mode_file = knobs_server
    mode_file.write_text("lucky")
    out = run_runtime(
        RuntimeTarget(url=server.url, envdir=EnvDir(KNOBS)),
        RunOptions(episodes=3),
    )
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert "EK505" in out.checks_run


def test_clean_knobs_has_no_finding(knobs_server):
    server, mode_file = knobs_server
    mode_file.write_text("")
    out = run_runtime(
        RuntimeTarget(url=server.url, envdir=EnvDir(KNOBS)),
        RunOptions(episodes=3),
    )
    assert out.findings == [], [(f.code, f.message) for f in out.findings]
    assert out.capacity == 4  # the knobs server's max_concurrent_envs
    assert "EK430" in out.checks_run


def test_same_seed_same_actions(knobs_server):
    """The fuzzer is deterministic: two runs with one seed send the same actions."""
    import httpx

    from envkit.validation import fuzz

    server, _ = knobs_server
    schema = httpx.get(server.url + "/schema").json()["action"]
    a = fuzz.generate_actions(schema, 12, seed=7)
    assert a == fuzz.generate_actions(schema, 12, seed=7)
    assert a != fuzz.generate_actions(schema, 12, seed=8)
    assert all("metadata" not in x and len(x["message"]) <= 40 for x in a)


@pytest.mark.parametrize(
    ("with_manifest", "says"),
    [
        (True, "the declared oracle `server.oracle:policy` runs from the environment's files"),
        (False, "declare `envkit.oracle` in its openenv.yaml"),
    ],
)
def test_constant_reward_by_url_says_what_would_judge_it(knobs_server, with_manifest, says):
    """A `--url` run cannot play the oracle: the EK504 note names what would let it, as true
    for that run (the manifest's oracle needs the directory; without a manifest, both)."""
    server, mode_file = knobs_server
    mode_file.write_text("constant")
    out = run_runtime(
        RuntimeTarget(
            url=server.url,
            envdir=EnvDir(KNOBS) if with_manifest else None,
        ),
        RunOptions(episodes=1),
    )
    (note,) = [n for n in out.notes if "EK504 was not judged" in n]
    assert says in note and "`envkit validate --url URL PATH`" in note, note
    assert "EK504" not in {f.code for f in out.findings}
