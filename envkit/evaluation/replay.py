"""``envkit eval replay DIR [PATH | --url URL]``: replay a run's saved episodes against another
version of the environment and name the episodes whose rewards changed.

Each saved episode (a line of ``DIR/trajectories.jsonl``) is replayed with its seed and the
actions it sent, in order, on one WebSocket session: ``reset(seed)`` (eval sends no other
reset option), then one ``step`` per sent action until the environment says ``done``.
Actions that were never sent (a reply that was not an action, a failed policy) are skipped,
as they were. The trace of an episode is, per sent action, the step's reward and ``done``
(or the error code the environment answered).

Every episode is replayed twice against the new version first: when the two replays differ
from each other the environment is not deterministic for that episode, and comparing it with
the saved episode would prove nothing, so it is reported as such (not as changed). Episodes
whose run lost the session are skipped: their saved trace is incomplete.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvProject
from envkit.envdir.project import env_spec, resolve_python, resolve_timeouts
from envkit.errors import ExitCode, UsageError, WireError
from envkit.evaluation.output import TRAJECTORIES_FILE
from envkit.evaluation.records import EpisodeRecord
from envkit.evaluation.rundir import kept_episodes
from envkit.server import start_server
from envkit.wire import EnvErrorFrame, EnvSession, is_finite_number, normalise_url

SAME, CHANGED, NONDETERMINISTIC, SKIPPED = "same", "changed", "not deterministic", "skipped"
_REL_TOL = 1e-9  # rewards travel as JSON floats: equal values come back bit-identical
_ABS_TOL = 1e-12
MAX_CHANGES_SHOWN = 5  # steps listed per changed episode

Trace = list[dict[str, Any]]  # [{"step": n, "reward": r, "done": d} | {"step": n, "error": c}]


@dataclass
class EpisodeReplay:
    """One saved episode, replayed.

    Attributes:
        episode, seed: the saved episode's run-wide index and reset seed.
        status: :data:`SAME`, :data:`CHANGED`, :data:`NONDETERMINISTIC` or :data:`SKIPPED`.
        saved_return: the saved return (sum of finite step rewards).
        new_return: the first replay's return, or ``None`` when skipped.
        changes: per differing step ``{"step", "saved", "new"}`` (each side a trace entry
            or ``None`` where one trace is shorter); for :data:`NONDETERMINISTIC` the two
            replays' difference.
        reason: why the episode was skipped, else ``None``.
    """

    episode: int
    seed: int
    status: str
    saved_return: float
    new_return: float | None = None
    changes: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "episode": self.episode,
            "seed": self.seed,
            "status": self.status,
            "saved_return": self.saved_return,
            "new_return": self.new_return,
            "changes": self.changes,
            "reason": self.reason,
        }


@dataclass
class ReplayReport:
    """What :func:`replay` found.

    Attributes:
        run_dir: the run whose episodes were replayed.
        target: the environment replayed against (directory or URL).
        episodes: one :class:`EpisodeReplay` per saved episode, in episode order.
        dropped: lines of ``trajectories.jsonl`` that were not complete episodes.
    """

    run_dir: Path
    target: str
    episodes: list[EpisodeReplay]
    dropped: int = 0

    def with_status(self, status: str) -> list[EpisodeReplay]:
        return [e for e in self.episodes if e.status == status]

    @property
    def exit_code(self) -> ExitCode:
        """``FINDINGS`` (1) when an episode's rewards changed, else ``OK`` (0)."""
        return ExitCode.FINDINGS if self.with_status(CHANGED) else ExitCode.OK

    def to_json(self) -> dict[str, Any]:
        counts = {s: len(self.with_status(s)) for s in (SAME, CHANGED, NONDETERMINISTIC, SKIPPED)}
        return {
            "run_dir": str(self.run_dir),
            "target": self.target,
            "episodes": len(self.episodes),
            "counts": counts,
            "changed": [e.episode for e in self.with_status(CHANGED)],
            "not_deterministic": [e.episode for e in self.with_status(NONDETERMINISTIC)],
            "dropped_lines": self.dropped,
            "results": [e.to_json() for e in self.episodes],
        }


def replay(
    run_dir: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    url: str | None = None,
    python: str | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    on_episode: Callable[[EpisodeReplay, int, int], None] | None = None,
) -> ReplayReport:
    """Replay the saved episodes of ``run_dir`` against the environment at ``path`` (its
    server is started on a free 127.0.0.1 port and stopped after) or ``url``.

    Args:
        run_dir: an ``envkit eval`` run directory (``trajectories.jsonl``).
        path: the environment directory (default ``.`` without ``url``); with ``url`` only
            its manifest's timeouts are read.
        url: a running server of the version to check.
        python: the interpreter that serves ``path`` (as ``envkit eval --python``).
        startup_timeout_s: seconds to wait for ``GET /health``.
        reply_timeout_s: seconds to wait for one answer of the server.
        on_episode: called as ``on_episode(result, done, total)`` after each episode.

    Returns:
        :class:`ReplayReport`.

    Raises:
        UsageError: ``run_dir`` has no saved episodes.
        SpecError: the manifest cannot be read.
        ServerStartError: the environment server did not start.
        WireError: the server cannot be reached, or the session was lost twice in a row.
    """
    run = Path(run_dir)
    saved, dropped = kept_episodes(run)
    if not saved:
        raise UsageError(
            f"{run / TRAJECTORIES_FILE} holds no finished episode to replay.",
            hint="Pass the directory of an `envkit eval` run (its --out).",
        )
    project = EnvProject.load(path if path is not None else ".") if url is None or path else None
    spec = env_spec(project.manifest if project else None)
    timeouts = resolve_timeouts(
        spec, startup_timeout_s=startup_timeout_s, reply_timeout_s=reply_timeout_s
    )
    server = None
    try:
        if url is None and project is not None:
            py = resolve_python(project.root, python)
            server = start_server(project.root, project.manifest.app, python=py)
            server.wait_healthy(timeout_s=timeouts.startup_s)
            base, target = server.url, str(project.root)
        else:
            base = target = normalise_url(str(url))
        results = _replay_all(base, saved, timeouts.reply_s, on_episode)
    finally:
        if server is not None:
            server.stop(grace_s=1.0)
    return ReplayReport(run_dir=run, target=target, episodes=results, dropped=dropped)


