"""`envkit validate --docker` (the container lane, issue #14) against a real Docker engine.

Fixtures in tests/container/envs/ are overlays on the session's echo environment: their
Dockerfiles start `FROM {base}` (the session's echo image), so each builds in seconds. Each
must give exactly its finding among the runtime codes (EK4xx/EK5xx; static EK1xx-EK3xx
findings about the overlay itself are not the lane's business and are deselected), and
nothing envkit created may be left: no container, no network, no image.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.container._engine import listed_containers
from tests.helpers import shipped_templates

pytestmark = [
    pytest.mark.docker,
    pytest.mark.usefixtures("docker_engine"),
    pytest.mark.timeout(900),
]

REPO = Path(__file__).resolve().parents[2]
ENVS = Path(__file__).with_name("envs")
RUNTIME = ["EK4", "EK5"]
NOTHING = {"containers": [], "networks": [], "images": []}


def base_id(built_echo) -> str:
    return str(built_echo.result.image_id)


def _overlay(built_echo, name: str, dest: Path) -> Path:
    """A copy of the session's echo environment with fixture ``name`` laid over it."""
    path = dest / name
    shutil.copytree(built_echo.path, path)
    for item in (ENVS / name).iterdir():
        target = path / item.name
        text = item.read_text(encoding="utf-8")
        if item.name == "Dockerfile":
            text = text.replace("{base}", built_echo.tag)
        target.write_text(text, encoding="utf-8")
    return path


#: RFC 008 keys each fixture declares in ``validation:`` (added after the build: until the
#: manifest layout of issue #11 lands, envkit's manifest model rejects them, and only the
#: lane's own reader needs them).
# The templates declare `network.mode: no-network` (the lane then runs `--network none` and
# reaches the server through the exec relay); the fixtures about the published port declare
# `public` so the port mapping is what is played.
PUBLIC = {"network": {"mode": "public"}}
DECLARE = {
    "loopback": PUBLIC,
    "needs_root": PUBLIC,
    "writes_app": PUBLIC,
    "ignores_no_network": {"network": {"mode": "no-network"}},
    "over_memory": {
        **PUBLIC,
        "resources": {"cpu": 1, "memory_mb": 128, "disk_mb": 256, "episode_timeout_s": 60},
    },
    "slow_start": PUBLIC,
    "crash_start": PUBLIC,
}
#: envkit's own facts a fixture declares (the `envkit:` section).
DECLARE_ENVKIT = {"slow_start": {"startup_timeout_s": 3}}


def _declare(path: Path, keys: dict, envkit_keys: dict | None = None) -> None:
    from ruamel.yaml import YAML

    yaml = YAML()
    manifest = path / "openenv.yaml"
    data = yaml.load(manifest.read_text(encoding="utf-8"))
    data["validation"].update(keys)
    data["envkit"].update(envkit_keys or {})
    with manifest.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)


def _session_root(path: Path) -> str:
    """``/tmp/pytest-of-USER/pytest-N``: the folder every environment of this pytest session
    (all xdist workers) lives under."""
    parts = path.resolve().parts
    for i, part in enumerate(parts):
        if part.startswith("pytest-") and not part.startswith("pytest-of-"):
            return str(Path(*parts[: i + 1]))
    return str(path.resolve().parent)


def _leftovers(dclient, base_id: str, images_before: set[str], env: Path) -> dict[str, list]:
    """What envkit may have created and left: containers it labels (``envkit.managed``) for an
    environment of this pytest session (``env`` is one of them) or build containers of the
    fixtures, networks it labels, and new images built on the session's echo image. Other
    sessions may share this engine at the same time: their containers are not compared."""
    from envkit.container.run import ROOT_LABEL
    from tests.container._util import containers_mentioning

    ours = _session_root(env)
    containers = [
        c
        for c in listed_containers(dclient, {"label": ["envkit.managed=true", "envkit.lane"]})
        if (c.labels.get(ROOT_LABEL) or "").startswith(ours)
    ]
    containers += containers_mentioning(dclient, "about to fail")
    networks = dclient.networks.list(filters={"label": ["envkit.managed"]})
    images = [
        i
        for i in dclient.images.list(all=True)
        if i.id not in images_before
        and i.attrs.get("Parent") == base_id
        and not any("envkit-test-lane" in t for t in i.tags)
    ]
    return {
        "containers": [c.name for c in containers],
        "networks": [n.name for n in networks],
        "images": [i.id for i in images],
    }


