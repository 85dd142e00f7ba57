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


def test_documented_options_read_docs_kwargs_and_dict_keys() -> None:
    source = '''"""A game.

reset(seed, level="easy"|"hard", options={"task_id": "w3"}) picks the task.
"""
MAX = 8


class Env:
    def reset(self, seed=None, episode_id=None, options=None, attempts: int = MAX,
              index: int | None = None, **kw):
        """Start.

        Args:
            seed: the seed.
            mode: 'fast' or 'slow'.
        """
        task = (options or {}).get("task")
        hints = kw.get("hints")
        return options["task_id"]
'''
    got = reset_options.documented_options(source, readme="Pass `hints`: True or False.")
    assert got == {
        "attempts": [8, 0, 1],  # the default's module constant, then 0 and 1 (an int)
        "index": [0, 1],
        "mode": ["fast", "slow"],  # a docstring entry read through **kw
        "hints": [True, False],  # read from **kw, its values from the README
        "level": ["easy", "hard"],  # a reset(...) mention in the module docstring
        "options.task_id": ["w3"],
        "options.task": [],
    }


def test_documented_values_keep_their_type_and_skip_ranges() -> None:
    assert reset_options.merge([1, True], [True, 1, 1.0, False]) == [1, True, 1.0, False]
    text = "reset(seed, size=3) or size: 1-10; `flag`: True|False"
    assert reset_options.documented_options("", readme=text) == {"size": [3]}


def test_a_reset_without_seed_or_kwargs_cannot_receive_the_seed() -> None:
    without = "class E:\n    def reset(self, episode_id=None):\n        pass\n"
    assert reset_options.takes_seed(without) is False
    assert reset_options.takes_seed(without.replace("episode_id=None", "seed=None")) is True
    assert reset_options.takes_seed(without.replace("episode_id=None", "**kwargs")) is True
    assert reset_options.takes_seed("def step(self):\n    pass\n") is None
    assert reset_options.takes_seed("def reset(:\n") is None
