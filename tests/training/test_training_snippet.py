"""The training snippet users read runs as written: the Python block of the generated guess
README's TRL section (`templates/_partials/trl_train.jinja`, the same text as
docs/training.md) runs unchanged in the trainer's venv for one GRPO step on CPU. Only its
inputs differ from a user's: `MODEL` is the tiny local Qwen2 of `save_tiny_model.py` (no model
can be downloaded here), `ENV_URL` an `envkit run` server, `MAX_STEPS=1`. The test checks that
the step finished (the checkpoint the trainer saves at its last step says `global_step` 1).

Cost: the trainer venv and the server are the GRPO loop test's (cached); the tiny model takes
a few seconds; one step of 4 rollouts of an untrained model about 10-60 s on a busy 2-core
machine."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.training.test_grpo_loop import envkit_server, trainer_env  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HERE = Path(__file__).parent
START, END = "<!-- trl-train:start", "<!-- trl-train:end -->"


def training_section(readme: str) -> str:
    """The text between the trl-train markers (the rendered `trl_train.jinja`)."""
    return readme[readme.index(START) : readme.index(END) + len(END)]


def python_block(section: str) -> str:
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return code


def test_the_readme_snippet_trains_one_step(trainer_env, envkit_server, tmp_path):  # noqa: F811
    code = python_block(training_section((trainer_env.path / "README.md").read_text()))
    assert 'os.environ.get("MODEL"' in code and "use_cpu=not gpu" in code
    script = tmp_path / "train.py"
    script.write_text(code)
    model = tmp_path / "tiny-qwen2"
    subprocess.run(
        [trainer_env.python, str(HERE / "save_tiny_model.py"), str(model)],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    env = {
        **os.environ,
        "MODEL": str(model),
        "ENV_URL": envkit_server,
        "MAX_STEPS": "1",
        "HF_HUB_OFFLINE": "1",
    }
    proc = subprocess.run(
        [trainer_env.python, str(script)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    (state,) = tmp_path.glob("*-grpo/checkpoint-*/trainer_state.json")
    assert json.loads(state.read_text())["global_step"] == 1
