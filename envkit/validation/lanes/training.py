"""The training-path lane of ``envkit validate`` (EK7xx): the environment's training-side code
works in its own interpreter, the way a trainer uses it.

What it plays, in one child process of the environment's interpreter (``EnvDir.python()``;
envkit never imports environment code into its own process, as :mod:`envkit.policy`):

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
failure is a finding located at the last traceback frame inside the environment directory.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit import programs
from envkit.findings import Finding, Location

ADAPTER_NAME = "trl_env.py"
"""The TRL adapter of an environment: ``trl_env.py`` at its root (what the multi-turn
templates generate; the manifest names no other)."""

TIMEOUT_S = 120.0
"""Seconds the lane may take at most (capped by what is left of the run's budget): imports,
building the adapter, one oracle episode, and the tests' collection."""

_TESTS = "tests"
"""The environment's test folder, collected with ``pytest --collect-only``."""

_CLOSED_PORT_URL = "http://127.0.0.1:9"
"""Where ``API_BASE_URL`` points while ``inference.py`` is imported: the discard port, closed
on loopback, so an import-time model call is refused at once."""


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


def has_adapter(root: Path) -> bool:
    """Whether the environment at ``root`` has a TRL adapter (``trl_env.py``)."""
    return (root / ADAPTER_NAME).is_file()


def package_name(root: Path) -> str:
    """The import name of the environment's package: the ``[tool.setuptools] package-dir``
    key mapped to ``"."`` (what the templates write), else the normalised ``[project] name``,
    else the normalised directory name."""
    from envkit.envdir import EnvDir
    from envkit.names import normalise_name

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
        if not (self.target.root / _TESTS).is_dir():
            outcome.skipped["EK706"] = f"the environment has no {_TESTS}/ folder"
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


def run_train_path(
    target: TrainPathTarget,
    *,
    timeout_s: float = TIMEOUT_S,
    progress: Callable[[str], None] | None = None,
) -> TrainPathOutcome:
    """Play the training path of ``target`` (see the module docstring), against
    ``target.url`` or a server of the environment started here.

    Never raises for a misbehaving environment: an import error, a hang (past ``timeout_s``)
    or a crash of the child becomes a finding. Every process started here (the server, the
    children and whatever they started) is stopped before returning.

    Args:
        target: what to play.
        timeout_s: seconds the lane may take at most.
        progress: called with short progress lines.

    Returns:
        The :class:`TrainPathOutcome`.
    """
    t0 = time.perf_counter()
    if progress:
        progress("training path: the adapter, client, inference script and tests")
    run = TrainPathRun(target)
    try:
        outcome = run.play_own_server(timeout_s=timeout_s)
    finally:
        run.stop()
    outcome.seconds = time.perf_counter() - t0
    return outcome


class _Child:
    """One child process of the environment's interpreter, marked like a server so that
    whatever it starts is stopped with it (:func:`envkit.server.kill_marked`)."""

    def __init__(self, proc: subprocess.Popen[str], run_id: str) -> None:
        self.proc, self.run_id, self.timed_out = proc, run_id, False

    @classmethod
    def start(cls, argv: list[str], target: TrainPathTarget) -> _Child:
        """Start ``argv`` in the environment directory, with ``API_BASE_URL`` a closed port
        (``ENV_URL`` comes later, on its stdin)."""
        from envkit.server import bytecode_env, marked_env, new_run_id

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
        from envkit.server import kill_marked

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
        _TESTS if (target.root / _TESTS).is_dir() else "",
    ]


def _start_server(target: TrainPathTarget) -> tuple[Any, str | None, str]:
    """Start the environment's server without waiting for it (``(server, url, note)``);
    ``target.url`` when given. A server that cannot start is a note: the runtime stage
    reports it (EK401)."""
    from envkit.errors import EnvkitError

    if target.url:
        return None, target.url, ""
    from envkit.server import start_server

    try:
        server = start_server(target.root, target.app, python=target.python)
    except EnvkitError as exc:
        note = f"training path: the server did not start ({exc}); the adapter was not built"
        return None, None, note
    return server, server.url, ""


def _wait_healthy(server: Any, deadline: float) -> tuple[bool, str]:
    """Wait for ``GET /health`` until ``deadline`` (``time.monotonic()``); ``(ok, note)``."""
    from envkit.errors import EnvkitError

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


