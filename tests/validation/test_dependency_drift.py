"""Dependency drift (EK222, EK223) on a real guess-template environment with a real `uv lock`,
and the `envkit run --docker` hint for a container that exits on ModuleNotFoundError.

The undeclared module is `junit_xml`: installed in the test venv (junit-xml is an envkit
dependency) and not brought by `openenv`, so the local server imports it and the image would
not. `yaml` is the counter-example: PyYAML comes with `openenv`, so the image has it too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envkit.deps import absent_requirements
from envkit.validation import validate

ENV_MODULE = "server/guess_env_environment.py"


@pytest.fixture(scope="module")
def locked_guess(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A guess-template environment with its real uv.lock (`uv lock`, needs PyPI), made once."""
    from envkit.scaffold import init_project

    result = init_project(
        "guess-env", template="guess", output_dir=tmp_path_factory.mktemp("g"), skills=False
    )
    assert result.lock.status == "written", result.lock.message
    return result.path


@pytest.fixture
def guess(locked_guess: Path, copy_env) -> Path:
    return copy_env(locked_guess)


@pytest.fixture(scope="module")
def relocked_junit(locked_guess: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guess environment with `junit-xml>=1.9` declared and `uv lock` run again, made
    once for the tests that start from a relocked dependency (each `uv lock` asks the index)."""
    import shutil

    root = tmp_path_factory.mktemp("relocked") / locked_guess.name
    shutil.copytree(locked_guess, root)
    _declare(root, "junit-xml>=1.9")
    _relock(root)
    return root


@pytest.fixture
def junit_locked(relocked_junit: Path, copy_env) -> Path:
    return copy_env(relocked_junit)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture drift: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def _codes(root: Path) -> list[tuple[str, str, int | None]]:
    report = validate(root, static=True)
    return [
        (f.code, f.location.file, f.location.line)
        for f in report.findings
        if f.code in ("EK222", "EK223")
    ]


def _checks(root: Path) -> dict[str, object]:
    return {c.code: c for c in validate(root, static=True).checks}


def _declare(root: Path, requirement: str) -> None:
    _edit(
        root / "pyproject.toml",
        '"openenv>=0.10,<0.11",',
        f'"openenv>=0.10,<0.11",\n    "{requirement}",',
    )


def _import_after_random(root: Path, statement: str) -> int:
    """Add ``statement`` after the environment module's ``import random``; its 1-based line."""
    text = (root / ENV_MODULE).read_text()
    _edit(root / ENV_MODULE, "import random\n", f"import random\n{statement}\n")
    return text[: text.index("import random\n")].count("\n") + 2


def _relock(root: Path) -> None:
    from envkit.scaffold import lock_environment

    result = lock_environment(root)
    assert result.status == "written", result.message


def test_generated_template_is_clean_and_both_rules_ran(guess: Path) -> None:
    checks = _checks(guess)
    assert _codes(guess) == []
    assert checks["EK222"].status == "passed" and checks["EK223"].status == "passed"


# -- EK223 ------------------------------------------------------------------------------------


def test_module_installed_only_locally_is_located(guess: Path) -> None:
    line = _import_after_random(guess, "import junit_xml")
    report = validate(guess, static=True)
    found = [f for f in report.findings if f.code == "EK223"]
    assert [(f.location.file, f.location.line) for f in found] == [(ENV_MODULE, line)]
    assert "`junit_xml`" in found[0].message and "ModuleNotFoundError" in found[0].message
    assert not report.passed


def test_module_imported_through_a_local_helper_counts(guess: Path) -> None:
    """Scope is what the app imports, followed through the environment's own modules."""
    (guess / "server" / "helpers.py").write_text("import os\n\nimport junit_xml\n")
    _edit(guess / ENV_MODULE, "import random\n", "import random\n\nfrom . import helpers\n")
    assert _codes(guess) == [("EK223", "server/helpers.py", 3)]


def test_scripts_outside_the_server_do_not_count(guess: Path) -> None:
    for rel in ("inference.py", "tests/test_environment.py", "server/unused_script.py"):
        path = guess / rel
        path.write_text("import junit_xml\n" + (path.read_text() if path.exists() else ""))
    assert _codes(guess) == []


def test_module_brought_by_a_declared_dependency_is_no_finding(guess: Path) -> None:
    # PyYAML is a requirement of openenv: the image installs it with openenv
    _edit(guess / ENV_MODULE, "import random\n", "import random\nimport yaml\n")
    assert _codes(guess) == []


def test_development_only_dependency_is_reported(guess: Path) -> None:
    # pytest is in the template's `dev` group, which `uv sync --no-dev` leaves out of the image
    line = _import_after_random(guess, "import pytest")
    report = validate(guess, static=True)
    found = [f for f in report.findings if f.code == "EK223"]
    assert [(f.location.file, f.location.line) for f in found] == [(ENV_MODULE, line)]
    assert "only for development" in found[0].message


def test_own_package_and_openenv_imports_are_never_findings(guess: Path) -> None:
    _edit(
        guess / ENV_MODULE,
        "import random\n",
        "import random\nimport guess_env\nimport openenv.core\n",
    )
    assert _codes(guess) == []


def test_declared_and_relocked_module_is_clean(junit_locked: Path) -> None:
    _edit(junit_locked / ENV_MODULE, "import random\n", "import random\nimport junit_xml\n")
    assert _codes(junit_locked) == []


def test_uninstalled_declared_dependency_skips_the_import_check(guess: Path) -> None:
    _declare(guess, "envkit-test-never-installed>=1")
    checks = _checks(guess)
    assert checks["EK223"].status == "skipped"
    assert "envkit-test-never-installed" in checks["EK223"].reason


# -- EK222 ------------------------------------------------------------------------------------


def test_dependency_added_without_relock_is_flagged_by_uv(guess: Path) -> None:
    _declare(guess, "junit-xml>=1.9")  # in uv's cache: uv decides offline
    report = validate(guess, static=True)
    found = [f for f in report.findings if f.code == "EK222"]
    assert [(f.location.file, f.location.line) for f in found] == [("uv.lock", None)]
    assert "`uv lock --check --offline`" in found[0].message


def test_lock_check_falls_back_to_names_when_uv_cannot_decide_offline(guess: Path) -> None:
    # a requirement no index or cache has: uv cannot resolve offline, the names still differ
    _declare(guess, "envkit-test-never-installed>=1")
    report = validate(guess, static=True)
    found = [f for f in report.findings if f.code == "EK222"]
    assert len(found) == 1
    assert "`envkit-test-never-installed` is not in the lock" in found[0].message
    assert "requirement names compared" in found[0].message


def test_removed_dependency_is_flagged_by_names(junit_locked: Path) -> None:
    from envkit.deps import _compare_names, check_lock
    from envkit.envdir.toml import read_pyproject

    _edit(junit_locked / "pyproject.toml", '\n    "junit-xml>=1.9",', "")
    data, _ = read_pyproject(junit_locked)
    assert check_lock(junit_locked, data["project"]).state == "stale"  # uv's answer
    names = _compare_names(junit_locked, data["project"], "test")
    assert (names.state, names.removed) == ("stale", ("junit-xml",))


def test_added_dependency_relocked_is_clean(junit_locked: Path) -> None:
    assert "junit-xml" in (junit_locked / "uv.lock").read_text()
    assert _codes(junit_locked) == []


def test_lock_check_is_bounded_in_time(guess: Path) -> None:
    from envkit.deps import check_lock
    from envkit.envdir.toml import read_pyproject

    _declare(guess, "junit-xml>=1.9")
    data, _ = read_pyproject(guess)
    out = check_lock(guess, data["project"], timeout_s=0.001)
    assert (out.state, out.method, out.added) == ("stale", "names", ("junit-xml",))
    assert "took over" in out.detail


# -- the `envkit run --docker` hint -------------------------------------------------------------


def _crash_log(tmp_path: Path, source: str) -> str:
    """The log of a real Python process that dies the way a container's server does."""
    (tmp_path / "app.py").write_text(source)
    proc = subprocess.run(
        [sys.executable, "-c", "import app"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    return "INFO:     Started server process [1]\n" + proc.stderr


def test_hint_for_missing_third_party_module_names_the_real_fix(tmp_path: Path) -> None:
    from envkit.container.run import missing_module_hint

    log = _crash_log(tmp_path, "import envkit_test_absent_module\n")
    assert "ModuleNotFoundError: No module named 'envkit_test_absent_module'" in log
    hint = missing_module_hint(log)
    assert hint is not None
    assert "`envkit_test_absent_module`" in hint
    assert "`[project] dependencies`" in hint and "`uv lock`" in hint and "--build" in hint
    assert "shows it faster" not in hint  # the old advice: the local venv hides the error


def test_hint_for_the_layout_module_points_at_the_dockerfile(tmp_path: Path) -> None:
    from envkit.container.run import missing_module_hint

    hint = missing_module_hint(_crash_log(tmp_path, "from models import Action\n"))
    assert hint is not None and "Dockerfile" in hint and "uv lock" not in hint


def test_other_crashes_keep_the_generic_hint(tmp_path: Path) -> None:
    from envkit.container.run import missing_module_hint

    assert missing_module_hint(_crash_log(tmp_path, "raise RuntimeError('boom')\n")) is None
    assert missing_module_hint("") is None


def test_fixture_module_is_really_installed_and_not_brought_by_openenv() -> None:
    """The premise of the EK223 tests above."""
    from importlib import metadata

    requires = " ".join(metadata.requires("openenv") or [])
    assert metadata.distribution("junit-xml") and "junit" not in requires
    assert "pyyaml" in requires.lower()


def test_absent_requirements_names_only_what_is_not_installed() -> None:
    requires = ["pytest>=8", "envkit-surely-absent-dist", 'other-absent; python_version < "3"']
    assert absent_requirements(sys.executable, requires) == ["envkit-surely-absent-dist"]
    assert absent_requirements("/nonexistent/python", requires) == []


def _dist(site: Path, name: str, *, requires: str = "", module: str = "") -> None:
    """Install ``name`` 1.0 into ``site`` by hand: its metadata and, if given, ``module``."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    (info / "METADATA").write_text(meta + (f"Requires-Dist: {requires}\n" if requires else ""))
    (info / "top_level.txt").write_text(f"{module}\n" if module else "")
    if module:
        (site / f"{module}.py").write_text("")


def test_a_remembered_scan_follows_the_files_and_the_installed_packages(tmp_path: Path) -> None:
    """find_undeclared remembers a scan for the process: editing an import, or installing
    the distribution that provides it, gives a fresh answer, never the remembered one."""
    from envkit.deps import find_undeclared

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    (site,) = venv.glob("lib/python*/site-packages")
    _dist(site, "base-dist")
    root = tmp_path / "env"
    (root / "server").mkdir(parents=True)
    app = root / "server" / "app.py"
    app.write_text("import extra_mod\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "env"\nversion = "0"\ndependencies = ["base-dist"]\n'
    )

    def scan() -> list[str]:
        found = find_undeclared(
            root, python, ["server/app.py"], requires=["base-dist"], first_party=["server"]
        )
        assert not found.skipped, found.skipped
        return [u.module for u in found.undeclared]

    assert scan() == ["extra_mod"]
    assert scan() == ["extra_mod"]  # remembered: the same answer
    app.write_text("import other_mod\n")
    assert scan() == ["other_mod"]  # the file changed
    # base-dist 1.0 now requires extra-dist, which provides other_mod: nothing undeclared
    (site / "base_dist-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: base-dist\nVersion: 1.0\nRequires-Dist: extra-dist\n"
    )
    _dist(site, "extra-dist", module="other_mod")
    assert scan() == []
