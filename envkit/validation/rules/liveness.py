"""EK4xx liveness: the server starts, answers in time and stays up; envkit's checks finish.

EK430: a crash inside one
check becomes a finding and the stage goes on). The stops themselves are detected by the
engine (:class:`envkit.validation.engine.Stop`); this module says what they mean.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from envkit.envdir.project import no_answer
from envkit.errors import ServerStartError
from envkit.findings import Severity, register
from envkit.validation.engine import (
    NoAnswer,
    ObservationTooLarge,
    OutOfTime,
    ServerDied,
    ServerPlayer,
    Stop,
)
from envkit.wire import MAX_OBSERVATION_BYTES, OBSERVATION_TOO_LARGE

SERVER_START_FAILED = register(
    "EK401",
    "server-start-failed",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="The environment server exits or does not answer GET /health in time.",
    what="envkit starts `uvicorn <app>` from openenv.yaml on a free 127.0.0.1 port and waits "
    "for `GET /health` for `envkit.startup_timeout_s` seconds (or `--timeout`). When "
    "that process exits, envkit tries the other ways the environment's files describe, "
    "in order: the package form from the parent folder (`uvicorn NAME.server.app:app`, "
    "what in-repo OpenEnv environments need), `[project.scripts] server`, and the "
    "Dockerfile's `CMD` translated to a local command; the finding comes when none "
    "serves, and leads with the root-cause line of the log.",
    why="A server that does not start is a Space stuck in RUNTIME_ERROR and a trainer that "
    "never gets its first observation.",
    example="`ModuleNotFoundError: No module named 'models'` in server/app.py; a dataset "
    "download at import time that takes longer than the timeout.",
    fix="Read the log tail in the message, fix the import or start-up error, or raise "
    "`envkit.startup_timeout_s`.",
)

DECLARED_START_FAILS = register(
    "EK447",
    "declared-start-fails",
    Severity.WARNING,
    rfc008="runtime.startup",
    summary="The server starts only another way than the manifest declares; as declared it exits.",
    what="envkit starts the manifest's `app` (`uvicorn <app>` from the environment folder) "
    "first. When that exits and another way the environment's files describe serves "
    "(EK401 lists them: the package form from the parent folder, `[project.scripts] "
    "server`, the Dockerfile's `CMD`), envkit validates the environment started that way "
    "and reports here the declared command, the last line of the error it gave, and the "
    "way envkit started it instead.",
    why="A Hugging Face Space and `openenv` start the environment as declared, not as envkit "
    "worked around it: the environment validates, yet the Space stays in RUNTIME_ERROR "
    "and `openenv validate` cannot reach it.",
    example="`server/app.py` imports `from ..models import Action` (an in-repo environment of "
    "huggingface/OpenEnv `envs/`): `uvicorn server.app:app` from the environment folder "
    "exits with `ImportError: attempted relative import beyond top-level package`.",
    fix="Make the declared command work from the environment folder (absolute imports with "
    "the folder on `sys.path`, as `openenv init` writes them), or declare the command that "
    "works (`app` in openenv.yaml, the Dockerfile's `CMD`).",
)

STEP_LATENCY = register(
    "EK421",
    "step-latency-over-budget",
    Severity.WARNING,
    rfc008="runtime.resource_bounds",
    summary="The 95th percentile of step latency exceeds `envkit.step_timeout_s`.",
    what="envkit times every `step` it sends (request to answer) and compares the p95 with "
    "`envkit.step_timeout_s` (5 s by default).",
    why="A slow step throttles every rollout; OpenEnv has no server-side step timeout.",
    example="`step` calls a remote judge synchronously.",
    fix="Make `step` faster (cache, batch, precompute) or raise `envkit.step_timeout_s` "
    "when the latency is expected.",
    classes=("rl-envdoctor:slow-grader",),
)

ENV_UNRESPONSIVE = register(
    "EK422",
    "env-unresponsive",
    Severity.ERROR,
    summary="The environment did not answer a request within the reply timeout.",
    what="Every request envkit sends has a deadline, the reply timeout (`--reply-timeout`; "
    "default twice `envkit.step_timeout_s`, at least 2 s, at most `--timeout`). A "
    "WebSocket frame without an answer stops the runtime stage; an HTTP request without "
    "one (GET /health, /schema, /metadata, POST /mcp) is reported here, not as a broken "
    "route, and the other checks go on. A server whose first requests pay for a slow "
    "start (a worker, a model) should do that work before /health answers healthy and "
    "declare it (`envkit.startup_timeout_s`).",
    why="A hanging `step` hangs the trainer's rollout worker and holds its session slot forever.",
    example="`step` waits on a subprocess that never exits.",
    fix="Find what `step`/`reset` waits on; put a timeout on every blocking call inside it. "
    "When the server is only slow, raise --reply-timeout.",
)

SERVER_DIED = register(
    "EK423",
    "server-died",
    Severity.ERROR,
    summary="The server process exited while envkit was playing it.",
    what="envkit watches the server it started; when it exits during the runtime stage, "
    "the log tail is reported.",
    why="A crash in one session takes down every other session of the Space.",
    example="`step` calls `sys.exit()` or segfaults in a native extension.",
    fix="Read the log tail in the message and fix the crash.",
)

OBSERVATION_TOO_LARGE_RULE = register(
    "EK432",
    "observation-too-large",
    Severity.ERROR,
    summary="An observation frame is larger than envkit goes on with (4 MiB of JSON).",
    what="envkit measures every frame `reset` and `step` answer. One over 4 MiB stops the "
    "runtime stage at once, as `envkit eval` ends its episode with "
    f"`{OBSERVATION_TOO_LARGE}`: the finding names the call, the frame's size and the "
    "limit, and the checks not yet played are skipped with that reason.",
    why="Every later call would carry as much: a trainer keeps each observation in memory and "
    "in its logs, and no model reads megabytes a turn. Played to the end, such a server "
    "takes minutes and says nothing.",
    example="`reset` puts a whole dataset (or an image as a list of numbers) in the observation.",
    fix="Send what the agent needs to act on: a window, a summary, a path or a URL to the rest.",
)

CHECK_CRASHED = register(
    "EK430",
    "runtime-check-crashed",
    Severity.ERROR,
    summary="One of envkit's runtime checks crashed; the other checks ran.",
    what="Every runtime check runs guarded: an exception inside envkit's own check (not in "
    "the environment) ends that check only, is reported here with the check's name "
    "and the error, and the stage goes on with the next check.",
    why="A bug in one check must neither hide the findings of the others nor pass "
    "silently: the rules that check would have decided were not evaluated, so the run "
    "cannot count as clean.",
    example="An answer shape envkit did not expect makes the determinism check raise "
    "`TypeError`; the capacity and reward checks still run and report.",
    fix="Report it to envkit with the output of `ENVKIT_DEBUG=1 envkit validate ...` (it "
    "adds the traceback); meanwhile `--ignore EK430` lets CI pass on the other checks.",
)


def start(engine: ServerPlayer, app: str) -> bool:
    """Start the environment's server (EK401) from ``engine.env_root`` in
    ``engine.python``, trying every way its files describe
    (:func:`envkit.envdir.launch.launch_candidates`). ``False`` when none
    started (reported: the root-cause line first, then the command, then the log tail)."""
    root, python = engine.env_root, engine.python
    if root is None or python is None:
        raise ValueError("the engine has no environment directory or interpreter to start")
    engine.progress(f"starting `{app}` with {python}")
    engine.ran(SERVER_START_FAILED)
    try:
        engine.start_server(app)
    except ServerStartError as exc:
        details = (exc.details or "").strip()
        cause = getattr(exc, "root_cause", None)
        attempts = getattr(exc, "attempts", None) or []
        if attempts:  # exited: the message already leads with the root cause
            message = (
                f"{exc.message} The server must answer GET /health within "
                f"{engine.settings.startup_s:g} s." + (f"\n{details}" if details else "")
            )
        else:
            message = (
                f"The server must answer GET /health within "
                f"{engine.settings.startup_s:g} s; "
                f"{exc.message[0].lower()}{exc.message[1:]}"
                + (f" Log tail:\n{details}" if details else "")
            )
        engine.add(
            SERVER_START_FAILED,
            message,
            fix=_start_fix(root, python, cause, exited=bool(attempts)),
            log_tail=details,
            root_cause=cause,
            tried=[a.command for a in attempts],
        )
        return False
    engine.ran(DECLARED_START_FAILS)
    if engine.server is not None and engine.server.attempts:
        engine.progress(f"started with the {engine.launch}")
        declared_start(engine, engine.server.attempts[0])
    return True


def _start_fix(root: Path, python: str, cause: str | None, *, exited: bool) -> str | None:
    """The fix that fits how the start failed; ``None`` keeps the rule's own (which also
    names the start-up timeout, the one fix for a server too slow to answer)."""
    if not exited:
        return None
    venv = root / ".venv" / "bin" / "python"
    # ``cause``: the root-cause line of the log (:func:`envkit.envdir.launch.root_cause`)
    missing = cause is not None and cause.startswith(("ModuleNotFoundError", "ImportError"))
    if missing and not venv.exists():
        return (
            f"The environment has no venv, so envkit served it with {python}, which lacks "
            f"what it imports: `cd {root} && uv venv && uv pip install --python "
            ".venv/bin/python -e .`, or pass --python with an interpreter that has it."
        )
    return "Fix the error the message starts with (the log's root cause); waiting longer does not help: the server exited."


def declared_start(engine: ServerPlayer, declared: Any) -> None:
    """EK447: the declared way (``declared``, the first :class:`envkit.server.Attempt`, the
    manifest form) exited, and envkit serves the environment another way
    (:attr:`ServerPlayer.launch`). The error shown is the root-cause line of its output
    (:func:`envkit.envdir.launch.root_cause`), else its last line."""
    if declared.candidate.kind != "manifest":
        return
    lines = [ln.strip() for ln in (declared.log_tail or "").splitlines() if ln.strip()]
    error = (
        declared.cause.line
        if declared.cause is not None
        else (lines[-1] if lines else f"exit code {declared.exit_code}")
    )
    engine.add(
        DECLARED_START_FAILS,
        f"The server must start as declared: Spaces and `openenv` run it that way; "
        f"`{declared.command}` ({declared.candidate.source or 'the manifest'}) exited "
        f"with code {declared.exit_code}: `{error}`. envkit validated it started with the "
        f"{engine.launch} instead.",
        declared=declared.command,
        error=error,
        exit_code=declared.exit_code,
        launch=engine.launch,
    )


def stopped(engine: ServerPlayer, stop: Stop) -> None:
    """Report why the stage stopped early (EK422 no answer or out of time, EK423 died,
    EK432 an observation over the size limit)."""
    if isinstance(stop, ObservationTooLarge):
        engine.add(
            OBSERVATION_TOO_LARGE_RULE,
            f"{stop.what} must answer a frame of at most {MAX_OBSERVATION_BYTES / 2**20:g} MiB "
            f"(what `envkit eval` goes on with); it answered {stop.size / 2**20:.1f} MiB. "
            "The runtime stage stopped here: every later call would carry as much.",
            request=stop.what,
            size_bytes=stop.size,
            limit_bytes=MAX_OBSERVATION_BYTES,
        )
        engine.ran(OBSERVATION_TOO_LARGE_RULE)
    elif isinstance(stop, ServerDied):
        engine.add(
            SERVER_DIED,
            f"The server process must keep running; it exited with code "
            f"{stop.exit_code} during the runtime stage. Log tail:\n{stop.log_tail}".rstrip(),
            log_tail=stop.log_tail,
            exit_code=stop.exit_code,
        )
        engine.ran(SERVER_DIED)
    elif isinstance(stop, NoAnswer):
        engine.add(
            ENV_UNRESPONSIVE,
            no_answer(stop.what, engine.settings.reply_s)
            + " If it never answers, the environment blocks (an endless loop, a call "
            "without a timeout).",
            request=stop.what,
        )
        engine.ran(ENV_UNRESPONSIVE)
    elif isinstance(stop, OutOfTime):
        engine.add(
            ENV_UNRESPONSIVE,
            f"The runtime stage must finish within {engine.settings.budget_s:g} s; it "
            "ran out of time. Most likely `step` or `reset` is slow.",
            fix="Make `step`/`reset` faster, or raise --timeout.",
        )
        engine.ran(ENV_UNRESPONSIVE)


#: The findings a stop of the runtime stage is reported as (:func:`stopped`).
STOP_CODES = frozenset({OBSERVATION_TOO_LARGE_RULE.code, SERVER_DIED.code, ENV_UNRESPONSIVE.code})


def frame_sizes(engine: ServerPlayer) -> None:
    """EK432 is evaluated once the round trip played (every answer after it was measured;
    a frame over the limit stopped the stage and was reported by :func:`stopped`)."""
    if "round trip" in engine.checks:
        engine.ran(OBSERVATION_TOO_LARGE_RULE)


def unanswered(engine: ServerPlayer, request: str) -> bool:
    """EK422 for an HTTP ``request`` (``"GET /metadata"``) that got no answer within the reply
    timeout (:attr:`ServerPlayer.unanswered`): the route is not shown broken, the budget ran
    out, and the finding names it. ``False`` when ``request`` was answered (or failed
    otherwise), for its own rule to judge. Each timeout recorded is reported once."""
    if request not in engine.unanswered:
        return False
    engine.unanswered.remove(request)
    engine.add(
        ENV_UNRESPONSIVE,
        no_answer(f"`{request}`", engine.settings.reply_s),
        request=request,
        fix="Raise --reply-timeout when the server is only slow; when its first request pays "
        "for a slow start, do that work at start-up and declare `envkit.startup_timeout_s`.",
    )
    engine.ran(ENV_UNRESPONSIVE)
    return True


def crashes(engine: ServerPlayer) -> None:
    """EK430: one finding per check that crashed inside envkit (evaluated once any check
    ran guarded)."""
    if not engine.checks:
        return
    engine.ran(CHECK_CRASHED)
    for check, error, tb in engine.crashes:
        engine.add(
            CHECK_CRASHED,
            f"envkit's `{check}` check must run to its end; it crashed with {error}. "
            "The rules it decides were not evaluated; the other checks ran. This is a "
            "bug in envkit, not in the environment." + (f"\n{tb.rstrip()}" if tb else ""),
            check=check,
            error=error,
            traceback=tb,
        )


def latency(engine: ServerPlayer) -> None:
    """EK421: the p95 of the step latencies against ``step_timeout_s`` (>= 5 steps)."""
    if len(engine.latencies) < 5:
        return
    engine.ran(STEP_LATENCY)
    lat = sorted(engine.latencies)
    p95 = lat[min(len(lat) - 1, math.ceil(0.95 * len(lat)) - 1)]
    budget = engine.settings.step_timeout_s
    if p95 > budget:
        engine.add(
            STEP_LATENCY,
            f"The p95 step latency must stay within `step_timeout_s` ({budget:g} s); "
            f"it was {p95:.3f} s over {len(lat)} steps.",
            p95_s=p95,
        )
