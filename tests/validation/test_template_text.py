"""EK224: a README that still carries the template's own text after the environment's models
or code changed (the record ``envkit init`` writes, the fingerprints, the finding)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envkit.catalog import list_templates
from envkit.envdir.template_record import read_template_record, source_fingerprint
from envkit.scaffold import init_project
from envkit.validation import run_static_only

TEMPLATES = [t.name for t in list_templates()]


@pytest.fixture
def guess_env(tmp_path: Path) -> Path:
    return init_project("number-game", template="guess", output_dir=tmp_path, lock=False).path


def _codes(root: Path) -> list[str]:
    return [f.code for f in run_static_only(root).findings]


def _ek224(root: Path) -> list:
    return list(run_static_only(root, select=["EK224"]).findings)


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_fresh_environment_records_its_template_and_gives_no_finding(
    template: str, tmp_path: Path
) -> None:
    root = init_project("fresh", template=template, output_dir=tmp_path, lock=False).path
    record = read_template_record((root / "README.md").read_text())
    assert record is not None and record.template == template
    assert set(record.fingerprints) == {"models.py", "server/fresh_environment.py"}
    assert _ek224(root) == []


def test_changed_models_with_the_template_readme_give_one_finding_at_its_line(
    guess_env: Path,
) -> None:
    before = _codes(guess_env)
    models = guess_env / "models.py"
    models.write_text(models.read_text().replace("    guess: int = Field", "    word: str = Field"))
    after = _codes(guess_env)
    assert sorted(after) == sorted([*before, "EK224"])
    (finding,) = _ek224(guess_env)
    readme = (guess_env / "README.md").read_text().splitlines()
    assert "Guess the hidden number" in readme[finding.location.line - 1]
    assert finding.location.file == "README.md"
    assert finding.severity.value == "warning" and finding.hygiene
    assert "`models.py` changed" in finding.message
    assert finding.data["template"] == "guess" and finding.data["changed"] == ["models.py"]
    assert "guesses a hidden number between 1 and 100" in finding.message  # wrapped in README


def test_a_changed_environment_module_counts_too(guess_env: Path) -> None:
    env = guess_env / "server" / "number_game_environment.py"
    text = env.read_text()
    assert "MAX_STEPS" in text
    env.write_text(text.replace("MAX_STEPS", "STEP_BUDGET"))
    (finding,) = _ek224(guess_env)
    assert "`server/number_game_environment.py` changed" in finding.message


def test_a_rewritten_readme_or_a_removed_record_gives_none(guess_env: Path) -> None:
    models = guess_env / "models.py"
    models.write_text(models.read_text().replace("    guess: int = Field", "    word: str = Field"))
    readme = guess_env / "README.md"
    original = readme.read_text()
    record = next(line for line in original.splitlines() if "envkit:template" in line)
    readme.write_text(original.replace(record, "<!-- about this environment"))
    assert _ek224(guess_env) == []
    rewritten = original
    for phrase in ("Guess the hidden number", "guesses a hidden number between 1\nand 100"):
        assert phrase in rewritten
        rewritten = rewritten.replace(phrase, "Find the hidden word")
    rewritten = rewritten.replace("your guess of the hidden number", "your word")
    readme.write_text(rewritten)
    assert _ek224(guess_env) == []


def test_reformatting_and_comments_keep_the_fingerprint(guess_env: Path) -> None:
    ruff = Path(sys.executable).with_name("ruff")
    files = [guess_env / "models.py", guess_env / "server" / "number_game_environment.py"]
    texts = [f.read_text() for f in files]
    before = [source_fingerprint(text) for text in texts]
    for f in files:
        f.write_text("# edited by hand\n\n" + f.read_text() + "\n\n# the end\n")
    subprocess.run(
        [str(ruff), "format", "--line-length", "70", *map(str, files)],
        check=True,
        capture_output=True,
    )
    assert all(f.read_text().count("\n") > len(text.splitlines()) for f, text in zip(files, texts))
    assert [source_fingerprint(f.read_text()) for f in files] == before
    assert _ek224(guess_env) == []


def test_fingerprints_see_code_and_ignore_layout() -> None:
    base = source_fingerprint('x = f"{a} b"\ncall(1, 2)\n')
    assert source_fingerprint('x = f"{a} b"  # note\n\ncall(\n    1,\n    2,\n)\n') == base
    assert source_fingerprint('x = f"{a} c"\ncall(1, 2)\n') != base
    assert source_fingerprint('x = f"{a} b"\ncall(1, 3)\n') != base
    assert source_fingerprint("def broken(:\n") == source_fingerprint("def broken(:\n")


def test_the_only_warning_is_shown_in_full_not_folded_as_hygiene(guess_env: Path, cli) -> None:
    models = guess_env / "models.py"
    models.write_text(models.read_text().replace("    guess: int = Field", "    word: str = Field"))
    result = cli("validate", guess_env, "--static", "--select", "EK224")
    assert result.exit_code == 0, result.output
    assert "EK224 readme-describes-template" in result.stdout
    assert "`models.py` changed" in result.stdout  # its message, not a folded count
    assert "folded" not in result.stdout
    assert "0 errors, 1 warning, 0 infos" in result.stdout
