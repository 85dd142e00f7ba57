"""The reset options an environment declares in its source (envkit.envdir.reset_options), read
from the `reset` signature: what EK520 and the schema digest ask."""

from __future__ import annotations

from envkit.envdir import reset_options


def test_reset_options_read_from_the_signature() -> None:
    source = '''
from typing import Literal, Optional


class Env:
    def reset(self, seed=None, episode_id=None, level: Optional[Literal["a", "b"]] = None,
              hints: bool = False, task_id=None, *, split="train", **kwargs):
        """Start.

        Args:
            task_id: one of 'sum', 'product' or `max`.
            split: "train" or "test".
        """
'''
    got = reset_options.reset_options(source)
    assert got == {
        "level": ["a", "b"],
        "hints": [False, True],
        "task_id": ["sum", "product", "max"],
        "split": ["train", "test"],
    }
    assert reset_options.reset_options("def reset(:") == {}  # a syntax error declares nothing
