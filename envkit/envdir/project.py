"""Locating an environment on disk and the Python interpreter that serves it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from envkit import programs
from envkit.envdir.manifest import EnvSpec, Manifest
from envkit.errors import ServerStartError, UsageError


def resolve_python(root: Path, python: str | None = None) -> str:
    """Choose the interpreter that serves the environment at ``root``.

    Order: ``python`` (the ``--python`` option) when given, else ``root/.venv/bin/python``
    when it exists, else the interpreter running envkit. An explicit option wins over the
    project's venv because the user asked for it. A relative ``python`` is taken from the
    current directory and returned absolute (servers start in ``root``); symbolic links are
    kept, since a venv's ``bin/python`` is one.

    Raises:
        UsageError: ``python`` was given but is not an executable file.
    """
    if python:
        candidate = Path(python).expanduser()
        if not candidate.is_file() and os.sep not in python:
            found = shutil.which(python)
            candidate = Path(found) if found else candidate
        if not candidate.is_file() or not os.access(candidate, os.X_OK):
            raise UsageError(
                f"--python {python}: no such executable.",
                hint="Pass the path of a Python interpreter, e.g. .venv/bin/python.",
            )
        return os.path.abspath(candidate)
    venv = _project_venv(root)
    if venv.is_file():
        return str(venv)
    return sys.executable


def _project_venv(root: Path) -> Path:
    return root / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def own_interpreter_note(root: Path, python: str | None = None) -> str | None:
    """The warning to show when :func:`resolve_python` falls back to the interpreter running
    envkit (``sys.executable``) for the environment at ``root``: there is no ``--python`` and
    no ``root/.venv``. A newcomer who installed openenv into envkit's venv validates and serves
    fine, then trains with another interpreter that lacks it.

    Not shown when ``python`` (``--python``) is given, even when it names envkit's own
    interpreter: that is a choice made on purpose (CI, envkit's own tests serve environments
    that way). Not shown when ``root/.venv`` exists, even when envkit is installed in it: it is
    the project's venv, the one a trainer run in the project uses too.

    Returns:
        One line for the validate report's notes or ``envkit run``'s banner, starting
        ``interpreter:``; ``None`` when there is nothing to warn about.
    """
    if python or _project_venv(root).is_file():
        return None
    return (
        f"interpreter: envkit's own interpreter ({sys.executable}) serves this environment: "
        "there is no `.venv` in its folder and no --python was given. A trainer started from "
        "another interpreter will not have openenv and the packages installed there; create "
        "the environment's venv (`uv sync` in its folder) or pass the trainer's interpreter "
        "with --python."
    )


def check_runtime(python: str, root: Path) -> None:
    """Make sure ``python`` can import the OpenEnv runtime before starting a server.

    Takes ~50 ms (``find_spec`` only, nothing is imported).

    Raises:
        ServerStartError: openenv, uvicorn or fastapi is not importable there; the hint
            gives the exact install command.
    """
    try:
        out = subprocess.run(
            [python, "-c", programs.source("runtime_probe")],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=root,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerStartError(
            f"Cannot run {python}: {exc}.", hint="Pass a working interpreter with --python."
        ) from None
    missing = [m for m in out.stdout.strip().split(",") if m]
    if out.returncode != 0 or missing:
        names = ", ".join(missing) or "?"
        raise ServerStartError(
            f"{python} cannot import {names}, which the environment server needs.",
            hint=f"Install the environment into it: `{python} -m pip install -e {root}` "
            f"(or `cd {root} && uv venv && uv pip install -e .`), or pass another interpreter "
            "with --python.",
        )


def env_spec(manifest: Manifest | None) -> EnvSpec:
    """The resolved environment facts of ``manifest`` (reward range, max_steps, oracle, seeds,
    step_timeout_s, startup_timeout_s), or the defaults when there is no manifest.

    The one accessor every reader of these facts goes through (:attr:`Manifest.spec`: the
    ``envkit:`` section and RFC 008's fields).
    """

    return manifest.spec if manifest is not None else EnvSpec()


MIN_REPLY_TIMEOUT_S = 2.0  # the shortest per-reply limit derived from step_timeout_s


def no_answer(what: str, reply_s: float, *, policy: bool = False) -> str:
    """The one wording of a reply that did not come within the reply timeout, for every
    message that reports one (validate's findings, eval's episode errors): which budget ran
    out and the two knobs, since a slow first answer is most often a start that was not
    finished when the server said it was ready, not a broken endpoint.

    Args:
        what: who did not answer, e.g. ``"`GET /metadata`"`` or ``"Policy `server.oracle:policy`"``.
        reply_s: the reply timeout that ran out, seconds.
        policy: a policy process (the start belongs in its module's import) rather than
            the server (the start belongs before ``/health`` answers healthy).

    Returns:
        Two sentences, ending with a full stop.
    """
    start = (
        "when its module is imported"
        if policy
        else "at start-up, before GET /health answers healthy,"
    )
    return (
        f"{what}: no answer within {reply_s:g} s, the reply timeout. If it is slow rather "
        "than stuck, raise that timeout (`--reply-timeout S`); if its first answer pays for "
        f"a slow start (a worker, a model), do that work {start} and declare how long it "
        "takes (`envkit.startup_timeout_s` in openenv.yaml, or `--startup-timeout S`)."
    )


@dataclass(frozen=True)
class Timeouts:
    """The three time limits of a command that talks to an environment, in seconds.

    Resolved once (:func:`resolve_timeouts`) from the options and the manifest and passed
    down; ``--timeout`` means the same thing in every command.

    Attributes:
        budget_s: the whole run (``--timeout``): start-up, every episode and the stop; ``None``
            when the command has no budget (``envkit run`` serves until Ctrl-C).
        startup_s: waiting for ``GET /health`` after the server starts (``--startup-timeout``,
            default the manifest's ``startup_timeout_s``), never more than ``budget_s``.
        reply_s: waiting for one answer (a ``reset``, ``step``, ``state`` frame or an HTTP
            request; ``--reply-timeout``, default ``max(2, 2 x step_timeout_s)``: the
            manifest's ``step_timeout_s`` is a p95 latency budget, so one slow answer gets
            twice that), never more than ``budget_s``.
    """

    budget_s: float | None
    startup_s: float
    reply_s: float

    def deadline(self, start: float) -> float | None:
        """``time.monotonic()`` value at which the budget runs out, or ``None``."""
        return None if self.budget_s is None else start + self.budget_s


def resolve_timeouts(
    spec: EnvSpec,
    *,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
) -> Timeouts:
    """Turn ``--timeout``, ``--startup-timeout``, ``--reply-timeout`` and the manifest's
    ``step_timeout_s``/``startup_timeout_s`` (``spec``, from :func:`env_spec`) into
    :class:`Timeouts`.

    Raises:
        UsageError: a given value is not > 0.
    """
    for name, value in (
        ("--timeout", timeout_s),
        ("--startup-timeout", startup_timeout_s),
        ("--reply-timeout", reply_timeout_s),
    ):
        if value is not None and not value > 0:
            raise UsageError(
                f"{name} must be > 0 seconds, got {value!r}.",
                hint=f"Pass {name} with a positive number of seconds.",
            )
    startup = startup_timeout_s if startup_timeout_s is not None else float(spec.startup_timeout_s)
    reply = (
        reply_timeout_s
        if reply_timeout_s is not None
        else max(MIN_REPLY_TIMEOUT_S, 2 * float(spec.step_timeout_s))
    )
    if timeout_s is not None:
        startup = min(startup, timeout_s)
        reply = min(reply, max(timeout_s, 0.5))
    return Timeouts(budget_s=timeout_s, startup_s=startup, reply_s=reply)