def _images(dclient) -> set[str]:
    return {i.id for i in dclient.images.list(all=True)}


def _lane_containers(dclient, root: Path) -> list:
    from docker.errors import NotFound

    filters = {"label": [f"envkit.root={root}", "envkit.lane"]}
    for _ in range(5):  # docker-py inspects each listed container: one may go in between
        try:
            return listed_containers(dclient, filters)
        except NotFound:
            time.sleep(0.2)
    return listed_containers(dclient, filters)


@pytest.fixture(scope="module")
def fixture_images(built_echo, dclient, labels, run_id, tmp_path_factory):
    """Every finding fixture built once: {name: (path, tag)}."""
    from envkit.container import build_image

    dest = tmp_path_factory.mktemp("lane-envs")
    out = {}
    for name in (
        "loopback",
        "needs_root",
        "writes_app",
        "ignores_no_network",
        "over_memory",
        "slow_start",
        "crash_start",
    ):
        path = _overlay(built_echo, name, dest)
        tag = f"envkit-test-lane-{name.replace('_', '-')}:{run_id}"
        build_image(path, tag=tag, labels=labels, check=False)
        _declare(path, DECLARE.get(name, {}), DECLARE_ENVKIT.get(name))
        out[name] = (path, tag)
    return out


@pytest.mark.parametrize(
    "name, code",
    [
        ("loopback", "EK440"),
        ("needs_root", "EK441"),
        ("writes_app", "EK442"),
        ("ignores_no_network", "EK445"),
        ("over_memory", "EK443"),
        ("slow_start", "EK444"),
        ("crash_start", "EK446"),
    ],
)
def test_fixture_gives_exactly_its_finding(fixture_images, built_echo, dclient, name, code):
    from envkit.container import validate_docker

    path, tag = fixture_images[name]
    before = _images(dclient)
    report = validate_docker(path, image=tag, select=RUNTIME, labels={"envkit.test": "lane"})
    assert [f.code for f in report.findings] == [code], report.findings
    finding = report.findings[0]
    assert report.lane == "docker" and not report.passed
    # the exact hardened flags, so the user can reproduce by hand
    assert "--user 65532:65532 --read-only --cap-drop ALL" in finding.message
    assert tag in finding.message and "envkit run --docker --hardened" in finding.message
    if name == "ignores_no_network":
        assert "--network none" in finding.message
    elif name == "over_memory":
        assert "--memory 128m --memory-swap 128m" in finding.message
    elif name == "crash_start":
        assert "envkit_fixture_missing_dependency" in finding.message  # the log tail
        assert "--publish 127.0.0.1::8000" in finding.message
    else:
        assert "--publish 127.0.0.1::8000" in finding.message
    check = next(c for c in report.checks if c.code == code)
    assert check.status == "failed"
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING


def test_echo_template_image_passes_with_zero_findings(built_echo, dclient):
    from envkit.container import validate_docker
    from envkit.validation.report import render

    before = _images(dclient)
    report = validate_docker(built_echo.path, image=built_echo.tag, ignore=["EK210"])
    assert report.findings == [], render(report, "text")
    assert report.lane == "docker"
    ran = {c.code for c in report.checks if c.status == "passed"}
    assert {"EK440", "EK441", "EK442", "EK443", "EK444", "EK446"} <= ran
    assert {"EK402", "EK405", "EK503"} <= ran  # the runtime stage played through the port
    assert '"lane": "docker"' in render(report, "json")
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING


