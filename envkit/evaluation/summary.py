"""What an evaluation run produced: :class:`EvalSummary` (typed) becomes ``summary.json``;
:class:`EvalResult` is what :func:`envkit.evaluation.evaluate` returns; :func:`write_files`
writes ``trajectories.jsonl``, ``rewards.png`` and ``summary.json``.

The JSON shape of ``summary.json`` is read by other tools (``envkit label``): keys never
change.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit._version import __version__
from envkit.errors import ExitCode
from envkit.evaluation import stats as _stats
from envkit.evaluation.output import (
    TRAJECTORIES_FILE,
    atomic_write,
    summary_bytes,
    trajectories_bytes,
    write_plot,
)
from envkit.evaluation.pool import PoolOutcome
from envkit.evaluation.records import EpisodeRecord, EvalSettings


@dataclass
class EvalResult:
    """The outcome of :func:`evaluate`.

    Attributes:
        summary: what ``summary.json`` holds (statistics, settings, timings, notes).
        episodes: one record per finished episode (``to_json()`` gives the lines of
            ``trajectories.jsonl``), lost ones excluded.
        out_dir: where files were written, or ``None``.
        files: ``{"trajectories": path, "summary": path, "plot": path}`` for files written.
        notes: things the user should know (capacity cap, plot skipped, missing API key).
        interrupted: Ctrl-C stopped the run; files hold the episodes finished before it.
        lost: the episodes whose session was lost, also after the retries (no result;
            ``--resume`` plays them again).
    """

    summary: dict[str, Any]
    episodes: list[EpisodeRecord]
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    lost: list[EpisodeRecord] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        """``FINDINGS`` (1) when an episode ended with an environment error or was lost (the
        run measured fewer episodes than planned), else ``OK``."""
        s = self.summary
        return (
            ExitCode.FINDINGS if s.get("episode_errors") or s.get("lost_episodes") else ExitCode.OK
        )


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during :func:`evaluate`; ``result`` holds the finished episodes
    and the partial summary, already written to disk when an output directory was given."""

    def __init__(self, result: EvalResult):
        super().__init__("evaluation interrupted")
        self.result = result


@dataclass(frozen=True)
class EnvFacts:
    """The environment a run played (``summary.json``'s ``environment``).

    Attributes:
        name: the manifest's name, or ``None`` without a manifest.
        path: the environment directory, or ``None``.
        url: the server's base URL.
        started_by_envkit: envkit started (and stopped) the server.
        reward_range: ``(lo, hi)`` of the manifest (``(0.0, 1.0)`` without one).
        urls: every server the sessions were spread over (``url`` is the first).
    """

    name: str | None
    path: str | None
    url: str
    started_by_envkit: bool
    reward_range: tuple[float, float]
    urls: tuple[str, ...] = ()


@dataclass
class EvalSummary:
    """Everything ``summary.json`` reports about a run.

    Attributes:
        settings: what the run was asked to do.
        env: the environment it played.
        outcome: what the worker pool produced.
        prompt: the system prompt the ``openai`` policy sent, else ``None``.
        started_at: UTC time the run started.
        wall_s: seconds from the start of :func:`evaluate` to the end of the pool.
        server_start_s: seconds the server took to answer ``/health`` (``None`` with --url).
        notes: the run's notes (the same list object the result keeps, so a later note
            still reaches ``summary.json``).
    """

    settings: EvalSettings
    env: EnvFacts
    outcome: PoolOutcome
    prompt: str | None
    started_at: _dt.datetime
    wall_s: float
    server_start_s: float | None
    notes: list[str]

    @property
    def aborted(self) -> str | None:
        """The message of what stopped the run early, else ``None``."""
        fatal = self.outcome.fatal
        return (getattr(fatal, "message", None) or str(fatal)) if fatal else None

    def to_json(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """``summary.json``; ``records`` are the episodes' ``to_json()``."""
        settings, outcome, env = self.settings, self.outcome, self.env
        finished = outcome.finished
        stats = _stats.summarize(records, group_size=settings.group_size)
        complete = not outcome.interrupted and outcome.fatal is None
        return {
            "environment": {
                "name": env.name,
                "path": env.path,
                "url": env.url,
                "urls": list(env.urls or (env.url,)),
                "server_started_by_envkit": env.started_by_envkit,
                "reward_range": list(env.reward_range),
                "capacity": outcome.capacity,
            },
            "policy": settings.policy,
            "model": settings.model,
            "base_url": settings.base_url,
            "api_key_env": settings.api_key_env,
            "settings": settings.to_json(
                concurrency_used=outcome.concurrency_used, system_prompt_text=self.prompt
            ),
            "complete": complete and len(finished) == settings.total,
            "interrupted": outcome.interrupted,
            "aborted": self.aborted,
            **stats,
            "timings": self._timings(),
            "notes": self.notes,
            "definitions": _stats.DEFINITIONS,
            "envkit_version": __version__,
        }

    def _timings(self) -> dict[str, Any]:
        finished, wall = self.outcome.finished, self.wall_s
        return {
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "finished_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "wall_s": wall,
            "server_start_s": self.server_start_s,
            "mean_episode_s": (sum(e.duration_s for e in finished) / len(finished))
            if finished
            else None,
            # This process's episodes only: a resumed run's kept ones took no time here.
            "episodes_per_s": (len(self.outcome.episodes) - self.outcome.kept) / wall
            if wall > 0
            else None,
        }


def write_files(
    result: EvalResult,
    records: list[dict[str, Any]],
    *,
    title: str,
    reward_range: tuple[float, float],
) -> None:
    """Write ``trajectories.jsonl``, ``rewards.png`` (when plotting is available, else a note)
    and ``summary.json`` into ``result.out_dir``, each atomically, and list them in
    ``result.files``.

    Raises:
        DestinationError: the directory cannot be created or written.
    """
    out_dir = result.out_dir
    if out_dir is None:
        return
    traj = out_dir / TRAJECTORIES_FILE
    atomic_write(traj, trajectories_bytes(records))
    result.files["trajectories"] = traj
    plot = out_dir / "rewards.png"
    results = [r for r in records if not r.get("lost")]
    plot_note = write_plot(plot, results, reward_range=reward_range, title=title)
    if plot_note:
        result.notes.append(plot_note)
    else:
        result.files["plot"] = plot
    summ = out_dir / "summary.json"
    atomic_write(summ, summary_bytes(result.summary))
    result.files["summary"] = summ