#: The rule of each step of the driver (``at`` lines, ``fail`` events).
_PHASE_CODE = {
    "package": "EK705",
    "client": "EK705",
    "inference": "EK705",
    "adapter": "EK701",
    "build": "EK701",
    "schema": "EK702",
    "reset": "EK703",
    "play": "EK703",
    "reward": "EK704",
    "collect": "EK706",
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
    "collect": f"`pytest --collect-only {_TESTS}` must collect the environment's tests",
}


def _location(target: TrainPathTarget, file: str | None, line: int | None) -> Location | None:
    """``file`` relative to the environment (``None`` when it is outside)."""
    if not file:
        return None
    path = Path(file)
    path = path if path.is_absolute() else target.root / path
    try:
        rel = path.resolve().relative_to(target.root.resolve())
    except (ValueError, OSError):
        return None
    return Location(rel.as_posix(), line if isinstance(line, int) and line > 0 else None)


def _rule(code: str) -> Any:
    import envkit.validation.rules  # noqa: F401 - registers the EK7xx rules
    from envkit.findings import RULES

    return RULES[code]


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


def _read_driver(
    target: TrainPathTarget, text: str, timed_out: bool, outcome: TrainPathOutcome
) -> None:
    """Turn the driver's lines into findings, evaluated codes and notes."""
    items = _parse_lines(text)
    for item in items:
        at = item.get("at")
        if isinstance(at, str) and at in _PHASE_CODE:
            outcome.ran.add(_PHASE_CODE[at])
        event = item.get("event")
        if event == "fail":
            outcome.findings.append(_failure(target, item))
        elif event == "note":
            outcome.notes.append(f"training path: {item.get('text')}")
        elif event == "schemas":
            _schemas(target, item, outcome)
        elif event == "reset":
            _separator(target, item, outcome)
        elif event == "reward":
            _reward(target, item, outcome)
        elif event == "collect":
            _collection(target, item, outcome)
    if not any(i.get("event") == "done" for i in items):
        outcome.findings.append(_unfinished(target, items, timed_out))
    _skip_rest(target, outcome)


def _failure(target: TrainPathTarget, item: dict[str, Any]) -> Finding:
    phase = str(item.get("phase"))
    code = _PHASE_CODE.get(phase, "EK701")
    where = f" at `{item['text']}`" if item.get("text") else ""
    subject = f" (tool `{item['tool']}`)" if item.get("tool") else ""
    action = f" for the oracle's action {json.dumps(item['action'])}" if item.get("action") else ""
    message = (
        f"{_PHASE_WANT.get(phase, 'The training path must run')}{subject}; it raised "
        f"{item.get('error')}{where}{action}."
    )
    severity = None
    missing = item.get("missing")
    if code == "EK705" and isinstance(missing, str) and not _is_local(target, missing):
        from envkit.findings import Severity

        severity = Severity.WARNING
        message += f" `{missing}` is not installed in {target.python}."
    return _rule(code).finding(
        message,
        location=_location(target, item.get("file"), item.get("line")),
        severity=severity,
        phase=phase,
        error=item.get("error"),
    )


def _is_local(target: TrainPathTarget, module: str) -> bool:
    """Whether ``module`` is the environment's own (its package, or a file or folder at its
    root): a missing one is a defect, a missing third-party one a missing install."""
    top = module.split(".")[0]
    root = target.root
    return top == package_name(root) or (root / f"{top}.py").is_file() or (root / top).is_dir()


