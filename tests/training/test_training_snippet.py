"""The training snippet users read runs as written: the Python block of the generated guess
README's TRL section (`templates/_partials/trl_train.jinja`, the same text as
docs/training.md) runs unchanged in the trainer's venv for one GRPO step on CPU, with the
model docs/training.md's offline recipe makes (its `tiny-model` block, run as written: no model
can be downloaded here). Only the inputs differ from a user's: `MODEL` that local model,
`ENV_URL` an `envkit run` server, `MAX_STEPS=1`. The test checks that the step finished (the
checkpoint the trainer saves at its last step says `global_step` 1).

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
ROOT = HERE.parents[1]
START, END = "<!-- trl-train:start", "<!-- trl-train:end -->"


def training_section(readme: str) -> str:
    """The text between the trl-train markers (the rendered `trl_train.jinja`)."""
    return readme[readme.index(START) : readme.index(END) + len(END)]


def tiny_model_recipe(docs: str) -> str:
    """The Python block between the tiny-model markers of docs/training.md."""
    start, end = docs.index("<!-- tiny-model:start -->"), docs.index("<!-- tiny-model:end -->")
    return python_block(docs[start:end])


def python_block(section: str) -> str:
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return code


def test_the_readme_snippet_trains_one_step(trainer_env, envkit_server, tmp_path):  # noqa: F811
    code = python_block(training_section((trainer_env.path / "README.md").read_text()))
    assert 'os.environ.get("MODEL"' in code and "use_cpu=not gpu" in code
    script = tmp_path / "train.py"
    script.write_text(code)
    recipe = tmp_path / "tiny_model.py"
    recipe.write_text(tiny_model_recipe((ROOT / "docs" / "training.md").read_text()))
    model = tmp_path / "tiny-qwen2"
    made = subprocess.run(
        [trainer_env.python, str(recipe), str(model)],
        capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-4000:]
    assert (model / "config.json").is_file() and (model / "tokenizer.json").is_file()
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
