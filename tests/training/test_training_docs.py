"""One training snippet, one source: docs/training.md carries the guess template's rendering
of `templates/_partials/trl_train.jinja` (rewrite it with `scripts/sync-training-docs`), every
template with a TRL adapter renders it into its README, and the number of sessions a trainer
holds is stated once (docs/scale.md) and referred to elsewhere. The snippet itself is run by
test_training_snippet.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.resources import templates_dir
from envkit.scaffold import init_project
from tests.training.test_training_snippet import python_block, training_section

ROOT = Path(__file__).resolve().parents[2]
ADAPTER_TEMPLATES = sorted(p.parent.name for p in templates_dir().glob("*/trl_env.py.jinja"))


def _readme(tmp_path: Path, template: str, name: str = "guess-env") -> str:
    env = init_project(name, template=template, output_dir=tmp_path, lock=False, skills=False)
    return (env.path / "README.md").read_text()


def test_docs_training_is_the_guess_templates_rendering(tmp_path):
    docs = (ROOT / "docs" / "training.md").read_text()
    assert training_section(docs) == training_section(_readme(tmp_path, "guess")), (
        "docs/training.md differs from templates/_partials/trl_train.jinja: run "
        "scripts/sync-training-docs"
    )


@pytest.mark.parametrize("template", ADAPTER_TEMPLATES)
def test_every_adapter_template_has_the_snippet(tmp_path, template):
    assert ADAPTER_TEMPLATES == ["code", "guess", "gymnasium", "tools"]
    code = python_block(training_section(_readme(tmp_path, template, "my-env")))
    compile(code, f"{template}/README.md", "exec")
    assert "from my_env.trl_env import MyEnvTRLEnv" in code
    assert 'MODEL = os.environ.get("MODEL", "Qwen/Qwen2.5-0.5B-Instruct")' in code
    assert 'PROMPT = "Play the episode."' in code
    assert "use_cpu=not gpu" in code and "bf16=gpu" in code


def test_one_model_name_for_training():
    """Every model the training docs and the templates' TRL texts name is the snippet's (the
    inference baseline and `envkit eval` name served models, not trained ones)."""
    import re

    texts = [ROOT / "docs" / "training.md", *templates_dir().glob("_partials/trl_*.jinja")]
    texts += templates_dir().glob("*/trl_env.py.jinja")
    models = {m for p in texts for m in re.findall(r"Qwen/[\w.-]+", p.read_text())}
    assert models == {"Qwen/Qwen2.5-0.5B-Instruct"}


def test_sessions_formula_is_stated_once():
    """S = generation_batch_size everywhere; only docs/scale.md expands it."""
    expansion = "per_device_train_batch_size × num_processes × steps_per_generation"
    scale = (ROOT / "docs" / "scale.md").read_text()
    assert expansion in scale and "### What S is" in scale
    training = (ROOT / "docs" / "training.md").read_text()
    assert "(scale.md#what-s-is)" in training
    from envkit.cli.capacity import SessionsOpt

    help_text = SessionsOpt.__metadata__[0].help
    assert "generation_batch_size" in help_text and "docs/scale.md" in help_text
    readme = (ROOT / "README.md").read_text()
    assert "(docs/scale.md#what-s-is)" in readme
    partial = (ROOT / "templates/_partials/trl_train.jinja").read_text()
    for text in (training, help_text, partial, readme):
        assert "gradient accumulation x processes" not in text
        assert "training processes x" not in text and "processes x generation batch" not in text
