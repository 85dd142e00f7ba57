"""Installing envkit from a checkout, as README says and the release workflow does: the sdist
and the wheel built from this checkout (`uv build`: the wheel is built from the sdist, so a
file the sdist leaves out is missing from the wheel too), their metadata checked with
`twine check --strict` (what PyPI renders and rejects), and the wheel installed into a fresh
venv answering `envkit --version` with its site-packages and listing its bundled templates.
Nothing is uploaded. The wheel test builds (hatchling from the package index into uv's cache)
and installs a venv: the slow tier."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import envkit
from envkit import __version__
from tests.helpers import cached_venv, layered_venv

ROOT = Path(envkit.__file__).resolve().parent.parent


def test_version_names_the_checkout(cli):
    """In the test venv envkit is this checkout: installed editable (scripts/test) or on
    PYTHONPATH (a worktree next to another editable install)."""
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() in (
        f"envkit {__version__} (editable, {ROOT})",
        f"envkit {__version__} (checkout, {ROOT})",
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`uv build` of this checkout: {"sdist": path, "wheel": path}."""
    from envkit.scaffold import uv_binary

    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("envkit is not imported from a checkout")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [uv_binary(), "build", "-q", "--out-dir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (sdist,) = out.glob("rl_envkit-*.tar.gz")
    (wheel,) = out.glob("rl_envkit-*-py3-none-any.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.mark.slow
def test_wheel_carries_templates_skills_and_the_command(dist):
    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    templates = {n for n in names if n.startswith("envkit/_data/templates/")}
    shipped = sorted(p.parent.name for p in (ROOT / "templates").glob("*/template.toml"))
    assert len(shipped) >= 6, shipped  # the checkout's templates, each one in the wheel
    for template in shipped:
        assert f"envkit/_data/templates/{template}/template.toml" in templates, template
    assert "envkit/_data/templates/_partials/trl_snippet.jinja" in templates
    assert "envkit/_data/templates/_common/server/app.py.jinja" in templates
    skills = sorted(p.name for p in (ROOT / "skills").iterdir() if (p / "SKILL.md").is_file())
    assert skills, "no skills in the checkout"
    for skill in skills:
        assert f"envkit/_data/skills/{skill}/SKILL.md" in names, skill
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    dist_info = f"rl_envkit-{__version__}.dist-info"
    entry_points = zipfile.ZipFile(dist["wheel"]).read(f"{dist_info}/entry_points.txt").decode()
    assert "envkit = envkit.cli:main" in entry_points


@pytest.mark.slow
def test_twine_check_passes(dist):
    twine = cached_venv("twine>=6.1\n") / "bin" / "twine"
    proc = subprocess.run(
        [str(twine), "check", "--strict", str(dist["sdist"]), str(dist["wheel"])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


@pytest.mark.slow
def test_installed_wheel_says_where_it_is(dist, tmp_path):
    """The wheel alone (`--no-deps`) in a fresh venv that sees the test venv's dependencies:
    its envkit, not the checkout's, answers, and finds its templates under `_data`."""
    from envkit.scaffold import uv_binary

    python = layered_venv(tmp_path / "venv", Path(sys.prefix))
    # PYTHONPATH would put a checkout before the installed wheel
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [uv_binary(), "pip", "install", "-q", "--no-deps", "--python", python, str(dist["wheel"])],
        check=True, timeout=300,
    )  # fmt: skip
    site = subprocess.run(
        [python, "-c", "import envkit, pathlib; print(pathlib.Path(envkit.__file__).parent)"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env, check=True,
    ).stdout.strip()  # fmt: skip
    assert site.startswith(str(tmp_path / "venv")) and site.endswith("site-packages/envkit")
    version = subprocess.run(
        [python, "-m", "envkit", "--version"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"envkit {__version__} ({site})"
    templates = subprocess.run(
        [python, "-m", "envkit", "templates"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert templates.returncode == 0, templates.stderr
    assert "guess" in templates.stdout + templates.stderr


def test_release_workflow_builds_checks_and_publishes_by_oidc():
    """The release workflow a maintainer runs: a `v*` tag builds, checks and publishes with
    trusted publishing (an OIDC token, no stored secret)."""
    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    # PyYAML reads the bare key `on` as True (YAML 1.1)
    assert flow[True]["push"]["tags"] == ["v*"]
    build = " ".join(step.get("run", "") for step in flow["jobs"]["build"]["steps"])
    assert "uv build" in build and "twine check --strict" in build
    publish = flow["jobs"]["publish"]
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert any(
        step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"]
    )
    assert "password" not in str(publish) and "secrets." not in str(publish)