def test_no_network_template_plays_through_the_relay(built_echo, dclient, tmp_path):
    """The echo image under `--network none`: the runtime stage plays through the exec relay
    (nothing published) and the container has only `lo`."""
    from envkit.container import validate_docker

    path = tmp_path / "echo-nn"
    shutil.copytree(built_echo.path, path)
    _declare(path, DECLARE["ignores_no_network"])
    before = _images(dclient)
    report = validate_docker(path, image=built_echo.tag, select=["EK44", "EK40"])
    assert report.findings == [], report.findings
    assert next(c for c in report.checks if c.code == "EK445").status == "passed"
    assert next(c for c in report.checks if c.code == "EK405").status == "passed"
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING


def test_failing_build_leaves_nothing(built_echo, dclient, tmp_path):
    from envkit.container import validate_docker
    from envkit.errors import BuildError

    path = _overlay(built_echo, "failing_build", tmp_path)
    before = _images(dclient)
    with pytest.raises(BuildError) as err:
        validate_docker(path, build_options={"check": False})
    assert "exit" in str(err.value.details or "") or "failed" in err.value.message
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING


def test_cli_sigint_removes_the_container(built_echo, dclient, tmp_path):
    """Ctrl-C while the runtime stage plays: exit 130, the lane's container is gone."""
    path = tmp_path / "echo-int"
    shutil.copytree(built_echo.path, path)
    before = _images(dclient)
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envkit",
            "validate",
            "--docker",
            str(path),
            "--image",
            built_echo.tag,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not _lane_containers(dclient, path.resolve()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the lane never started its container"
            time.sleep(0.2)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert b"Interrupted" in err
    assert _lane_containers(dclient, path.resolve()) == []
    assert _leftovers(dclient, base_id(built_echo), before, built_echo.path) == NOTHING


def test_cli_docker_flags_conflict(tmp_path, built_echo):
    from tests.conftest import Cli

    r = Cli()("validate", "--docker", str(built_echo.path), "--static")
    assert r.exit_code == 2
    assert "--static does not apply to --docker" in r.stderr


@pytest.mark.parametrize("template", shipped_templates())
def test_every_template_image_passes_the_lane(template, dclient, labels, run_id, tmp_path):
    """Each template's image works read-only as an arbitrary uid and passes the container
    lane with 0 findings. The template is generated as the other Docker tests of it generate
    it (name `TEMPLATE-env`, `uv lock`: the same pyproject.toml and uv.lock), and the image
    is removed without its parent layers, so the dependency layers stay in the engine's build
    cache for those tests (and the next run): a fresh build is minutes."""
    from envkit.container import build_image, validate_docker
    from envkit.scaffold import init_project
    from envkit.validation.report import render

    path = init_project(f"{template}-env", template=template, output_dir=tmp_path, lock=True).path
    tag = f"envkit-test-lane-{template}:{run_id}"
    try:
        build_image(path, tag=tag, labels=labels)
        report = validate_docker(path, image=tag)
        assert report.findings == [], render(report, "text")
        assert report.lane == "docker"
    finally:
        with contextlib.suppress(Exception):
            dclient.images.remove(tag, force=True, noprune=True)
    assert _lane_containers(dclient, path.resolve()) == []


def test_a_python_that_differs_from_the_images_is_noted(built_echo, tmp_path):
    """The docker lane notes when the image's Python (its PYTHON_VERSION, else asked of the
    image) and the host interpreter the source lane uses differ in major.minor; the same
    minor version is no note. The host side here is a stand-in interpreter that only
    reports a version (this machine may have no other Python)."""
    from envkit.container.image_python import python_versions_differ

    other = tmp_path / "python3.12"
    other.write_text("#!/bin/sh\necho 3.12.1\n")
    other.chmod(0o755)
    note = python_versions_differ(built_echo.tag, str(other))
    assert note is not None
    assert "The image runs Python 3.11." in note and "(Python 3.12.1)" in note
    assert "`uv venv --python 3.11`" in note and str(other) in note
    assert python_versions_differ(built_echo.tag, sys.executable) is None  # 3.11 here too
    assert python_versions_differ("envkit-no-such-image:0", str(other)) is None
