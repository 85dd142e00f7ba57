"""Training-path rules (EK7xx): the environment's training-side code works in its own
interpreter, the way a trainer uses it.

The lane that plays them is :mod:`envkit.validation.lanes.training`: its driver
(:mod:`envkit.programs.trl_driver`) imports the TRL adapter (``trl_env.py``), builds it as
TRL 1.16's ``GRPOTrainer(environment_factory=...)`` does, plays the oracle through its tools
against a live server, imports ``client.py`` and ``inference.py`` and collects ``tests/``;
:func:`read_driver` here turns the lines it prints into findings. Sources of the contract:
the ``trl`` 1.16.0 wheel, ``trl/trainer/grpo_trainer.py`` (the ``environment_factory`` probe,
about l.680-700; the prompt join ``content + observation``, about l.2398).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.findings import Finding, Location, Rule, Severity, register
from envkit.names import normalise_name

ADAPTER_NAME = "trl_env.py"
"""The TRL adapter of an environment: ``trl_env.py`` at its root (what the multi-turn
templates generate; the manifest names no other)."""

TESTS_DIR = "tests"
"""The environment's test folder, collected with ``pytest --collect-only``."""

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


# -- the driver's lines into findings --------------------------------------------------------


@dataclass
class TrainPathOutcome:
    """What the training-path lane found.

    Attributes:
        findings: EK7xx findings (the rules' default severities).
        ran: codes of the EK7xx rules evaluated (passed or failed).
        skipped: code -> why it was not evaluated.
        notes: lines for the report (tool schemas not checked and why, no oracle, ...).
        seconds: wall time of the lane.
    """

    findings: list[Finding] = field(default_factory=list)
    ran: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def has_adapter(root: Path) -> bool:
    """Whether the environment at ``root`` has a TRL adapter (``trl_env.py``)."""
    return (root / ADAPTER_NAME).is_file()


def package_name(root: Path) -> str:
    """The import name of the environment's package: the ``[tool.setuptools] package-dir``
    key mapped to ``"."`` (what the templates write), else the normalised ``[project] name``,
    else the normalised directory name."""
    data = EnvDir(root).pyproject or {}
    setuptools = data.get("tool", {}).get("setuptools", {}) if isinstance(data, dict) else {}
    package_dir = setuptools.get("package-dir") if isinstance(setuptools, dict) else None
    if isinstance(package_dir, dict):
        for key, value in package_dir.items():
            if value in (".", "./", "") and isinstance(key, str) and key.isidentifier():
                return key
    name = EnvDir(root).project_table.get("name")
    try:
        return normalise_name(name if isinstance(name, str) and name else root.name).package
    except Exception:  # a name envkit cannot normalise: fall back to the folder's
        return normalise_name(root.name).package


#: The rule of each step of the driver (``at`` lines, ``fail`` events).
PHASE_RULE: dict[str, Rule] = {
    "package": IMPORT_FAILS,
    "client": IMPORT_FAILS,
    "inference": IMPORT_FAILS,
    "adapter": ADAPTER_BROKEN,
    "build": ADAPTER_BROKEN,
    "schema": TOOL_SCHEMA,
    "reset": ORACLE_THROUGH_ADAPTER,
    "play": ORACLE_THROUGH_ADAPTER,
    "reward": REWARD_MISMATCH,
    "collect": TESTS_DO_NOT_COLLECT,
}

#: What each step must do, the start of its finding's message.
_PHASE_WANT = {
    "package": "The environment's package must import in its interpreter",
    "client": "The environment's package and `client.py` must import in its interpreter",
    "inference": "`inference.py` must import in the environment's interpreter (import only; "
    "no model is called)",
    "adapter": f"The TRL adapter `{ADAPTER_NAME}` must import and define a class with `reset`",
    "build": "TRL builds the adapter with no arguments (`environment_factory()`) against a "
    "live server",
    "schema": "TRL renders each tool's JSON schema with `transformers.utils.get_json_schema`",
    "reset": "`reset(prompt=..., seed=...)` must start an episode (TRL calls it with the "
    "dataset row)",
    "play": "The adapter's tools must play the oracle's episode",
    "reward": "`get_reward()` must return the episode's reward",
    "collect": f"`pytest --collect-only {TESTS_DIR}` must collect the environment's tests",
}

