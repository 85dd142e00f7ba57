"""Static validation and push read hostile projects in bounded time and memory (issue #12,
defect 7): FIFOs, devices, links out of the project, huge and sparse files, YAML bombs, deep
TOML, huge integers, bad tagged values and lone surrogates all end as located findings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.validation import validate

BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "variables: *e\n"
)


def _append(rel: str, text: str):
    def apply(root: Path) -> None:
        with (root / rel).open("a") as fh:
            fh.write(text)

    return apply


def _replace_with(rel: str, make):
    def apply(root: Path) -> None:
        (root / rel).unlink()
        make(root / rel)

    return apply


# name -> (mutation, codes that must be among the findings)
CASES = {
    "fifo-notes": (lambda r: os.mkfifo(r / "notes.txt"), set()),
    "fifo-manifest": (_replace_with("openenv.yaml", os.mkfifo), {"EK221"}),
    "fifo-pyproject": (_replace_with("pyproject.toml", os.mkfifo), {"EK221"}),
    "urandom-readme": (
        _replace_with("README.md", lambda p: p.symlink_to("/dev/urandom")),
        {"EK221"},
    ),
    "zero-dockerfile": (
        _replace_with("Dockerfile", lambda p: p.symlink_to("/dev/zero")),
        {"EK221"},
    ),
    "zero-module": (lambda r: (r / "server" / "data.py").symlink_to("/dev/zero"), set()),
    "sparse-20g": (
        lambda r: (r / "big.bin").touch() or os.truncate(r / "big.bin", 20 << 30),
        {"EK606"},
    ),
    "sparse-manifest": (lambda r: os.truncate(r / "openenv.yaml", 5 << 30), {"EK102", "EK220"}),
    "big-readme": (_append("README.md", "<!-- " + "x" * 10_000_000 + " -->\n"), {"EK220"}),
    "big-manifest": (
        _append("openenv.yaml", "".join(f"k{i}: {i}\n" for i in range(200_000))),
        {"EK220"},
    ),
    "big-dockerfile": (_append("Dockerfile", "# c\n" * 1_000_000), {"EK220"}),
    "yaml-bomb": (_append("openenv.yaml", BOMB), {"EK102"}),
    "deep-toml": (
        _append("pyproject.toml", "\n[tool.x]\na = " + "[" * 1000 + "]" * 1000 + "\n"),
        {"EK202"},
    ),
    "huge-int-toml": (_append("pyproject.toml", "\n[tool.x]\na = " + "1" * 4301 + "\n"), {"EK202"}),
    "huge-int-yaml": (_append("openenv.yaml", "extra: " + "1" * 4301 + "\n"), {"EK102"}),
    "deep-yaml": (_append("openenv.yaml", "extra: " + "[" * 5000 + "]" * 5000 + "\n"), {"EK102"}),
    "int-0x": (_append("openenv.yaml", "version: !!int '0x'\n"), {"EK102"}),
    "surrogate-name": (
        lambda r: (r / "openenv.yaml").write_text(
            (r / "openenv.yaml").read_text().replace('name: "echo_env"', 'name: "\\ud800"')
        ),
        {"EK102"},
    ),
    "bomb-in-card": (
        lambda r: (r / "README.md").write_text(
            (r / "README.md").read_text().replace("pinned: false", BOMB.replace("variables", "x"))
        ),
        {"EK208"},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file_ends_as_findings(case: str, clean_env: Path):
    mutate, expected = CASES[case]
    mutate(clean_env)
    t0 = time.monotonic()
    report = validate(clean_env, static=True)
    elapsed = time.monotonic() - t0
    codes = {f.code for f in report.findings}
    assert expected <= codes, [(f.code, f.message) for f in report.findings]
    assert elapsed < 30, f"{case}: {elapsed:.1f} s"  # generous: the machine is shared
    text = json.dumps(report.to_dict())
    assert len(text) < 200_000  # no alias expansion into the output
    text.encode("utf-8")  # printable: no lone surrogate reaches the output


@pytest.mark.parametrize("case", ["fifo-notes", "surrogate-name", "yaml-bomb"])
def test_cli_prints_json_and_exits_0_or_1(case: str, clean_env: Path):
    CASES[case][0](clean_env)
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "envkit",
            "validate",
            str(clean_env),
            "--static",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr and "Internal error" not in r.stderr
    data = json.loads(r.stdout)
    assert data["summary"]["errors"] == (r.returncode == 1) * data["summary"]["errors"]
