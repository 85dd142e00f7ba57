"""The generated `inference.py` speaks the hackathon's log contract (/work/shared/TRAINING.md,
"The hackathon's inference.py contract"): run as a subprocess in the guess template's own venv
against its real server and `envkit serve-oracle`'s model; EK209 tells that layout from the
old one by reading the source."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.evaluation import evaluate
from envkit.evaluation.oracle_server import OracleHTTPServer, open_oracle_server
from envkit.server import free_port
from envkit.validation import validate
from tests.templates.conftest import SHIPPED

# The contract's lines, one regex each (action and error may hold spaces: JSON strings,
# exception messages).
START = re.compile(r"\[START\] task=(\S+) env=(\S+) model=(\S+)")
STEP = re.compile(
    r"\[STEP\] step=(\d+) action=(.+) reward=(-?\d+\.\d{2}) done=(true|false) error=(.+)"
)
END = re.compile(
    r"\[END\] success=(true|false) steps=(\d+) score=(\d+(?:\.\d+)?) "
    r"rewards=((?:-?\d+\.\d{2})(?:,-?\d+\.\d{2})*)?"
)
KEYS = ("HF_TOKEN", "API_KEY", "OPENAI_API_KEY", "LOCAL_IMAGE_NAME", "API_BASE_URL", "MODEL_NAME")


@pytest.fixture(scope="module")
def guess_oracle(built_envs) -> Iterator[OracleHTTPServer]:
    """The guess template's oracle as an OpenAI-compatible model on a free 127.0.0.1 port."""
    env = built_envs["guess"]
    server = open_oracle_server(env.path, port=0, python=env.python)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="guess-oracle")
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        server.oracle.close()
        thread.join(timeout=10)


def run_inference(env, **variables: str) -> subprocess.CompletedProcess[str]:
    """`python inference.py` in the environment's venv, with no API key in its environment."""
    child = {k: v for k, v in os.environ.items() if k not in KEYS}
    child.update(variables)
    return subprocess.run(
        [env.python, "inference.py"],
        cwd=env.path,
        env=child,
        capture_output=True,
        text=True,
        timeout=300,
    )


def episodes_of(stdout: str) -> list[dict]:
    """The episodes the log lines describe; every line must be a contract line, in order."""
    episodes: list[dict] = []
    for line in stdout.splitlines():
        if m := START.fullmatch(line):
            assert not episodes or "end" in episodes[-1], f"[START] before [END]: {stdout}"
            episodes.append({"start": m.groups(), "steps": []})
        elif m := STEP.fullmatch(line):
            episodes[-1]["steps"].append(m.groups())
        elif m := END.fullmatch(line):
            episodes[-1]["end"] = m.groups()
        else:
            pytest.fail(f"not a contract line: {line!r}")
    assert episodes and all("end" in e for e in episodes), stdout
    return episodes