_FRAME = re.compile(r"^(\S+?\.py):(\d+): in ", re.MULTILINE)


def read_driver(
    root: Path, python: str, text: str, timed_out: bool, outcome: TrainPathOutcome
) -> None:
    """Turn the lines :mod:`envkit.programs.trl_driver` printed into findings, evaluated
    codes, skip reasons and notes, added to ``outcome``.

    Args:
        root: the environment directory (absolute): findings are located relative to it.
        python: the interpreter the driver ran in (named in the messages).
        text: the driver's stdout; lines that are not JSON objects (the environment's own
            prints) are dropped.
        timed_out: the driver was killed at the lane's time limit (a driver without its
            ``done`` line hung rather than exited early).
        outcome: where the results go.
    """
    items = _parse_lines(text)
    for item in items:
        at = item.get("at")
        if isinstance(at, str) and at in PHASE_RULE:
            outcome.ran.add(PHASE_RULE[at].code)
        event = item.get("event")
        if event == "fail":
            outcome.findings.append(_failure(root, python, item))
        elif event == "note":
            outcome.notes.append(f"training path: {item.get('text')}")
        elif event == "schemas":
            _schemas(python, item, outcome)
        elif event == "reset":
            _separator(root, item, outcome)
        elif event == "reward":
            _reward(root, item, outcome)
        elif event == "collect":
            _collection(root, python, item, outcome)
    if not any(i.get("event") == "done" for i in items):
        outcome.findings.append(_unfinished(root, items, timed_out))


def _parse_lines(text: str) -> list[dict[str, Any]]:
    """The driver's JSON lines (anything else the environment wrote to the real stdout is
    dropped)."""
    items = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def _location(root: Path, file: str | None, line: int | None) -> Location | None:
    """``file`` relative to the environment (``None`` when it is outside)."""
    if not file:
        return None
    path = Path(file)
    path = path if path.is_absolute() else root / path
    try:
        rel = path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return None
    return Location(rel.as_posix(), line if isinstance(line, int) and line > 0 else None)


def _failure(root: Path, python: str, item: dict[str, Any]) -> Finding:
    phase = str(item.get("phase"))
    rule = PHASE_RULE.get(phase, ADAPTER_BROKEN)
    where = f" at `{item['text']}`" if item.get("text") else ""
    subject = f" (tool `{item['tool']}`)" if item.get("tool") else ""
    action = f" for the oracle's action {json.dumps(item['action'])}" if item.get("action") else ""
    # a library error can span lines (pydantic's ValidationError: one line per field): its
    # first line reads on, the rest is indented under the finding
    first, *rest = str(item.get("error")).splitlines() or [""]
    message = (
        f"{_PHASE_WANT.get(phase, 'The training path must run')}{subject}; it raised "
        f"{first}{where}{action}." + "".join(f"\n    {line}" for line in rest if line.strip())
    )
    severity = None
    missing = item.get("missing")
    if rule is IMPORT_FAILS and isinstance(missing, str) and not _is_local(root, missing):
        severity = Severity.WARNING
        message += f" `{missing}` is not installed in {python}."
    return rule.finding(
        message,
        location=_location(root, item.get("file"), item.get("line")),
        severity=severity,
        phase=phase,
        error=item.get("error"),
    )


def _is_local(root: Path, module: str) -> bool:
    """Whether ``module`` is the environment's own (its package, or a file or folder at its
    root): a missing one is a defect, a missing third-party one a missing install."""
    top = module.split(".")[0]
    return top == package_name(root) or (root / f"{top}.py").is_file() or (root / top).is_dir()