def _replay_all(
    url: str,
    saved: list[EpisodeRecord],
    reply_s: float,
    on_episode: Callable[[EpisodeReplay, int, int], None] | None,
) -> list[EpisodeReplay]:
    """Replay every saved episode twice on one session (a fresh one after a lost one)."""
    session = EnvSession(url, timeout_s=reply_s)
    results = []
    try:
        for i, record in enumerate(saved, 1):
            why = _skip_reason(record)
            if why is not None:
                result = EpisodeReplay(
                    record.episode, record.seed, SKIPPED, record.return_, reason=why
                )
            else:
                traces = []
                for _ in range(2):
                    trace, session = _play_keeping_session(session, url, record, reply_s)
                    traces.append(trace)
                result = _judge(record, traces[0], traces[1])
            results.append(result)
            if on_episode is not None:
                on_episode(result, i, len(saved))
    finally:
        session.close()
    return results


def _play_keeping_session(
    session: EnvSession, url: str, record: EpisodeRecord, reply_s: float
) -> tuple[Trace, EnvSession]:
    """:func:`play` on ``session``; when the session is lost, once more on a new one.

    Raises:
        WireError: the new session was lost too.
    """
    try:
        return play(session, record), session
    except WireError:
        session.close()
        session = EnvSession(url, timeout_s=reply_s)
        return play(session, record), session


def _skip_reason(record: EpisodeRecord) -> str | None:
    if record.lost:
        return "the saved run lost its session in this episode: its trace is incomplete"
    return None


def saved_trace(record: EpisodeRecord) -> Trace:
    """The trace of a saved episode (module docstring): what each sent action got."""
    if record.reset is None:
        code = (record.error or "").removeprefix("reset failed: ").split(":", 1)[0]
        return [{"step": 0, "error": code or "reset failed"}]
    trace: Trace = []
    for step in record.steps:
        if step.action is None:
            continue
        if step.error_code is not None:
            trace.append({"step": step.step, "error": step.error_code})
        else:
            trace.append({"step": step.step, "reward": step.reward, "done": bool(step.done)})
    return trace


def play(session: EnvSession, record: EpisodeRecord) -> Trace:
    """Replay ``record``'s sent actions on ``session`` (an :class:`envkit.wire.EnvSession`).

    Raises:
        WireError: the session failed (transport, timeout).
    """
    try:
        session.reset(seed=record.seed)
    except EnvErrorFrame as exc:
        return [{"step": 0, "error": exc.code}]
    trace: Trace = []
    for step in record.steps:
        if step.action is None:
            continue
        try:
            res = session.step(step.action)
        except EnvErrorFrame as exc:
            trace.append({"step": step.step, "error": exc.code})
            if exc.code == "VALIDATION_ERROR":
                continue  # rejected before it reached the environment: the episode goes on
            break
        trace.append({"step": step.step, "reward": res.reward, "done": bool(res.done)})
        if res.done:
            break
    return trace


def _judge(record: EpisodeRecord, first: Trace, second: Trace) -> EpisodeReplay:
    """Compare the two replays with each other, then the first with the saved episode."""
    result = EpisodeReplay(record.episode, record.seed, SAME, record.return_, _return(first))
    wobble = _differences(first, second)
    if wobble:
        result.status, result.changes = NONDETERMINISTIC, wobble
        return result
    changes = _differences(saved_trace(record), first)
    if changes:
        result.status, result.changes = CHANGED, changes
    return result


def _return(trace: Trace) -> float:
    return float(sum(e["reward"] for e in trace if is_finite_number(e.get("reward"))))


def _differences(a: Trace, b: Trace) -> list[dict[str, Any]]:
    """``{"step", "saved", "new"}`` for each position where ``a`` and ``b`` differ."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x is None or y is None or not _same_entry(x, y):
            out.append({"step": (x or y or {}).get("step"), "saved": x, "new": y})
    return out


def _same_entry(x: dict[str, Any], y: dict[str, Any]) -> bool:
    if x.get("error") or y.get("error"):
        return x.get("error") == y.get("error")
    return x.get("done") == y.get("done") and _same_reward(x.get("reward"), y.get("reward"))


def _same_reward(a: object, b: object) -> bool:
    if is_finite_number(a) and is_finite_number(b):
        return math.isclose(float(a), float(b), rel_tol=_REL_TOL, abs_tol=_ABS_TOL)
    return a == b
