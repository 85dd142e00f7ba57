"""A hostile environment directory gives findings, never an internal error or a runaway read:
a file name that is not UTF-8, and a `.gitignore` linked to `/dev/zero`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.scaffold import init_project
from envkit.validation import validate

ENVKIT = [sys.executable, "-m", "envkit"]


@pytest.fixture
def env(tmp_path: Path) -> Path:
    return init_project("hostile", output_dir=tmp_path, lock=False, skills=False).path


def test_a_file_name_that_is_not_utf8_is_a_located_finding(env: Path) -> None:
    with open(os.path.join(os.fsencode(env), b"notes-\xff.txt"), "wb") as fh:
        fh.write(b"x")
    report = validate(env, static=True)
    found = [f for f in report.findings if f.code == "EK607"]
    assert len(found) == 1
    assert found[0].location.file == "notes-\\xff.txt"
    proc = subprocess.run(
        [*ENVKIT, "validate", str(env), "--static", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Internal error" not in proc.stderr
    assert '"EK607"' in proc.stdout


def test_a_gitignore_linked_to_dev_zero_keeps_memory_small(env: Path) -> None:
    (env / ".gitignore").unlink()
    (env / ".gitignore").symlink_to("/dev/zero")
    # a fresh interpreter runs validate and reports the largest resident set among its
    # waited-for descendants (envkit and every process envkit ran), in KiB on Linux
    measure = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stdout.write(p.stdout)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", measure, *ENVKIT, "validate", str(env), "--static", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    *report, peak = proc.stdout.splitlines()
    assert '"EK221"' in "\n".join(report), proc.stderr
    assert int(peak) < 200 * 1024, f"{peak} KiB"
