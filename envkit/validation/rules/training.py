"""Training-path rules (EK7xx): the environment's training-side code works in its own
interpreter, the way a trainer uses it.

The lane that finds them is :mod:`envkit.validation.lanes.training`: it imports the TRL adapter
(``trl_env.py``), builds it as TRL 1.16's ``GRPOTrainer(environment_factory=...)`` does,
plays the oracle through its tools against a live server, imports ``client.py`` and
``inference.py`` and collects ``tests/``. Sources of the contract: the ``trl`` 1.16.0 wheel,
``trl/trainer/grpo_trainer.py`` (the ``environment_factory`` probe, about l.680-700; the prompt
join ``content + observation``, about l.2398).
"""

from __future__ import annotations

from envkit.findings import Severity, register

ADAPTER_BROKEN = register(
    "EK701",
    "trl-adapter-broken",
    Severity.ERROR,
    summary="The TRL adapter (`trl_env.py`) does not import, or cannot be built with no arguments.",
    what="`trl_env.py` imports in the environment's interpreter, defines a class with a `reset` "
    "method, and that class builds with no arguments (`Adapter()`) against a live server.",
    why="TRL's `GRPOTrainer(environment_factory=Adapter)` imports the class and calls it with "
    "no arguments before training starts; an adapter that fails there stops training before "
    "the first rollout, often hours into setting up a GPU job.",
    example="`from .models import GuessAction` after the action class was renamed to "
    "`GAction`: ImportError at `trl_env.py:12`.",
    fix="Fix the line the finding names (the last frame of the traceback inside the "
    "environment), then run `envkit validate` again.",
)
TOOL_SCHEMA = register(
    "EK702",
    "trl-tool-schema-invalid",
    Severity.ERROR,
    summary="A tool of the TRL adapter has no JSON schema `transformers.utils.get_json_schema` "
    "accepts.",
    what="Every public method of the adapter other than `reset` and `get_reward` (TRL offers "
    "each one to the model as a tool) has type hints for every argument and a docstring with "
    "a description and an `Args:` entry per argument.",
    why="TRL renders each tool's schema with `transformers.utils.get_json_schema`; a missing "
    "hint or `Args:` entry raises when the trainer builds the prompt, and a public helper "
    "(`close`, `render`) becomes a tool the model may call.",
    example="`def guess(self, number):` without `number: int`, or a docstring without `Args:`.",
    fix="Add the type hints and an `Args:` section; rename helpers that are not tools with a "
    "leading underscore.",
)
ORACLE_THROUGH_ADAPTER = register(
    "EK703",
    "trl-adapter-episode-fails",
    Severity.ERROR,
    summary="`reset()` or a tool of the TRL adapter raises when the oracle's episode is played "
    "through it.",
    what="`reset(seed=...)` starts an episode on the live server, and the oracle's actions, "
    "called as the adapter's tools (tool arguments are the action's fields), play the episode "
    "to its end without an exception.",
    why="TRL shows a tool's exception to the model as the tool's answer, so a tool that always "
    "raises trains nothing and fails no step: the reward stays at zero and the run looks like "
    "a model that cannot learn.",
    example="A tool that builds `GAction(guess=number, hint=True)` when the action has no "
    "`hint` field: pydantic's ValidationError at `trl_env.py:88` on every call.",
    fix="Fix the line the finding names; build actions with the fields of `models.py`.",
)
REWARD_MISMATCH = register(
    "EK704",
    "trl-reward-mismatch",
    Severity.ERROR,
    summary="The adapter's `get_reward()` differs from the reward the server sent.",
    what="After the oracle's episode played through the adapter, `get_reward()` equals the "
    "reward of the episode's last step as the server sent it on the wire.",
    why="TRL trains on `get_reward()`: an adapter that sums, rescales or drops the server's "
    "reward trains the model on something the environment did not pay.",
    example="`get_reward()` returns the sum of the step rewards while the environment pays "
    "the last step's reward, or returns 0.0 because it reads `observation.reward` that the "
    "client moved to the step result.",
    fix="Return the reward of the last `step` result (`result.reward`) from `get_reward()`.",
)
IMPORT_FAILS = register(
    "EK705",
    "training-module-import-fails",
    Severity.ERROR,
    summary="`client.py` or `inference.py` does not import in the environment's interpreter.",
    what="The environment's package with its `client.py`, and `inference.py`, import in the "
    'environment\'s interpreter (import only: nothing under `if __name__ == "__main__":` '
    "runs, no model is called).",
    why="Trainers and the hackathon's evaluation import the client and run the inference "
    "script; an import error there is found only when someone else runs them.",
    example="`inference.py` imports `from client import GuessEnv` after the client class was "
    "renamed.",
    fix="Fix the line the finding names. A module that is not installed in the interpreter "
    "is a warning: add it to `[project] dependencies` if the script needs it there.",
)
TESTS_DO_NOT_COLLECT = register(
    "EK706",
    "tests-do-not-collect",
    Severity.ERROR,
    summary="`pytest --collect-only tests` fails in the environment's interpreter.",
    what="The environment's `tests/` folder collects with pytest in the environment's "
    "interpreter (collection only: no test runs).",
    why="A test module that no longer imports hides every test in it; the environment's own "
    "checks then pass by not running.",
    example="`tests/test_environment.py` imports `MAX_GUESSES` after it was renamed.",
    fix="Fix the line the finding names, then run `pytest -q` in the environment.",
)
PROMPT_GLUED = register(
    "EK707",
    "trl-reset-text-glued",
    Severity.WARNING,
    summary="The text the adapter's `reset()` returns does not start on a new line.",
    what="The string `reset()` returns starts with a newline (`\\n\\n` for a new paragraph).",
    why="TRL appends it to the dataset prompt's last message with no separator "
    "(`content + observation` in `grpo_trainer.py`): `Play.Guess a number` reaches the "
    "model glued to the prompt's last word.",
    example='`return f"{observation.feedback} You have 7 guesses."`',
    fix='Start the returned text with "\\n\\n".',
)