def _schemas(python: str, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    if item.get("checked"):
        outcome.ran.add(TOOL_SCHEMA.code)
        return
    why = f"transformers is not importable in {python} ({item.get('why')})"
    outcome.skipped[TOOL_SCHEMA.code] = why
    outcome.notes.append(f"training path: the tools' JSON schemas were not checked: {why}")


def _separator(root: Path, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    outcome.ran.add(PROMPT_GLUED.code)
    text = item.get("text")
    if not isinstance(text, str) or text.startswith("\n"):
        return
    glued = "Play." + text[:40].replace("\n", " ")
    outcome.findings.append(
        PROMPT_GLUED.finding(
            f"TRL appends `reset()`'s text to the prompt with no separator; it starts with "
            f"{text[:40]!r}, so the model reads {glued!r}.",
            location=_location(root, item.get("file"), item.get("line")),
        )
    )


def _reward(root: Path, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    outcome.ran.add(REWARD_MISMATCH.code)
    if item.get("ok"):
        return
    outcome.findings.append(
        REWARD_MISMATCH.finding(
            f"`get_reward()` must equal the reward of the episode's last step as the server "
            f"sent it ({item.get('wire')!r}); it returned {item.get('adapter')!r}.",
            location=_location(root, item.get("file"), item.get("line")),
            adapter=item.get("adapter"),
            wire=item.get("wire"),
        )
    )


def _unfinished(root: Path, items: list[dict[str, Any]], timed_out: bool) -> Finding:
    """The finding of a driver that hung (past the lane's timeout) or exited early: on the
    step it had started."""
    steps = [str(i["at"]) for i in items if isinstance(i.get("at"), str)]
    phase = steps[-1] if steps else "package"
    why = "did not finish within the training path's time limit" if timed_out else "exited early"
    file = {"inference": "inference.py", "client": "client.py", "collect": TESTS_DIR}.get(
        phase, ADAPTER_NAME
    )
    if phase == "package":
        file = "__init__.py"
    return PHASE_RULE.get(phase, ADAPTER_BROKEN).finding(
        f"{_PHASE_WANT.get(phase, 'The training path must run')}; the step {why} (an "
        "endless loop, a call without a timeout, or `os._exit` at import).",
        location=_location(root, str(root / file), None),
        phase=phase,
    )


def _collection(root: Path, python: str, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    """Turn the driver's ``pytest --collect-only`` result into EK706 findings (one per
    module that does not collect)."""
    if not item.get("installed"):
        why = f"pytest is not importable in {python} ({item.get('why')})"
        outcome.skipped[TESTS_DO_NOT_COLLECT.code] = why
        outcome.notes.append(f"training path: {TESTS_DIR}/ was not collected: {why}")
        return
    outcome.ran.add(TESTS_DO_NOT_COLLECT.code)
    failed = item.get("failed") or []
    for report in failed:
        module = str(report.get("nodeid") or TESTS_DIR)
        outcome.findings.append(_collect_finding(root, module, str(report.get("text") or "")))
    if not failed and item.get("code") not in (0, 5):  # 5: no tests collected
        outcome.findings.append(
            TESTS_DO_NOT_COLLECT.finding(
                f"{_PHASE_WANT['collect']}; pytest exited with code {item.get('code')}.",
                location=Location(TESTS_DIR),
            )
        )


def _collect_finding(root: Path, module: str, section: str) -> Finding:
    """One module's collection error: located at its last frame inside the environment."""
    file, line, code = module, None, ""
    for frame in _FRAME.finditer(section):
        loc = _location(root, frame.group(1), int(frame.group(2)))
        if loc is not None and ".venv/" not in loc.file and "site-packages" not in loc.file:
            file, line = frame.group(1), int(frame.group(2))
            rest = section[frame.end() :].splitlines()
            code = rest[1].strip() if len(rest) > 1 else ""
    errors = [ln[1:].strip() for ln in section.splitlines() if ln.startswith("E ")]
    error = errors[-1] if errors else "a collection error"
    where = f" at `{code}`" if code else ""
    return TESTS_DO_NOT_COLLECT.finding(
        f"`pytest --collect-only tests` must collect `{module}`; it raised {error}{where}.",
        location=_location(root, file, line) or Location(module),
        error=error,
    )