def _schemas(target: TrainPathTarget, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    if item.get("checked"):
        outcome.ran.add("EK702")
        return
    why = f"transformers is not importable in {target.python} ({item.get('why')})"
    outcome.skipped["EK702"] = why
    outcome.notes.append(f"training path: the tools' JSON schemas were not checked: {why}")


def _separator(target: TrainPathTarget, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    outcome.ran.add("EK707")
    text = item.get("text")
    if not isinstance(text, str) or text.startswith("\n"):
        return
    glued = "Play." + text[:40].replace("\n", " ")
    outcome.findings.append(
        _rule("EK707").finding(
            f"TRL appends `reset()`'s text to the prompt with no separator; it starts with "
            f"{text[:40]!r}, so the model reads {glued!r}.",
            location=_location(target, item.get("file"), item.get("line")),
        )
    )


def _reward(target: TrainPathTarget, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    outcome.ran.add("EK704")
    if item.get("ok"):
        return
    outcome.findings.append(
        _rule("EK704").finding(
            f"`get_reward()` must equal the reward of the episode's last step as the server "
            f"sent it ({item.get('wire')!r}); it returned {item.get('adapter')!r}.",
            location=_location(target, item.get("file"), item.get("line")),
            adapter=item.get("adapter"),
            wire=item.get("wire"),
        )
    )


def _unfinished(target: TrainPathTarget, items: list[dict[str, Any]], timed_out: bool) -> Finding:
    """The finding of a driver that hung (past the lane's timeout) or exited early: on the
    step it had started."""
    steps = [str(i["at"]) for i in items if isinstance(i.get("at"), str)]
    phase = steps[-1] if steps else "package"
    why = "did not finish within the training path's time limit" if timed_out else "exited early"
    file = {"inference": "inference.py", "client": "client.py", "collect": _TESTS}.get(
        phase, ADAPTER_NAME
    )
    if phase == "package":
        file = "__init__.py"
    return _rule(_PHASE_CODE.get(phase, "EK701")).finding(
        f"{_PHASE_WANT.get(phase, 'The training path must run')}; the step {why} (an "
        "endless loop, a call without a timeout, or `os._exit` at import).",
        location=_location(target, str(target.root / file), None),
        phase=phase,
    )


def _skip_rest(target: TrainPathTarget, outcome: TrainPathOutcome) -> None:
    from envkit.validation import report as R

    adapter_codes = ("EK701", "EK702", "EK703", "EK704", "EK707")
    for code in ("EK701", "EK702", "EK703", "EK704", "EK705", "EK707"):
        if code in outcome.ran or code in outcome.skipped:
            continue
        if code in adapter_codes and not has_adapter(target.root):
            outcome.skipped[code] = R.NO_TRL_ADAPTER
        else:
            outcome.skipped[code] = R.TRAIN_PATH_NOT_REACHED


_FRAME = re.compile(r"^(\S+?\.py):(\d+): in ", re.MULTILINE)


def _collection(target: TrainPathTarget, item: dict[str, Any], outcome: TrainPathOutcome) -> None:
    """Turn the driver's ``pytest --collect-only`` result into EK706 findings (one per
    module that does not collect)."""
    if not item.get("installed"):
        why = f"pytest is not importable in {target.python} ({item.get('why')})"
        outcome.skipped["EK706"] = why
        outcome.notes.append(f"training path: {_TESTS}/ was not collected: {why}")
        return
    outcome.ran.add("EK706")
    failed = item.get("failed") or []
    for report in failed:
        module = str(report.get("nodeid") or _TESTS)
        outcome.findings.append(_collect_finding(target, module, str(report.get("text") or "")))
    if not failed and item.get("code") not in (0, 5):  # 5: no tests collected
        outcome.findings.append(
            _rule("EK706").finding(
                f"{_PHASE_WANT['collect']}; pytest exited with code {item.get('code')}.",
                location=Location(_TESTS),
            )
        )


def _collect_finding(target: TrainPathTarget, module: str, section: str) -> Finding:
    """One module's collection error: located at its last frame inside the environment."""
    file, line, code = module, None, ""
    for frame in _FRAME.finditer(section):
        loc = _location(target, frame.group(1), int(frame.group(2)))
        if loc is not None and ".venv/" not in loc.file and "site-packages" not in loc.file:
            file, line = frame.group(1), int(frame.group(2))
            rest = section[frame.end() :].splitlines()
            code = rest[1].strip() if len(rest) > 1 else ""
    errors = [ln[1:].strip() for ln in section.splitlines() if ln.startswith("E ")]
    error = errors[-1] if errors else "a collection error"
    where = f" at `{code}`" if code else ""
    return _rule("EK706").finding(
        f"`pytest --collect-only tests` must collect `{module}`; it raised {error}{where}.",
        location=_location(target, file, line) or Location(module),
        error=error,
    )


@dataclass(frozen=True)
class LanePlan:
    """How validate's orchestration asks for the lane.

    Attributes:
        root: the environment directory, ``None`` for ``--url`` only.
        url: the server to play against (``--url``, the docker lane's container); ``None``:
            start the environment's own server.
        manifest: the parsed manifest, ``None`` when it could not be read.
        app: the app to start without a readable manifest (``None``: the manifest's).
        skip: why the lane does not run (``""``: it runs).
    """

    root: Path | None
    url: str | None
    manifest: Any
    app: str | None = None
    skip: str = ""


class StartedLane:
    """The lane of one ``envkit validate`` run, its driver already started
    (:func:`start_lane`); :meth:`play` or :meth:`stop` ends it.

    Args:
        run: the started driver. budget: the run's
            :class:`~envkit.validation.engine.Budget`. ev: where the outcome goes.
    """

    def __init__(self, run: TrainPathRun, budget: Any, ev: Any) -> None:
        self.run, self.budget, self.ev = run, budget, ev

    def play(self, url: str | None) -> list[str]:
        """Play the server at ``url`` (``None``: one started for the lane) into the run's
        results; the notes for the report."""
        from envkit.findings import Stage, codes_of
        from envkit.validation import report as R

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


def start_lane(plan: LanePlan, opts: Any, budget: Any, ev: Any) -> StartedLane | list[str]:
    """Start the lane of ``envkit validate``, or say why it does not run.

    Every EK7xx code ends up evaluated or skipped with a reason: ``plan.skip``, no
    adapter, no time left, declared dependencies not installed, or (after :meth:`play
    <StartedLane.play>`) a step the lane did not reach.

    Args:
        plan: what to play, or why not. opts: the run's
            :class:`~envkit.validation.RunOptions` (``python``, ``progress``).
        budget: the run's :class:`~envkit.validation.engine.Budget`.
        ev: an :class:`~envkit.validation.report.Evaluated` for findings, evaluated
            codes, skip reasons and the lane's timing.

    Returns:
        The :class:`StartedLane` (its driver importing), or the notes for the report when
        the lane does not run (its codes are then skipped in ``ev``).

    Raises:
        UsageError: ``opts.python`` is not an executable.
    """
    from envkit.envdir.constants import DEFAULT_APP, VALIDATE_MAX_STEPS
    from envkit.findings import Stage, codes_of
    from envkit.validation import report as R

    codes = codes_of(Stage.TRAINING)
    root = plan.root
    skip = plan.skip
    if not skip and root is None:
        skip = R.TRAIN_PATH_NO_ROOT
    if not skip and root is not None and not has_adapter(root):
        skip = R.NO_TRL_ADAPTER
    if not skip and budget.remaining_s() < 1.0:
        skip = "the run's --timeout was spent before the training path"
    if skip or root is None:
        ev.skipped.update(dict.fromkeys(codes, skip))
        return []
    python = _python(root, opts.python)
    absent = _absent_dependencies(root, python)
    if absent:
        ev.skipped.update(dict.fromkeys(codes, absent))
        return [f"training path: not played: {absent}"]
    spec = plan.manifest.spec if plan.manifest is not None else None
    target = TrainPathTarget(
        root=root,
        python=python,
        url=plan.url,
        app=plan.app or (plan.manifest.app if plan.manifest is not None else DEFAULT_APP),
        oracle=spec.oracle if spec is not None else None,
        seed=int(spec.seeds[0]) if spec is not None and spec.seeds else 0,
        max_steps=(spec.max_steps if spec is not None else None) or VALIDATE_MAX_STEPS,
    )
    if opts.progress:
        opts.progress("training path: the adapter, client, inference script and tests")
    return StartedLane(TrainPathRun(target), budget, ev)


def play_lane(plan: LanePlan, opts: Any, budget: Any, ev: Any) -> list[str]:
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


def _absent_dependencies(root: Path, python: str) -> str:
    """Why the lane cannot judge the environment's code with ``python`` (``""``: it can).

    The lane imports the environment's modules in that interpreter: when a declared
    dependency is not installed there (no venv yet, or envkit's own interpreter), every
    import error would be the machine's, not the environment's (EK223 skips alike)."""
    from envkit.deps import absent_requirements
    from envkit.envdir import EnvDir

    requires = EnvDir(root).project_table.get("dependencies")
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


def _python(root: Path, python: str | None) -> str:
    from envkit.envdir import EnvDir

    return EnvDir(root).python(python)
