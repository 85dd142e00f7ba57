"""EK517-EK519, what long runs do to the server (envkit.validation.rules.load): the resident
memory read from /proc."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envkit.validation.rules import load


def test_resident_memory_is_read_from_proc() -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc: the memory probe is skipped on this system")
    assert load._rss_bytes(os.getpid()) > 1_000_000
