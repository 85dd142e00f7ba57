"""`envkit init`: what users see, every refusal, and no half-written output."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import envkit.catalog as catalog
import envkit.scaffold as scaffold
from envkit.errors import DestinationError
from envkit.scaffold import init_project

ECHO_FILES = {
    "openenv.yaml",
    "models.py",
    "client.py",
    "__init__.py",
    "pyproject.toml",
    "README.md",
    "server/__init__.py",
    "server/app.py",
    "server/my_env_environment.py",
    "server/oracle.py",
    "Dockerfile",
    ".dockerignore",
    ".gitignore",
    "inference.py",
    "tests/test_environment.py",
    "AGENTS.md",
    "CLAUDE.md",
    ".github/workflows/envkit.yml",
}


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_init_renders_the_echo_template(cli, tmp_path):
    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 0, result.output
    env = tmp_path / "my-env"
    assert _tree(env) >= ECHO_FILES
    # the tree and the next commands are printed
    assert "server" in result.stderr and "my_env_environment.py" in result.stderr
    assert "envkit validate" in result.stderr and "envkit run" in result.stderr
    assert "package `my_env`" in result.stderr and "Space `my-env`" in result.stderr


def test_spellings_reach_the_files(tmp_path):
    env = init_project("word_game", output_dir=tmp_path, lock=False).path
    assert env.name == "word_game"
    assert 'name: "word_game"' in (env / "openenv.yaml").read_text()
    assert 'name = "word-game"' in (env / "pyproject.toml").read_text()
    assert 'server = "word_game.server.app:main"' in (env / "pyproject.toml").read_text()
    assert (
        "class WordGameEnvironment(Environment)"
        in (env / "server" / "word_game_environment.py").read_text()
    )
    assert "class WordGameAction(Action)" in (env / "models.py").read_text()


def test_no_jinja_leftovers_or_debris(echo_env):
    for path in echo_env.rglob("*"):
        assert "__pycache__" not in path.parts
        assert path.suffix not in (".jinja", ".pyc")
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert "{{" not in text and "{%" not in text, path


def test_debris_in_a_template_is_never_copied(tmp_path, monkeypatch):
    fake = tmp_path / "templates"
    shutil.copytree(scaffold.templates_dir(), fake)
    (fake / "echo" / "__pycache__").mkdir()
    (fake / "echo" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (fake / "_common" / "stray.pyc").write_bytes(b"\0")
    (fake / "echo" / ".DS_Store").write_bytes(b"\0")
    monkeypatch.setattr(scaffold, "templates_dir", lambda: fake)
    monkeypatch.setattr(catalog, "templates_dir", lambda: fake)
    env = init_project("my-env", output_dir=tmp_path / "out", lock=False).path
    names = {p.name for p in env.rglob("*")}
    assert not names & {
        "__pycache__",
        "x.cpython-311.pyc",
        "stray.pyc",
        ".DS_Store",
        "template.toml",
    }


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../escape", "is a path"),
        ("/tmp/abs", "is a path"),
        ("class", "Python keyword"),
        ("9lives", "must start with a letter"),
        ("server", "shadow a module"),
    ],
)
def test_bad_names_are_refused(cli, tmp_path, name, message):
    result = cli("init", name, "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_non_empty_destination_is_refused_then_forced(cli, tmp_path):
    env = tmp_path / "my-env"
    env.mkdir()
    (env / "notes.txt").write_text("keep me")
    (env / "models.py").write_text("old")
    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2
    assert "is not empty" in result.stderr and "--force" in result.stderr
    assert (env / "models.py").read_text() == "old"

    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock", "--force")
    assert result.exit_code == 0, result.output
    assert (env / "notes.txt").read_text() == "keep me"
    assert "class MyEnvAction" in (env / "models.py").read_text()


def test_destination_that_is_a_file(cli, tmp_path):
    (tmp_path / "my-env").write_text("")
    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2 and "is not a directory" in result.stderr


def test_unknown_template_lists_the_available_ones(cli, tmp_path):
    result = cli("init", "my-env", "--template", "nope", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2
    assert "No template named `nope`" in result.stderr and "echo" in result.stderr


def test_unknown_template_option(cli, tmp_path):
    result = cli("init", "my-env", "--set", "colour=red", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2 and "has no option `colour`" in result.stderr
    result = cli("init", "my-env", "--set", "novalue", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 2 and "KEY=VALUE" in result.output


def test_failure_mid_write_leaves_nothing(tmp_path, monkeypatch):
    def boom(root, files):
        (root / "partial.txt").write_text("half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scaffold, "_write_files", boom)
    with pytest.raises(DestinationError, match="No space left"):
        init_project("my-env", output_dir=tmp_path, lock=False)
    assert list(tmp_path.iterdir()) == []


def test_failure_in_force_mode_removes_only_what_it_created(tmp_path, monkeypatch):
    env = tmp_path / "my-env"
    env.mkdir()
    (env / "mine.txt").write_text("keep")
    real_write = Path.write_bytes
    calls = {"n": 0}

    def flaky(self, data):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky)
    with pytest.raises(DestinationError):
        init_project("my-env", output_dir=tmp_path, lock=False, force=True)
    monkeypatch.undo()
    assert _tree(env) == {"mine.txt"}


def test_templates_command_lists_echo(cli):
    result = cli("templates")
    assert result.exit_code == 0
    assert "echo (default)" in result.stdout
    result = cli("templates", "--json")
    assert '"name": "echo"' in result.stdout


def test_uv_lock_is_written(tmp_path):
    result = init_project("locked-env", output_dir=tmp_path, lock=True)
    assert result.lock.status == "written", result.lock.message
    assert 'name = "openenv"' in (result.path / "uv.lock").read_text()


def test_failed_lock_is_a_warning_with_the_retry_command(cli, tmp_path, monkeypatch):
    # An index nobody listens on: uv fails at once, init still succeeds.
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_OFFLINE", "1")
    result = cli("init", "my-env", "--output-dir", tmp_path)
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "uv lock" in result.stderr
    assert f"cd {tmp_path / 'my-env'} && uv lock" in result.stderr
    assert not (tmp_path / "my-env" / "uv.lock").exists()


def test_generated_tests_pass(echo_env, copy_env):
    env = copy_env(echo_env)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=env,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout


def test_skills_are_installed_by_default_and_never_uploaded(cli, tmp_path):
    from envkit.envdir.upload_set import upload_set

    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock")
    assert result.exit_code == 0, result.output
    env = tmp_path / "my-env"
    for folder in (".agents", ".claude", ".cursor", ".opencode"):
        skill = env / folder / "skills" / "envkit" / "SKILL.md"
        assert skill.is_file(), folder
        assert skill.read_text().startswith("---\nname: envkit")
    assert "Agent skills" in result.stderr and "--no-skills" in result.stderr
    uploaded = {f.path for f in upload_set(env)}
    assert not any(
        p.startswith((".agents/", ".claude/", ".cursor/", ".opencode/")) for p in uploaded
    )
    assert "AGENTS.md" in uploaded and (env / "CLAUDE.md").read_text() == "@AGENTS.md\n"


def test_no_skills(cli, tmp_path):
    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock", "--no-skills")
    assert result.exit_code == 0, result.output
    env = tmp_path / "my-env"
    assert not (env / ".agents").exists() and not (env / ".claude").exists()
    assert (env / "AGENTS.md").is_file()


COOKIECUTTER_EXAMPLE = "tests/scaffold/fixtures/cookiecutter_env"


def test_init_renders_a_cookiecutter_template_by_path(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[2])  # the repository: the path is relative
    result = cli("init", "myenv", "--template", COOKIECUTTER_EXAMPLE, "-o", tmp_path, "--no-lock")
    assert result.exit_code == 0, result.output
    env = tmp_path / "myenv"
    assert "class MyenvAction" in (env / "models.py").read_text()
    assert "envkit validate --static: PASSED" in result.stderr
    check = cli("validate", "--static", "--format", "json", env)
    assert check.exit_code == 0, check.output
    assert '"errors": 0' in check.stdout


def test_templates_shows_where_templates_come_from(cli, tmp_path):
    listing = cli("templates")
    assert listing.exit_code == 0
    assert "origin" in listing.stdout and "built-in" in listing.stdout

    init_project("made-here", template="guess", output_dir=tmp_path, lock=False, skills=False)
    example = Path(__file__).parents[2] / COOKIECUTTER_EXAMPLE
    init_project("made-there", template=str(example), output_dir=tmp_path, lock=False)
    built_in = cli("templates", "--env", tmp_path / "made-here")
    assert built_in.exit_code == 0, built_in.output
    assert "made from the guess template" in built_in.stdout and "built-in" in built_in.stdout
    external = cli("templates", "--env", tmp_path / "made-there", "--json")
    assert external.exit_code == 0, external.output
    assert '"origin": "directory"' in external.stdout and "cookiecutter_env" in external.stdout

    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "pyproject.toml").write_text('[project]\nname = "bare"\n')
    missing = cli("templates", "--env", tmp_path / "bare")
    assert missing.exit_code == 2 and "records no template" in missing.stderr


def test_init_help_says_a_template_is_code(cli):
    result = cli("init", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.replace("│", " ").split())  # rich's panels wrap the help
    assert "gh:owner/repo" in text and "--no-hooks" in text
    assert "code that runs on this machine" in text and "arbitrary code" in text


def _installs(text: str) -> list[str]:
    return [line for line in text.splitlines() if "pip install" in line and "-e ." in line]


def test_next_steps_install_into_the_environments_own_venv(cli, tmp_path):
    """`uv pip install` without `--python` follows an activated venv (VIRTUAL_ENV) before the
    `.venv` beside it: every install step init prints or generates names the venv."""
    result = cli("init", "my-env", "--output-dir", tmp_path, "--no-lock", "--no-skills")
    assert result.exit_code == 0, result.output
    printed = _installs(result.stderr)
    assert printed == [
        "  uv venv && uv pip install --python .venv/bin/python -e . pytest   # or: uv sync"
    ]
    assert ".venv/bin/python -m pytest -q" in result.stderr
    for name in ("README.md", "AGENTS.md"):
        lines = _installs((tmp_path / "my-env" / name).read_text())
        assert lines and all("--python .venv/bin/python" in line for line in lines), name
