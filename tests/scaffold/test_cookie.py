"""External (cookiecutter) templates: `envkit init NAME --template PATH|GIT-URL|gh:owner/repo`."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from envkit.cookie import ABBREVIATIONS, expand_source, is_external, name_context
from envkit.errors import TemplateError, UsageError
from envkit.names import normalise_name
from envkit.scaffold import init_project
from envkit.validation import validate

EXAMPLE = Path(__file__).parent / "fixtures" / "cookiecutter_env"
INNER = "{{ cookiecutter.package_name }}"


def _template(tmp_path: Path) -> Path:
    """A private copy of the example template, to break in a test."""
    dst = tmp_path / "tpl"
    shutil.copytree(EXAMPLE, dst)
    return dst


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _git(*args: str, cwd: Path | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout.strip()


def test_example_template_gives_an_environment_with_no_static_errors(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("init", "myenv", "--template", EXAMPLE, "--output-dir", out, "--no-lock")
    assert result.exit_code == 0, result.output
    env = out / "myenv"
    assert {"openenv.yaml", "server/myenv_environment.py", "validation/runtime.json"} <= _tree(env)
    # envkit's name forms reached the variables the template declares
    assert (
        "class MyenvEnvironment(Environment)" in (env / "server/myenv_environment.py").read_text()
    )
    assert 'name = "myenv"' in (env / "pyproject.toml").read_text()
    # envkit's post-render steps ran: skills, the origin record, validate --static
    assert (env / ".agents" / "skills" / "envkit" / "SKILL.md").is_file()
    assert "envkit validate --static: PASSED: 0 error(s)" in result.stderr
    report = validate(env, static=True)
    assert report.errors == [], [f.message for f in report.errors]
    check = cli("validate", "--static", env)
    assert check.exit_code == 0, check.output
    # nothing in the user's home (tests run with HOME in a temp dir)
    home = Path.home()
    assert not (home / ".cookiecutters").exists()
    assert not (home / ".cookiecutter_replay").exists()
    assert list(out.iterdir()) == [env]


@pytest.mark.slow
def test_example_environment_passes_the_full_validate(tmp_path):
    env = init_project(
        "full-env", template=str(EXAMPLE), output_dir=tmp_path, lock=False, skills=False
    ).path
    report = validate(env, python=sys.executable, episodes=2, timeout_s=240)
    assert report.passed and report.runtime_ran, [f.message for f in report.errors]


def test_set_passes_declared_variables_and_refuses_others(cli, tmp_path):
    result = init_project(
        "word-game",
        template=str(EXAMPLE),
        output_dir=tmp_path,
        lock=False,
        skills=False,
        options={"description": "Say it back."},
    )
    readme = (result.path / "README.md").read_text()
    assert "Say it back." in readme and "# Word Game" in readme
    assert result.path.name == "word-game" and result.names.package == "word_game"
    bad = cli(
        "init", "x", "--template", EXAMPLE, "--set", "colour=red", "-o", tmp_path, "--no-lock"
    )
    assert bad.exit_code == 2
    assert "has no variable `colour`" in bad.stderr and "description" in bad.stderr
    assert not (tmp_path / "x").exists()


def test_template_without_manifest_is_refused_and_leaves_nothing(cli, tmp_path):
    tpl = _template(tmp_path)
    (tpl / INNER / "openenv.yaml").unlink()
    out = tmp_path / "out"
    out.mkdir()
    result = cli("init", "myenv", "--template", tpl, "--output-dir", out, "--no-lock")
    assert result.exit_code == 2
    assert "did not produce an OpenEnv environment" in result.stderr
    assert "openenv.yaml" in result.stderr and "Traceback" not in result.output
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("no-json", "Cannot fetch template"),
        ("undefined", "failed to render"),
        ("bad-json", "cannot be read as JSON"),
    ],
)
def test_cookiecutter_errors_are_one_line(cli, tmp_path, breakage, message):
    tpl = _template(tmp_path)
    if breakage == "no-json":
        (tpl / "cookiecutter.json").unlink()
    elif breakage == "bad-json":
        (tpl / "cookiecutter.json").write_text("{nope")
    else:
        (tpl / INNER / "notes.txt").write_text("{{ cookiecutter.not_declared }}\n")
    out = tmp_path / "out"
    result = cli("init", "myenv", "--template", tpl, "--output-dir", out, "--no-lock")
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    first = result.stderr.strip().splitlines()[0]
    assert first.startswith("error:") and message in first
    assert not out.exists() or list(out.iterdir()) == []


def test_hooks_run_by_default_and_a_failing_hook_is_one_line(cli, tmp_path, monkeypatch):
    temp = tmp_path / "temp"  # the process's temporary directory: nothing is left in it
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    tpl = _template(tmp_path)
    hooks = tpl / "hooks"
    hooks.mkdir()
    (hooks / "post_gen_project.py").write_text(
        "from pathlib import Path\nPath('HOOK_RAN').write_text('yes')\n"
    )
    env = init_project("a", template=str(tpl), output_dir=tmp_path, lock=False, skills=False)
    assert (env.path / "HOOK_RAN").read_text() == "yes"
    quiet = init_project(
        "b", template=str(tpl), output_dir=tmp_path, lock=False, skills=False, accept_hooks=False
    )
    assert not (quiet.path / "HOOK_RAN").exists()

    (hooks / "pre_gen_project.py").write_text("import sys\nsys.exit('refusing on purpose')\n")
    result = cli("init", "c", "--template", tpl, "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2
    assert "a hook failed" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "c").exists()
    ok = cli("init", "c", "--template", tpl, "-o", tmp_path, "--no-lock", "--no-hooks")
    assert ok.exit_code == 0, ok.output
    assert list(temp.iterdir()) == []  # nor the rendered hooks cookiecutter leaves behind


def test_git_url_is_cloned_into_a_temp_dir_and_the_commit_recorded(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(EXAMPLE, work)
    _git("init", "-q", "-b", "main", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "template", cwd=work)
    head = _git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "tpl.git"
    _git("clone", "-q", "--bare", str(work), str(bare))
    url = bare.as_uri()  # file:///.../tpl.git

    result = init_project("gitenv", template=url, output_dir=tmp_path / "out", lock=False)
    assert result.source is not None
    assert (result.source.origin, result.source.url, result.source.commit) == ("git", url, head)
    assert (result.path / "openenv.yaml").is_file()
    text = (result.path / "pyproject.toml").read_text()
    assert f'commit = "{head}"' in text and f'name = "{url}"' in text
    assert result.report is not None and result.report.errors == []
    assert not (Path.home() / ".cookiecutters").exists()


def test_unreachable_git_host_fails_fast_in_one_line(tmp_path):
    # A local port nobody listens on: git's connection is refused at once, nothing leaves
    # the machine. A real process: pytest's log capture would hide cookiecutter's traceback.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"https://127.0.0.1:{port}/owner/repo.git"
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "envkit", "init", "x", "--template", url, "--no-lock"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr  # the cause, then the next step
    assert lines[0].startswith(f"error: Cannot fetch template {url}: `git clone` exited")
    assert list(tmp_path.iterdir()) == []


def test_abbreviations_expand_like_cookiecutter():
    from cookiecutter.config import BUILTIN_ABBREVIATIONS
    from cookiecutter.repository import expand_abbreviations

    assert ABBREVIATIONS == BUILTIN_ABBREVIATIONS
    for given in ("gh:owner/repo", "gl:group/proj", "bb:team/repo", "./local", "https://x/y.git"):
        assert expand_source(given) == expand_abbreviations(given, BUILTIN_ABBREVIATIONS)
    assert expand_source("gh:owner/repo") == "https://github.com/owner/repo.git"


@pytest.mark.parametrize(
    ("value", "external"),
    [
        ("echo", False),
        ("guess", False),
        ("nope", False),
        ("./echo", True),
        ("tests/x", True),
        ("~/tpl", True),
        ("gh:owner/repo", True),
        ("git@github.com:o/r.git", True),
        ("file:///srv/tpl.git", True),
        ("tpl.zip", True),
    ],
)
def test_what_counts_as_an_external_template(value, external):
    assert is_external(value) is external


def test_name_forms_map_onto_common_variables():
    ctx = name_context(normalise_name("word-game"))
    assert ctx["project_name"] == "Word Game"
    assert ctx["project_slug"] == ctx["package_name"] == "word_game"
    assert ctx["space_name"] == ctx["repo_name"] == "word-game"
    assert ctx["class_prefix"] == "WordGame" and ctx["env_class"] == "WordGameEnvironment"


def test_built_in_templates_never_import_cookiecutter(tmp_path):
    code = (
        "import sys\n"
        "from envkit.scaffold import init_project\n"
        f"init_project('x', template='guess', output_dir={str(tmp_path)!r}, lock=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('cookiecutter')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.strip() == "[]"
    assert (tmp_path / "x" / "openenv.yaml").is_file()


def test_library_errors(tmp_path):
    with pytest.raises(TemplateError, match="Cannot fetch template"):
        init_project("x", template=str(tmp_path / "missing"), output_dir=tmp_path, lock=False)
    with pytest.raises(UsageError, match="no variable `nope`"):
        init_project(
            "x", template=str(EXAMPLE), output_dir=tmp_path, lock=False, options={"nope": "1"}
        )
    assert not (tmp_path / "x").exists()


def test_example_declares_what_the_test_relies_on():
    declared = json.loads((EXAMPLE / "cookiecutter.json").read_text())
    assert {"project_name", "package_name", "space_name", "class_prefix"} <= set(declared)


def test_force_keeps_other_files_and_executable_bits_survive(tmp_path):
    tpl = _template(tmp_path)
    tool = tpl / INNER / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    fresh = init_project("fresh", template=str(tpl), output_dir=tmp_path, lock=False)
    assert os.access(fresh.path / "bin" / "tool", os.X_OK)
    env = tmp_path / "mine"
    env.mkdir()
    (env / "notes.txt").write_text("keep")
    forced = init_project(
        "mine", template=str(tpl), output_dir=tmp_path, lock=False, skills=False, force=True
    )
    assert (env / "notes.txt").read_text() == "keep"
    assert (env / "openenv.yaml").is_file() and os.access(env / "bin" / "tool", os.X_OK)
    assert forced.report is not None
