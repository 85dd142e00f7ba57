"""The real TRL loop: TRL 1.16's `GRPOTrainer(environment_factory=<the generated guess adapter,
unmodified>)` runs 2 optimisation steps on CPU against a server started by `envkit run` (the
real CLI, a subprocess on 127.0.0.1, stopped here). The trainer is `grpo_loop.py`, run in a
venv of its own (torch, TRL, transformers, tokenizers, datasets and the generated environment,
cached across runs like the template venvs); it reports back as one JSON line.

Measured on a busy 2-core machine (load average 6-8): the trainer venv 11 s to build from a warm
uv cache, 6 s when cached (`envkit init` and `uv lock` included); the warm start 250 AdamW steps
in 57-270 s, its weights then kept across runs (under the test cache, keyed by what they
depend on: `grpo_loop.cached_warm_start`); 2 GRPO steps 6-25 s; the whole test 1.5-6 minutes
(on an idle machine 23 s, 11 s with the warm start cached)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import cache_root

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# The CPU torch wheel lies on local disk (pip's find-links); a bare `torch` would pull a CUDA
# build of several GB. Point ENVKIT_TEST_TORCH_WHEELS elsewhere to use another wheel directory.
TORCH_WHEELS = Path(os.environ.get("ENVKIT_TEST_TORCH_WHEELS", "/opt/wheels"))
TORCH = "torch==2.13.0+cpu"
TRAINER_REQUIREMENTS = f"""--find-links {TORCH_WHEELS}
{TORCH}
trl==1.16.*
transformers>=5.13
tokenizers
datasets
"""
SCRIPT = Path(__file__).with_name("grpo_loop.py")


def _need(ok: bool, why: str) -> None:
    """Skip locally when a prerequisite is missing; under CI=true fail instead."""
    if ok:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def trainer_env(tmp_path_factory: pytest.TempPathFactory):
    """The guess template, generated, with its locked dependencies and the trainer's in one
    cached venv (`build_env`), the environment installed editable on top."""
    from tests.templates.conftest import build_env

    _need(
        any(TORCH_WHEELS.glob("torch-2.13.0+cpu-*.whl")),
        f"no torch 2.13.0 CPU wheel in {TORCH_WHEELS} (set ENVKIT_TEST_TORCH_WHEELS)",
    )
    start = time.monotonic()
    env = build_env(
        tmp_path_factory.mktemp("grpo"), "guess", extra_requirements=TRAINER_REQUIREMENTS
    )
    print(f"trainer venv: {time.monotonic() - start:.1f} s")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "`envkit run` exited before the server answered"
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"no answer from {url}/health within {timeout_s} s")


@pytest.fixture
def envkit_server(trainer_env):
    """`envkit run` on a free 127.0.0.1 port, with room for every rollout of a generation
    batch (4), the probe instance and the warm start's session. Stopped with SIGTERM (which
    `envkit run` passes on to the server's process group; a SIGINT may be ignored when the
    test runs in the background), then checked to be gone."""
    port = _free_port()
    envkit = Path(sys.executable).with_name("envkit")
    proc = subprocess.Popen(
        [str(envkit), "run", str(trainer_env.path), "--port", str(port), "--timeout", "1200",
         "-e", "MAX_CONCURRENT_ENVS=8"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _healthy(url, proc, 120)
        yield url
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/health", timeout=2)


def test_grpo_trains_two_steps_on_the_generated_adapter(trainer_env, envkit_server, tmp_path):
    from envkit.names import normalise_name

    names = normalise_name(trainer_env.path.name)
    proc = subprocess.run(
        [trainer_env.python, str(SCRIPT), "--server", envkit_server, "--package", names.package,
         "--adapter", f"{names.class_prefix}TRLEnv", "--output-dir", str(tmp_path / "out"),
         "--warm-cache", str(cache_root() / "grpo-warm")],
        cwd=tmp_path, capture_output=True, text=True, timeout=1000,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"warm start: {out['warm']}; GRPO: {out['grpo_s']:.1f} s")

    # Tools offered: the adapter's public methods other than reset and get_reward.
    assert out["tools"] == ["guess"]
    assert sorted([*out["tools"], "get_reward", "reset"]) == out["public_methods"]
    assert out["reward_funcs"] == [f"{names.class_prefix}TRLEnv"]

    # Two steps of 4 rollouts each; tool calls reached the server (counted on the wire).
    batches = out["batches"]
    assert len(batches) == 2 and all(len(b["trl"]) == 4 for b in batches)
    assert sum(sum(b["server_steps"]) for b in batches) >= 1

    # Every rollout's reward is the environment's own score: what the server paid for the
    # episode's last step (one episode per rollout, same multiset per batch). TRL holds
    # rewards in a float32 tensor: equal to float32 precision.
    for batch in batches:
        assert len(batch["server"]) == 4, batch
        assert sorted(batch["trl"]) == pytest.approx(sorted(batch["server"]), rel=1e-6), batch

    # TRL's prompt: the dataset prompt, a blank line, then the text `reset` returned.
    prompt, reset_text = out["dataset_prompt"], out["reset_texts"][0].lstrip("\n")
    for batch in batches:
        for content, rendered in zip(batch["prompts"], batch["rendered"], strict=True):
            assert content == f"{prompt}\n\n{reset_text}"
            assert f"{prompt}\n\n{reset_text}" in rendered

    # The two steps moved the weights (rewards differed within a group).
    assert out["changed_params"], (out["log_history"], [b["trl"] for b in batches])
