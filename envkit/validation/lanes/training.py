"""The training-path lane of ``envkit validate`` (EK7xx): the environment's training-side code
works in its own interpreter, the way a trainer uses it.

What it plays, in one child process of the environment's interpreter (``EnvDir.python()``)
running :mod:`envkit.programs.trl_driver` (envkit never imports environment code into its
own process, as :mod:`envkit.policy`):

1. the environment's package with ``client.py``, and ``inference.py``, imported (import only:
   ``__name__`` is not ``"__main__"``, and ``API_BASE_URL`` points at a closed port so a
   script that calls a model at import time fails at once instead of waiting);
2. the TRL adapter (``trl_env.py``) imported and built as TRL 1.16's
   ``GRPOTrainer(environment_factory=...)`` does (``trl/trainer/grpo_trainer.py`` of the
   1.16.0 wheel, about l.680-700): the class called with no arguments, its tools listed with
   ``inspect.getmembers(type(instance), inspect.isfunction)`` minus ``reset``,
   ``get_reward`` and names starting with ``_``, each tool's JSON schema made by
   ``transformers.utils.get_json_schema`` when transformers is installed there;
3. ``reset(prompt=..., seed=...)`` (TRL calls ``reset(**row)`` with the dataset row) against
   a live server, the oracle's episode played through the tools (a tool's arguments are the
   action's fields; each candidate call is first tried with the client's ``step`` intercepted,
   so only a call that builds exactly the oracle's action reaches the server), and
   ``get_reward()`` compared with the last reward the server sent on the wire.

Before step 2, the same child runs ``pytest --collect-only tests`` when pytest is installed
there. Steps 1 and the collection need no server, so ``envkit validate`` starts the child
with the runtime stage (:class:`TrainPathRun`): its seconds of imports overlap that stage, and
it is handed the URL of the server that stage started (``ENV_URL``, set before the adapter is
imported) once the stage has played it. Otherwise the server is the ``--url`` server, the
docker lane's container, or the environment's own started here on a free loopback port. A
failure is a finding located at the last traceback frame inside the environment directory
(:func:`envkit.validation.rules.training.read_driver` turns the driver's lines into findings).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from envkit import programs
from envkit.deps import absent_requirements
from envkit.envdir import EnvDir
from envkit.envdir.constants import VALIDATE_MAX_STEPS
from envkit.errors import EnvkitError
from envkit.findings import Stage, codes_of
from envkit.server import (
    ServerProcess,
    bytecode_env,
    kill_marked,
    marked_env,
    new_run_id,
    start_server,
)
from envkit.validation import report as R
from envkit.validation.options import Budget
from envkit.validation.report import Evaluated
from envkit.validation.rules.training import (
    ADAPTER_BROKEN,
    ADAPTER_NAME,
    IMPORT_FAILS,
    ORACLE_THROUGH_ADAPTER,
    PROMPT_GLUED,
    REWARD_MISMATCH,
    TESTS_DIR,
    TESTS_DO_NOT_COLLECT,
    TOOL_SCHEMA,
    TrainPathOutcome,
    has_adapter,
    package_name,
    read_driver,
)

TIMEOUT_S = 120.0
"""Seconds the lane may take at most (capped by what is left of the run's budget): imports,
building the adapter, one oracle episode, and the tests' collection."""

_CLOSED_PORT_URL = "http://127.0.0.1:9"
"""Where ``API_BASE_URL`` points while ``inference.py`` is imported: the discard port, closed
on loopback, so an import-time model call is refused at once."""


@dataclass(frozen=True)
class TrainPathTarget:
    """What the lane plays.

    Attributes:
        root: the environment directory (absolute).
        python: the environment's interpreter.
        url: a running server to play against (``--url``, the docker lane's container);
            ``None``: start the environment's own server here.
        app: the ASGI app to start when ``url`` is ``None`` (``module:attr``).
        oracle: the manifest's oracle (``module:callable``), ``None`` when none is declared.
        seed: the seed of the episode played (the manifest's first seed).
        max_steps: steps after which the oracle's episode is cut.
    """

    root: Path
    python: str
    url: str | None
    app: str
    oracle: str | None
    seed: int = 0
    max_steps: int = 50


class TrainPathRun:
    """The lane's driver, started before there is a server to play.

    The driver spends most of its time importing (openenv and what it pulls in take seconds)
    and collecting the tests, none of which needs the server; started first, that work
    overlaps the runtime stage. :meth:`play` then gives it the server's URL (the adapter is
    imported only then: it reads ``ENV_URL``) and reads its findings. Call :meth:`stop` in
    every case (it is idempotent).

    Args:
        target: what to play; its ``url`` is not used here (see :meth:`play`).
    """

    def __init__(self, target: TrainPathTarget) -> None:
        self.target = target
        self.driver = _Child.start(_driver_command(target), target)

    def play(
        self, url: str | None, *, timeout_s: float = TIMEOUT_S, note: str = ""
    ) -> TrainPathOutcome:
        """Play the adapter against ``url`` (``None``: no server answered, so the adapter
        is imported but not built) and turn the driver's lines into an outcome.

        Args:
            url: the server's base URL, or ``None``.
            timeout_s: seconds the driver may still take, from now.
            note: a line for the report (why there is no server).

        Returns:
            The :class:`TrainPathOutcome`; ``seconds`` is the time spent here, after the
            overlapped imports.
        """
        t0 = time.perf_counter()
        try:
            out = self.driver.finish(
                f"go {url}\n" if url else "nohealth\n", time.monotonic() + timeout_s
            )
        finally:
            self.stop()
        outcome = TrainPathOutcome()
        if note:
            outcome.notes.append(note)
        _read_driver(self.target, out, self.driver.timed_out, outcome)
        if not (self.target.root / TESTS_DIR).is_dir():
            outcome.skipped[TESTS_DO_NOT_COLLECT.code] = (
                f"the environment has no {TESTS_DIR}/ folder"
            )
        outcome.seconds = time.perf_counter() - t0
        return outcome

    def play_own_server(self, *, timeout_s: float = TIMEOUT_S) -> TrainPathOutcome:
        """:meth:`play` against ``target.url``, or else a server of the environment started
        here for it (and stopped before returning; one that does not start or answer is a
        note, the runtime stage reports it as EK401)."""
        deadline = time.monotonic() + timeout_s
        server, url, note = _start_server(self.target)
        try:
            healthy, why = _wait_healthy(server, deadline)
            left = max(0.1, deadline - time.monotonic())
            return self.play(url if healthy else None, timeout_s=left, note=note or why)
        finally:
            if server is not None:
                server.stop()

    def stop(self) -> None:
        """Stop the driver and whatever it started."""
        self.driver.stop()


class _Child:
    """One child process of the environment's interpreter, marked like a server so that
    whatever it starts is stopped with it (:func:`envkit.server.kill_marked`)."""

    def __init__(self, proc: subprocess.Popen[str], run_id: str) -> None:
        self.proc, self.run_id, self.timed_out = proc, run_id, False

    @classmethod
    def start(cls, argv: list[str], target: TrainPathTarget) -> _Child:
        """Start ``argv`` in the environment directory, with ``API_BASE_URL`` a closed port
        (``ENV_URL`` comes later, on its stdin)."""
        run_id = new_run_id()
        env = marked_env(run_id, {"PYTHONUNBUFFERED": "1", "API_BASE_URL": _CLOSED_PORT_URL})
        env.update(bytecode_env(env))
        proc = subprocess.Popen(
            argv,
            cwd=target.root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        return cls(proc, run_id)

    def finish(self, line: str, deadline: float) -> str:
        """Send ``line``, wait for the exit until ``deadline`` (``time.monotonic()``; then
        kill it); all its output."""
        try:
            out, _ = self.proc.communicate(line, timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self._kill()
            out, _ = self.proc.communicate()
        return out or ""

    def _kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def stop(self) -> None:
        """Kill the child's process group and whatever it started, however detached."""
        self._kill()
        kill_marked(self.run_id)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
            pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _driver_command(target: TrainPathTarget) -> list[str]:
    adapter = Path(ADAPTER_NAME).stem if has_adapter(target.root) else ""
    return [
        target.python,
        "-c",
        programs.source("trl_driver"),
        str(target.root),
        package_name(target.root),
        adapter,
        target.oracle or "",
        str(target.seed),
        str(target.max_steps),
        TESTS_DIR if (target.root / TESTS_DIR).is_dir() else "",
    ]


def _start_server(target: TrainPathTarget) -> tuple[ServerProcess | None, str | None, str]:
    """Start the environment's server without waiting for it (``(server, url, note)``);
    ``target.url`` when given. A server that cannot start is a note: the runtime stage
    reports it (EK401)."""
    if target.url:
        return None, target.url, ""
    try:
        server = start_server(target.root, target.app, python=target.python)
    except EnvkitError as exc:
        note = f"training path: the server did not start ({exc}); the adapter was not built"
        return None, None, note
    return server, server.url, ""


def _wait_healthy(server: ServerProcess | None, deadline: float) -> tuple[bool, str]:
    """Wait for ``GET /health`` until ``deadline`` (``time.monotonic()``); ``(ok, note)``."""
    if server is None:
        return True, ""
    try:
        server.wait_healthy(timeout_s=max(0.1, deadline - time.monotonic()))
    except EnvkitError as exc:
        return False, (
            f"training path: the server did not answer GET /health ({exc.message}); the "
            "adapter was not built or played"
        )
    return True, ""


#: The rules the driver's steps decide (EK706 is decided by the collection alone, see
#: :meth:`TrainPathRun.play`), and those that need the adapter.
_STEP_RULES = (
    ADAPTER_BROKEN,
    TOOL_SCHEMA,
    ORACLE_THROUGH_ADAPTER,
    REWARD_MISMATCH,
    IMPORT_FAILS,
    PROMPT_GLUED,
)
_ADAPTER_RULES = (
    ADAPTER_BROKEN,
    TOOL_SCHEMA,
    ORACLE_THROUGH_ADAPTER,
    REWARD_MISMATCH,
    PROMPT_GLUED,
)


def _read_driver(
    target: TrainPathTarget, text: str, timed_out: bool, outcome: TrainPathOutcome
) -> None:
    """Turn the driver's lines into findings, evaluated codes and notes
    (:func:`~envkit.validation.rules.training.read_driver`), and say why each step's rule
    that was not evaluated was not."""
    read_driver(target.root, target.python, text, timed_out, outcome)
    _skip_rest(target, outcome)


def _skip_rest(target: TrainPathTarget, outcome: TrainPathOutcome) -> None:
    for rule in _STEP_RULES:
        code = rule.code
        if code in outcome.ran or code in outcome.skipped:
            continue
        if rule in _ADAPTER_RULES and not has_adapter(target.root):
            outcome.skipped[code] = R.NO_TRL_ADAPTER
        else:
            outcome.skipped[code] = R.TRAIN_PATH_NOT_REACHED


@dataclass(frozen=True)
class LanePlan:
    """How validate's orchestration asks for the lane.

    Attributes:
        envdir: the environment directory, read once; ``None`` for ``--url`` only.
        url: the server to play against (``--url``, the docker lane's container); ``None``:
            start the environment's own server.
        app: the app to start without a readable manifest (``None``: the manifest's).
        skip: why the lane does not run (``""``: it runs).
    """

    envdir: EnvDir | None
    url: str | None
    app: str | None = None
    skip: str = ""


class LaneOptions(Protocol):
    """What the lane reads of the run's :class:`~envkit.validation.RunOptions`."""

    @property
    def python(self) -> str | None:
        """The ``--python`` interpreter (``None``: the environment's venv, else envkit's)."""

    @property
    def progress(self) -> Callable[[str], None] | None:
        """Called with short progress lines."""


class StartedLane:
    """The lane of one ``envkit validate`` run, its driver already started
    (:func:`start_lane`); :meth:`play` or :meth:`stop` ends it.

    Args:
        run: the started driver. budget: the run's
            :class:`~envkit.validation.options.Budget`. ev: where the outcome goes.
    """

    def __init__(self, run: TrainPathRun, budget: Budget, ev: Evaluated) -> None:
        self.run, self.budget, self.ev = run, budget, ev

    def play(self, url: str | None) -> list[str]:
        """Play the server at ``url`` (``None``: one started for the lane) into the run's
        results; the notes for the report."""
        if self.budget.remaining_s() < 1.0:
            self.stop()
            reason = "the run's --timeout was spent before the training path"
            self.ev.skipped.update(dict.fromkeys(codes_of(Stage.TRAINING), reason))
            return []
        timeout_s = self.budget.cap(TIMEOUT_S)
        if url:
            outcome = self.run.play(url, timeout_s=timeout_s)
        else:
            outcome = self.run.play_own_server(timeout_s=timeout_s)
        ev = self.ev
        ev.findings += outcome.findings
        ev.ran.update(outcome.ran)
        for code in codes_of(Stage.TRAINING):
            if code not in outcome.ran:
                ev.skipped[code] = outcome.skipped.get(code, R.TRAIN_PATH_NOT_REACHED)
        ev.timings["train_path"] = round(outcome.seconds, 3)
        return outcome.notes

    def stop(self) -> None:
        """Stop the driver (it did not play, or has played)."""
        self.run.stop()


def start_lane(
    plan: LanePlan, opts: LaneOptions, budget: Budget, ev: Evaluated
) -> StartedLane | list[str]:
    """Start the lane of ``envkit validate``, or say why it does not run.

    Every EK7xx code ends up evaluated or skipped with a reason: ``plan.skip``, no
    adapter, no time left, declared dependencies not installed, or (after :meth:`play
    <StartedLane.play>`) a step the lane did not reach.

    Args:
        plan: what to play, or why not. opts: the run's
            :class:`~envkit.validation.RunOptions` (``python``, ``progress``).
        budget: the run's :class:`~envkit.validation.options.Budget`.
        ev: an :class:`~envkit.validation.report.Evaluated` for findings, evaluated
            codes, skip reasons and the lane's timing.

    Returns:
        The :class:`StartedLane` (its driver importing), or the notes for the report when
        the lane does not run (its codes are then skipped in ``ev``).

    Raises:
        UsageError: ``opts.python`` is not an executable.
    """
    codes = codes_of(Stage.TRAINING)
    envdir = plan.envdir
    skip = plan.skip
    if not skip and envdir is None:
        skip = R.TRAIN_PATH_NO_ROOT
    if not skip and envdir is not None and not has_adapter(envdir.root):
        skip = R.NO_TRL_ADAPTER
    if not skip and budget.remaining_s() < 1.0:
        skip = "the run's --timeout was spent before the training path"
    if skip or envdir is None:
        ev.skipped.update(dict.fromkeys(codes, skip))
        return []
    python = envdir.python(opts.python)
    absent = _absent_dependencies(envdir, python)
    if absent:
        ev.skipped.update(dict.fromkeys(codes, absent))
        return [f"training path: not played: {absent}"]
    spec = envdir.spec if envdir.manifest is not None else None
    target = TrainPathTarget(
        root=envdir.root,
        python=python,
        url=plan.url,
        app=plan.app or envdir.app,
        oracle=spec.oracle if spec is not None else None,
        seed=int(spec.seeds[0]) if spec is not None and spec.seeds else 0,
        max_steps=(spec.max_steps if spec is not None else None) or VALIDATE_MAX_STEPS,
    )
    if opts.progress:
        opts.progress("training path: the adapter, client, inference script and tests")
    return StartedLane(TrainPathRun(target), budget, ev)


def play_lane(plan: LanePlan, opts: LaneOptions, budget: Budget, ev: Evaluated) -> list[str]:
    """Start the lane and play it at once against ``plan.url`` (the ``--url`` server or the
    docker lane's container), or a server started for it (see :func:`start_lane`); the
    notes for the report.

    Raises:
        UsageError: ``opts.python`` is not an executable.
    """
    lane = start_lane(plan, opts, budget, ev)
    if isinstance(lane, list):
        return lane
    try:
        return lane.play(plan.url)
    finally:
        lane.stop()


def _absent_dependencies(envdir: EnvDir, python: str) -> str:
    """Why the lane cannot judge the environment's code with ``python`` (``""``: it can).

    The lane imports the environment's modules in that interpreter: when a declared
    dependency is not installed there (no venv yet, or envkit's own interpreter), every
    import error would be the machine's, not the environment's (EK223 skips alike)."""
    requires = envdir.project_table.get("dependencies")
    if not isinstance(requires, list):
        return ""
    absent = absent_requirements(python, [str(r) for r in requires])
    if not absent:
        return ""
    names = ", ".join(f"`{n}`" for n in absent)
    return (
        f"declared dependencies ({names}) are not installed for {python}: create the "
        "environment's venv (`uv sync`) or pass --python"
    )
