"""envkit's checks as OpenEnv 0.10 graders (envkit.bridges.openenv_graders), against the real
`openenv` 0.10 in the test venv: the graders satisfy OpenEnv's Grader protocol and registry;
played against a served guess template they answer from one envkit run; and OpenEnv's own
`validate` (through envkit.bridges.openenv_validate, which loads the entry points) reports
them PASS on the template and FAIL for `semantic.floor_gap` on a copy that always pays 1.0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace

import pytest

from envkit.bridges.rfc008 import IMPLEMENTED

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ov() -> SimpleNamespace:
    """OpenEnv 0.10's validation API and envkit's bridges to it, imported when a test of this
    module first runs, not when the module is collected: importing openenv costs ~3 s of CPU
    (it imports gradio), which every xdist worker would pay just to collect this module."""
    pytest.importorskip("openenv.validation")
    from openenv.validation import Lane
    from openenv.validation.graders import ENTRY_POINT_GROUP, Grader, Subject
    from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
    from openenv.validation.policy import load_policy
    from openenv.validation.runner import default_grader_registry

    from envkit.bridges import openenv_graders
    from envkit.bridges.openenv_validate import add_entry_point_graders

    return SimpleNamespace(
        Lane=Lane,
        ENTRY_POINT_GROUP=ENTRY_POINT_GROUP,
        Grader=Grader,
        Subject=Subject,
        OpenEnvYamlParser=OpenEnvYamlParser,
        load_policy=load_policy,
        default_grader_registry=default_grader_registry,
        openenv_graders=openenv_graders,
        GRADERS=openenv_graders.GRADERS,
        add_entry_point_graders=add_entry_point_graders,
    )


@dataclass
class _Running:
    """The part of OpenEnv's RunningSubject the graders read."""

    base_url: str


def _entry_points_dir(tmp: Path, group: str) -> Path | None:
    """A directory to put on the path so `importlib.metadata` sees envkit's graders: None when
    the installed rl-envkit already declares them (CI installs it from pyproject.toml), else a
    stand-in distribution whose entry_points.txt is pyproject.toml's table."""
    if any(ep.value.startswith("envkit.") for ep in entry_points(group=group)):
        return None
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    dist = tmp / "eps" / "envkit_graders_standin-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: envkit-graders-standin\nVersion: 0\n"
    )
    lines = [f"{k} = {v}" for k, v in eps[group].items()]
    (dist / "entry_points.txt").write_text(f"[{group}]\n" + "\n".join(lines) + "\n")
    return dist.parent


@pytest.mark.slow  # imports openenv: seconds of CPU
def test_graders_fit_openenvs_registry(ov):
    registry = ov.default_grader_registry(ov.load_policy("v2"))
    for grader in ov.GRADERS.values():
        assert isinstance(grader, ov.Grader)
        registry.register(grader)
    assert sorted(ov.GRADERS) == sorted(IMPLEMENTED)
    policy_ids = ov.load_policy("v2").entries_for_lane(ov.Lane.LOCAL)
    assert set(ov.GRADERS) <= set(policy_ids)


@pytest.mark.slow  # imports openenv: seconds of CPU
def test_entry_points_load_into_openenvs_registry(ov, tmp_path, monkeypatch):
    extra = _entry_points_dir(tmp_path, ov.ENTRY_POINT_GROUP)
    if extra is not None:
        monkeypatch.syspath_prepend(str(extra))
    registry = ov.default_grader_registry(ov.load_policy("v2"))
    assert sorted(ov.add_entry_point_graders(registry)) == sorted(IMPLEMENTED)
    assert registry.get("semantic.floor_gap") is ov.GRADERS["semantic.floor_gap"]
    assert ov.add_entry_point_graders(registry) == []  # a second load adds nothing


