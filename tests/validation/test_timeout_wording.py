"""A reply that runs out of time names the budget and its knobs where the user reads it
(validate's text report): `GET /metadata` and the oracle that answer too slowly are the reply
timeout's business (EK422, EK506 without "it failed"), not a broken route or oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envkit.envdir.project import no_answer

SLOW_METADATA = '''

import asyncio  # noqa: E402


@app.middleware("http")
async def _slow_metadata(request, call_next):
    """GET /metadata answers after 3 s: slower than the test's reply timeout."""
    if request.url.path == "/metadata":
        await asyncio.sleep(3)
    return await call_next(request)
'''

SLOW_ORACLE = '''"""The echo oracle, 3 s an action: slower than the test's reply timeout."""
import time

from server.oracle import policy as _policy


def policy(observation):
    time.sleep(3)
    return _policy(observation)
'''


def test_no_answer_names_the_reply_timeout_and_the_declared_start_up() -> None:
    text = no_answer("`GET /metadata`", 10)
    assert text.startswith("`GET /metadata`: no answer within 10 s, the reply timeout.")
    assert "`--reply-timeout S`" in text and "`envkit.startup_timeout_s`" in text
    assert "before GET /health answers healthy" in text
    assert "when its module is imported" in no_answer("Policy `m:p`", 1, policy=True)


@pytest.mark.slow  # starts the environment's server and the oracle's interpreter
def test_validate_says_which_budget_ran_out(cli, echo_env: Path, copy_env) -> None:
    root = copy_env(echo_env)
    with (root / "server" / "app.py").open("a") as app:
        app.write(SLOW_METADATA)
    (root / "slow_call.py").write_text(SLOW_ORACLE)
    manifest = root / "openenv.yaml"
    text = manifest.read_text()
    manifest.write_text(text.replace("oracle: server.oracle:policy", "oracle: slow_call:policy"))
    result = cli(
        "validate", root, "--python", sys.executable, "--reply-timeout", "1",
        "--no-train-path", "--episodes", "1", "--select", "EK4,EK506",
    )  # fmt: skip
    out = " ".join(result.stdout.split())  # the text report, unwrapped
    assert result.exit_code == 1, result.output
    assert "EK422" in out and "EK404" not in out
    assert "`GET /metadata`: no answer within 1 s, the reply timeout." in out
    assert "raise that timeout (`--reply-timeout S`)" in out
    assert "do that work at start-up, before GET /health answers healthy," in out
    assert "(`envkit.startup_timeout_s` in openenv.yaml, or `--startup-timeout S`)" in out
    assert (
        "The oracle `slow_call:policy` must play every seed; Policy `slow_call:policy`: no "
        "answer within 1 s, the reply timeout." in out
    )
    assert "do that work when its module is imported" in out
    assert "it failed" not in out
