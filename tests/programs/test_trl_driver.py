"""The training-path driver (envkit/programs/trl_driver.py) run as the lane runs it
(``python -c <its text> ARGS`` in the environment directory) on a small environment made here:
no venv, no server; the slow end-to-end tests are tests/validation/lanes/test_training.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from envkit import programs

ADAPTER = '''
class GuessTRLEnv:
    def reset(self, **kwargs):
        return "\\n\\nGuess."

    def guess(self, number: int) -> str:
        """Guess.

        Args:
            number: the guess.
        """
        return "ok"
'''


def _env(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "client.py").write_text("VALUE = 1\n")
    (root / "inference.py").write_text("from client import VALUE\nraise ValueError('boom')\n")
    (root / "trl_env.py").write_text(ADAPTER)
    (root / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n")
    return root


def _drive(root: Path, stdin: str, *, adapter: str = "trl_env") -> list[dict[str, object]]:
    argv = [str(root), "guess", adapter, "", "0", "5", "tests"]
    proc = subprocess.run(
        [sys.executable, "-c", programs.source("trl_driver"), *argv],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_steps_and_failures_are_json_lines_located_in_the_environment(tmp_path: Path) -> None:
    root = _env(tmp_path / "guess")
    lines = _drive(root, "go http://127.0.0.1:9\n")
    steps = [line["at"] for line in lines if "at" in line]
    assert steps == ["package", "client", "inference", "collect", "adapter", "build", "reset"]
    [fail] = [line for line in lines if line.get("event") == "fail"]
    assert fail["phase"] == "inference" and fail["error"] == "ValueError: boom"
    assert (fail["file"], fail["line"]) == (str(root / "inference.py"), 2)
    collect = next(line for line in lines if line.get("event") == "collect")
    assert collect["installed"] is True and collect["failed"] == []
    tools = next(line for line in lines if line.get("event") == "tools")
    assert tools["tools"] == ["guess"]
    reset = next(line for line in lines if line.get("event") == "reset")
    assert reset["text"] == "\n\nGuess." and reset["file"] == str(root / "trl_env.py")
    assert lines[-1] == {"event": "done"}


def test_without_a_server_the_adapter_is_imported_not_built(tmp_path: Path) -> None:
    lines = _drive(_env(tmp_path / "guess"), "nohealth\n")
    assert "build" not in [line.get("at") for line in lines]
    notes = [line["text"] for line in lines if line.get("event") == "note"]
    assert notes == ["the server did not answer: the adapter was not built or played"]
    assert lines[-1] == {"event": "done"}