@pytest.fixture(scope="module")
def guess_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guess template as generated, locked (`network.mode: no-network`: offline, the
    bridge skips that one probe with its reason, docs/openenv-validate.md)."""
    from envkit.scaffold import init_project

    result = init_project("guess-env", template="guess", output_dir=tmp_path_factory.mktemp("g"))
    assert result.lock.status == "written", result.lock.message
    assert "mode: no-network" in (result.path / "openenv.yaml").read_text()
    return result.path


def _always_max(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".venv", "__pycache__"))
    module = dest / "server" / "guess_env_environment.py"
    text = module.read_text()
    last = "        return self._observation(text, hint, reward, done=self._done)"
    assert last in text
    module.write_text(text.replace(last, last.replace("reward,", "1.0,")))
    return dest


@pytest.mark.slow
def test_graders_answer_from_one_envkit_run(ov, guess_env, monkeypatch):
    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server

    calls = []
    openenv_graders = ov.openenv_graders
    real = openenv_graders.validate

    def counted(*args, **kwargs):
        calls.append(kwargs.get("url"))
        return real(*args, **kwargs)

    monkeypatch.setattr(openenv_graders, "validate", counted)
    monkeypatch.setattr(openenv_graders, "_RUNS", {})
    server = start_server(guess_env, read_manifest(guess_env).app, python=sys.executable)
    try:
        server.wait_healthy(120)
        subject = ov.Subject(
            root=guess_env,
            manifest=ov.OpenEnvYamlParser().parse(guess_env),
            image_ref=None,
            running=_Running(server.url),
            outputs_dir=guess_env / "outputs",
        )
        results = {cid: g.run(subject) for cid, g in ov.GRADERS.items()}
    finally:
        server.stop()
    assert calls == [server.url]
    statuses = {cid: r.status.value for cid, r in results.items()}
    assert all(s == "pass" for s in statuses.values()), statuses
    floor = results["semantic.floor_gap"]
    assert floor.evidence == ["EK505 reward-hackable: passed"]
    assert floor.measured == {"envkit_codes": ["EK505"]}


def _bridged(target: Path, eps: Path | None) -> tuple[int, dict]:
    path = [str(ROOT)] + ([str(eps)] if eps else []) + [os.environ.get("PYTHONPATH", "")]
    proc = subprocess.run(
        [sys.executable, "-m", "envkit.bridges.openenv_validate", str(target)]
        + ["--level", "semantic", "--json"],
        capture_output=True,
        text=True,
        timeout=1800,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(p for p in path if p)},
    )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(
            f"no JSON (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    for result in report["results"]:  # the image OpenEnv built is left behind by it
        image = (result.get("measured") or {}).get("image_ref")
        if isinstance(image, str) and image.startswith("sha256:"):
            # its parent layers stay: the template's dependency layers are the build cache
            # of the other Docker tests of the template
            subprocess.run(
                ["docker", "image", "rm", "-f", "--no-prune", image],
                capture_output=True,
                timeout=120,
            )
    return proc.returncode, {r["check_id"]: r for r in report["results"]}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_openenv_validate_runs_envkits_graders(ov, guess_env, docker_engine, tmp_path):
    eps = _entry_points_dir(tmp_path, ov.ENTRY_POINT_GROUP)
    code, results = _bridged(guess_env, eps)
    ours = {cid: results[cid]["status"] for cid in IMPLEMENTED}
    assert sum(s == "pass" for s in ours.values()) >= 5, ours
    assert all(s == "pass" for s in ours.values()), json.dumps(results, indent=1)[:4000]
    not_implemented = [
        cid for cid in IMPLEMENTED if "not implemented" in json.dumps(results[cid]["evidence"])
    ]
    assert not_implemented == []
    assert results["runtime.startup"]["status"] == "pass"
    network = results["runtime.network_policy"]
    assert network["status"] in ("pass", "skip"), network
    if network["status"] == "skip":  # no registry for OpenEnv's helper image: says so
        assert "could not be pulled" in network["evidence"][0]
        assert "docker pull python:3.12-slim@sha256:" in network["remediation"]
    assert code == 0

    code, results = _bridged(_always_max(guess_env, tmp_path / "always-max"), eps)
    assert results["semantic.floor_gap"]["status"] == "fail", results["semantic.floor_gap"]
    assert results["semantic.canary_floor"]["status"] == "fail"
    assert "EK505 reward-hackable" in results["semantic.floor_gap"]["evidence"][0]
    assert code == 1


def _future(args: list[str], eps: Path | None, timeout_s: float) -> subprocess.CompletedProcess:
    """``python -m tests.bridges.future_openenv ARGS``: a fresh process, so the OpenEnv it runs
    is the later release from the start (the bridge asks it once per process)."""
    path = [str(ROOT)] + ([str(eps)] if eps else []) + [os.environ.get("PYTHONPATH", "")]
    return subprocess.run(
        [sys.executable, "-m", "tests.bridges.future_openenv", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(p for p in path if p)},
    )


@pytest.mark.slow  # two processes that import openenv
def test_a_later_openenv_that_loads_the_entry_points_and_grades_shared_ids(ov, guess_env, tmp_path):
    """A release whose runner calls `load_entry_points` and grades two of envkit's ids itself:
    its registry builds (no duplicate-id error), OpenEnv's own graders answer the shared ids,
    envkit's the rest, and `openenv validate` runs to its report."""
    from tests.bridges.future_openenv import OWN_IDS

    eps = _entry_points_dir(tmp_path, ov.ENTRY_POINT_GROUP)
    proc = _future(["--registry"], eps, timeout_s=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout)
    graded_by = seen["graded_by"]
    assert {cid: graded_by[cid] for cid in OWN_IDS} == dict.fromkeys(OWN_IDS, "OwnGrader")
    ours = set(IMPLEMENTED) - set(OWN_IDS)
    assert {cid: graded_by[cid] for cid in ours} == dict.fromkeys(ours, "EnvkitGrader")
    assert {f"envkit.deferred:{cid}" for cid in OWN_IDS} <= set(seen["ids"])

    proc = _future([str(guess_env), "--level", "static", "--json"], eps, timeout_s=600)
    assert "already registered" not in proc.stderr, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    statuses = {r["check_id"]: r["status"] for r in report["results"]}
    assert statuses.get("static.manifest") == "pass", statuses
    assert proc.returncode == 0, (statuses, proc.stderr[-3000:])
