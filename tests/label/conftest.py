"""Fixtures of the `envkit label` tests.

The eval folder is made by the REAL `envkit eval` (the echo environment served by uvicorn,
the `openai` policy against the local OpenAI-compatible stub of tests/evaluation), once per session:
4 seeds x 4 rollouts whose codes 1, 0, p, 1 give per seed one solved rollout, one that never
answers right (return 0), one that first fails to parse then solves (same return as the first,
different text: a reward tie) and one identical to the first (never shown as a pair).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.evaluation.conftest import openai_stub  # noqa: F401 - the session fixture, reused

SEEDS = 4
GROUP = 4
CODES = "10p1"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def eval_dir_session(
    tmp_path_factory: pytest.TempPathFactory,
    echo_env: Path,
    echo_server,
    openai_stub,  # noqa: F811 - the imported fixture
) -> Path:
    from envkit.evaluation import evaluate

    out = tmp_path_factory.mktemp("label-eval") / "run"
    old = os.environ.get("HF_TOKEN")
    os.environ["HF_TOKEN"] = openai_stub.key
    try:
        evaluate(
            echo_env,
            url=echo_server.url,
            policy="openai",
            model=f"schedule:label-{os.getpid()}:" + CODES * SEEDS,
            base_url=openai_stub.base_url,
            episodes=SEEDS,
            group_size=GROUP,
            concurrency=1,
            out_dir=out,
        )
    finally:
        if old is None:
            os.environ.pop("HF_TOKEN", None)
        else:
            os.environ["HF_TOKEN"] = old
    return out


@pytest.fixture
def eval_dir(eval_dir_session: Path, tmp_path: Path) -> Path:
    """A private copy of the session's eval folder (no labels yet)."""
    dst = tmp_path / "run"
    shutil.copytree(eval_dir_session, dst)
    return dst


def free_port() -> int:
    from envkit.server import free_port as _free

    return _free()


@contextmanager
def label_server(folder: Path, *args: str) -> Iterator[str]:
    """`envkit label FOLDER --port P ARGS...` as a user runs it (a real process); yields the
    page URL; stopped by PID (SIGINT, then SIGKILL) at the end."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envkit", "label", str(folder), "--port", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise AssertionError(
                    f"envkit label exited {proc.returncode}: "
                    f"{proc.stdout.read() if proc.stdout else ''}"
                )
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("envkit label did not answer /healthz in 30 s")
            time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
