"""Property: whatever happens to one file of a valid project, `envkit validate --static`
answers with JSON findings and exit 0/1, never a traceback, within a generous bound
(issue #12, defect 7). The echo template is rendered once; hypothesis mutates one file per
example (bytes flipped, truncated, spliced, replaced by hostile YAML/TOML fragments)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FRAGMENTS = [
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"&a [1]\n",
    b"*a\n",
    b"!!int '0x'",
    b"[" * 200,
    b"{" * 200,
    b"]]]",
    b'"\\ud800"',
    b"1" * 4400,
    b"\t",
    b"\r",
    b"---\n",
    b"...\n",
    b"%YAML 1.1\n",
    b"? ",
    b"- - - -",
    b"a = [[[[[[",
    b'"""',
    b"\\",
    b"FROM",
    b"COPY . .\n",
    b"hf_",
    "é∂".encode(),
    b"\n" * 3,
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("fuzz")
    subprocess.run(
        [sys.executable, "-m", "envkit", "init", "echo-env", "--no-lock", "--no-skills"],
        cwd=parent,
        check=True,
        capture_output=True,
        timeout=120,
    )
    root = parent / "echo-env"
    for cache in root.rglob("__pycache__"):
        shutil.rmtree(cache)
    return root


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@st.composite
def mutation(draw, names: list[str]):
    rel = draw(st.sampled_from(names))
    kind = draw(st.sampled_from(["flip", "truncate", "insert", "replace", "repeat"]))
    return (
        rel,
        kind,
        draw(st.integers(0, 1 << 30)),
        draw(st.sampled_from(FRAGMENTS)),
        draw(st.binary(max_size=64)),
    )


def _apply(data: bytes, kind: str, seed: int, fragment: bytes, noise: bytes) -> bytes:
    at = seed % (len(data) + 1)
    if kind == "flip" and data:
        i = seed % len(data)
        return data[:i] + bytes([data[i] ^ (1 + seed % 255)]) + data[i + 1 :]
    if kind == "truncate":
        return data[:at]
    if kind == "insert":
        return data[:at] + fragment + noise + data[at:]
    if kind == "replace":
        return fragment + noise
    return data[:at] + fragment * (1 + seed % 2000) + data[at:]


def test_static_validate_survives_any_single_file_mutation(rendered: Path, tmp_path: Path):
    names = _files(rendered)
    work = tmp_path / "env"
    timings: list[float] = []
    started = time.monotonic()

    @settings(
        max_examples=12,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(mutation(names))
    def run(m):
        rel, kind, seed, fragment, noise = m
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(rendered, work)
        target = work / rel
        target.write_bytes(_apply(target.read_bytes(), kind, seed, fragment, noise))
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "envkit", "validate", str(work), "--static", "--format", "json"],
            capture_output=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
        )
        timings.append(time.monotonic() - t0)
        assert r.returncode in (0, 1), (rel, kind, r.stderr.decode(errors="replace")[-2000:])
        assert b"Traceback" not in r.stderr and b"Internal error" not in r.stderr
        report = json.loads(r.stdout)
        assert isinstance(report["findings"], list)
        assert timings[-1] < 30, (rel, kind, timings[-1])

    run()
    assert len(timings) == 12 and time.monotonic() - started < 300