def test_inference_plays_the_oracle_model_in_the_contract_format(
    built_envs, served, guess_oracle
) -> None:
    env = built_envs["guess"]
    out = run_inference(
        env,
        ENV_URL=served["guess"],
        API_BASE_URL=guess_oracle.base_url,
        MODEL_NAME="oracle",
        EPISODES="3",
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    episodes = episodes_of(out.stdout)
    oracle = evaluate(env.path, url=served["guess"], policy="oracle", episodes=3, python=env.python)
    assert len(episodes) == 3
    for seed, (played, expected) in enumerate(zip(episodes, oracle.episodes, strict=True)):
        assert played["start"] == (f"seed-{seed}", "guess_env", "oracle")
        success, steps, score, rewards = played["end"]
        assert success == "true" and 0.0 <= float(score) <= 1.0 and float(score) == 1.0
        assert int(steps) == len(played["steps"]) == len(expected.steps)
        assert rewards == ",".join(f"{s.reward:.2f}" for s in expected.steps)
        assert [s[2] for s in played["steps"]] == rewards.split(",")
        assert [s[1] for s in played["steps"]] == [
            f'{{"guess":{s.action["guess"]}}}' for s in expected.steps
        ]
        assert [s[3] for s in played["steps"]][-1] == "true"
        assert {s[4] for s in played["steps"]} == {"null"}


def test_eval_openai_against_the_oracle_model_scores_the_oracles_reward(
    built_envs, served, guess_oracle, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    env = built_envs["guess"]
    common = {"url": served["guess"], "episodes": 3, "python": env.python}
    oracle = evaluate(env.path, policy="oracle", **common).summary
    model = evaluate(
        env.path, policy="openai", base_url=guess_oracle.base_url, model="oracle", **common
    ).summary
    assert model["parse_failures"] == 0 and model["episode_errors"] == 0
    assert model["return"] == oracle["return"] and model["success_rate"] == 1.0
    assert model["mean_steps"] == oracle["mean_steps"] > 1  # a multi-step game, replayed


def test_end_is_printed_when_a_server_is_unreachable(built_envs, served) -> None:
    env = built_envs["guess"]
    closed = f"http://127.0.0.1:{free_port()}"
    no_env = run_inference(env, ENV_URL=closed, API_BASE_URL=closed + "/v1", EPISODES="2")
    no_model = run_inference(
        env, ENV_URL=served["guess"], API_BASE_URL=closed + "/v1", EPISODES="1"
    )
    for out, n in ((no_env, 2), (no_model, 1)):
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        episodes = episodes_of(out.stdout)
        assert len(episodes) == n
        assert all(e["end"] == ("false", "0", "0.00", None) for e in episodes), out.stdout
        assert "failed" in out.stderr  # the cause goes to stderr, not into the log lines


def test_import_is_safe_and_the_score_follows_the_manifest(built_envs, tmp_path: Path) -> None:
    """Importing the script runs no episode; its score maps the best step reward from
    the manifest's `validation.reward.range` onto [0, 1]."""
    env = built_envs["guess"]
    (tmp_path / "inference.py").write_text((env.path / "inference.py").read_text())
    manifest = (env.path / "openenv.yaml").read_text()
    assert "range: [0.0, 1.0]" in manifest, "fixture drift"
    (tmp_path / "openenv.yaml").write_text(manifest.replace("range: [0.0, 1.0]", "range: [-1, 3]"))
    closed = f"http://127.0.0.1:{free_port()}"
    probe = (
        "import inference as m\n"
        "print(m.REWARD_RANGE_LO, m.REWARD_RANGE_HI, m.MAX_STEPS, m.HF_TOKEN)\n"
        "print(m.episode_score([0.0, 1.0]), m.episode_score([]), m.episode_score([9.0]))\n"
    )
    child = {k: v for k, v in os.environ.items() if k not in KEYS}
    out = subprocess.run(
        [env.python, "-c", probe],
        cwd=tmp_path,
        env={**child, "ENV_URL": closed, "API_BASE_URL": closed + "/v1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["-1.0 3.0 8 not-needed", "0.5 0.0 1.0"]


# -- EK209 reads the layout from the source ---------------------------------------------------

OLD_FORMAT = """import os
import statistics

API_BASE_URL = os.environ.get("API_BASE_URL", "https://router.huggingface.co/v1")
MODEL_NAME = os.environ.get("MODEL_NAME", "Qwen/Qwen3-0.6B")
HF_TOKEN = os.environ.get("HF_TOKEN", "")
LOCAL_IMAGE_NAME = os.environ.get("LOCAL_IMAGE_NAME", "")


def main(returns):
    for episode, total in enumerate(returns):
        print(f"episode {episode}: return {total:.3f}")
    print(f"mean return: {statistics.mean(returns):.3f}")
"""

CONTRACT = """import os

API_BASE_URL = os.getenv("API_BASE_URL")
MODEL_NAME = os.getenv("MODEL_NAME")
HF_TOKEN = os.getenv("HF_TOKEN")
LOCAL_IMAGE_NAME = os.getenv("LOCAL_IMAGE_NAME")


def log(task, step, action, reward, done, error, score, rewards):
    print(f"[START] task={task} env=my_env model={MODEL_NAME}", flush=True)
    print("[STEP]", f"step={step} action={action} reward={reward:.2f}",
          f"done={str(done).lower()} error={error or 'null'}")
    rewards_str = ",".join(f"{r:.2f}" for r in rewards)
    print(f"[END] success={str(score >= 1).lower()} steps={step} score={score:.3f} "
          f"rewards={rewards_str}")
"""


def _ek209(root: Path) -> list[str]:
    return [f.message for f in validate(root, static=True, select=["EK209"]).findings]


@pytest.mark.parametrize("template", SHIPPED)
def test_ek209_passes_every_generated_script(template: str, tmp_path: Path) -> None:
    from envkit.scaffold import init_project

    env = init_project(f"{template}-env", template=template, output_dir=tmp_path, lock=False)
    assert _ek209(env.path) == []


def test_ek209_fires_on_the_old_format_and_reads_the_layout(echo_env: Path, copy_env) -> None:
    env = copy_env(echo_env)
    script = env / "inference.py"
    script.write_text(OLD_FORMAT)
    (message,) = _ek209(env)
    assert "no `[START]` line" in message and "no `[END]` line" in message

    script.write_text(CONTRACT)  # helpers, print's separate arguments, a 3-decimal score
    assert _ek209(env) == []

    script.write_text(CONTRACT.replace("reward={reward:.2f}", "reward={reward:.3f}"))
    (message,) = _ek209(env)
    assert "two decimals" in message

    script.write_text(CONTRACT.replace(" env=my_env", ""))
    (message,) = _ek209(env)
    assert "`[START]` line reads `[START] task={} model={}`" in message

    script.write_text(CONTRACT.replace('LOCAL_IMAGE_NAME = os.getenv("LOCAL_IMAGE_NAME")', ""))
    (message,) = _ek209(env)
    assert "never mentions `LOCAL_IMAGE_NAME`" in message
