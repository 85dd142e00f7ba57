"""Evaluation: roll out a policy (any OpenAI-compatible model, random, the oracle, or a
``module:callable``) against an OpenEnv environment and summarise the episodes.

    >>> from envkit.evaluation import evaluate
    >>> result = evaluate("my-env", policy="random", episodes=4, out_dir="evals/run1")
    >>> result.summary["return"]["mean"], result.episodes[0].return_

The ``openai`` client is imported only when the ``openai`` policy runs.
"""

from envkit.errors import EvalAbortedError
from envkit.evaluation.options import EVAL_DEFAULT_MAX_STEPS
from envkit.evaluation.records import EpisodeRecord, EvalSettings, StepRecord
from envkit.evaluation.runner import (
    DEFAULT_BASE_URL,
    EvalInterrupted,
    EvalResult,
    evaluate,
    resume,
)
from envkit.evaluation.stats import flat_groups_warning, histogram, pass_at_k

# The name this package exported before it was told apart from validate's bound
# (envkit.validation.engine.DEFAULT_MAX_STEPS, 50); kept so existing imports still work.
DEFAULT_MAX_STEPS = EVAL_DEFAULT_MAX_STEPS

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_STEPS",
    "EVAL_DEFAULT_MAX_STEPS",
    "EpisodeRecord",
    "EvalAbortedError",
    "EvalInterrupted",
    "EvalResult",
    "EvalSettings",
    "StepRecord",
    "evaluate",
    "flat_groups_warning",
    "histogram",
    "pass_at_k",
    "resume",
]
