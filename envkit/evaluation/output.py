"""Writing an evaluation run to disk.

A run directory holds ``run.json`` (what the run was asked to do, written before the first
episode: :func:`run_metadata`), ``trajectories.jsonl`` (one line per finished episode,
appended and flushed as each finishes, then rewritten in episode order at the end),
``summary.json`` and ``rewards.png``. Whole files are written to a temporary name in the same
directory and renamed into place, so a reader never sees half a file; a process killed while
appending leaves at most one cut-off last line, which :func:`read_records` drops.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envkit._version import __version__
from envkit.errors import DestinationError
from envkit.fsutil import write_atomic


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`envkit.fsutil.write_atomic`).

    Raises:
        DestinationError: the directory cannot be created or written.
    """
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise DestinationError(
            f"Cannot write {path}: {exc.strerror or exc}.",
            hint="Pass a writable directory with --out.",
        ) from None


RUN_FILE = "run.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
RUN_KIND = "envkit-eval-run"
RUN_FORMAT = 1  # run.json's format version; a later envkit reads older ones


def run_metadata(
    options: dict[str, Any], environment: dict[str, Any], *, started_at: str
) -> dict[str, Any]:
    """``run.json``: everything ``envkit eval --resume`` needs to continue the run and
    ``envkit eval replay`` to name what was played. The one place its keys are built.

    Args:
        options: the resolved settings that decide the episodes (policy, model, seeds, ...:
            :func:`envkit.evaluation.rundir.stored_options`).
        environment: ``{"path": str | None, "urls": [str]}`` (``urls`` empty when envkit
            started the server from ``path``).
        started_at: ISO 8601 UTC time the run started.
    """
    return {
        "kind": RUN_KIND,
        "format": RUN_FORMAT,
        "envkit_version": __version__,
        "started_at": started_at,
        "options": options,
        "environment": environment,
    }


def write_run_start(out_dir: Path, metadata: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Start (or restart) a run directory: ``run.json``, and ``trajectories.jsonl`` holding
    ``records`` only (none for a new run; the kept episodes when resuming), both atomic.

    Raises:
        DestinationError: the directory cannot be created or written.
    """
    atomic_write(out_dir / RUN_FILE, summary_bytes(metadata))
    atomic_write(out_dir / TRAJECTORIES_FILE, trajectories_bytes(records))


def append_record(out_dir: Path, record: dict[str, Any]) -> None:
    """Append one episode to ``trajectories.jsonl`` as one ``write`` of one line, flushed and
    synced, so a process killed after it returns has the episode on disk.

    Raises:
        DestinationError: the file cannot be written.
    """
    path = out_dir / TRAJECTORIES_FILE
    line = json.dumps(record, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise DestinationError(
            f"Cannot write {path}: {exc.strerror or exc}.",
            hint="Pass a writable directory with --out.",
        ) from None


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The episodes of a ``trajectories.jsonl``: lines that parse as JSON objects, the
    first of each episode index kept.

    Returns:
        ``(records, dropped)``: the records, and how many lines were dropped (cut off by a
        killed process, not JSON, or a repeated episode). A missing file is ``([], 0)``.

    Raises:
        OSError: the file exists but cannot be read.
    """
    if not path.is_file():
        return [], 0
    records: dict[int, dict[str, Any]] = {}
    dropped = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            dropped += 1
            continue
        episode = data.get("episode") if isinstance(data, dict) else None
        if not isinstance(episode, int) or episode in records:
            dropped += 1
            continue
        records[episode] = data
    return [records[k] for k in sorted(records)], dropped


def trajectories_bytes(episodes: Iterable[dict[str, Any]]) -> bytes:
    """One JSON line per episode, ordered by episode index."""
    lines = [
        json.dumps(e, ensure_ascii=False, allow_nan=False, default=str)
        for e in sorted(episodes, key=lambda e: e["episode"])
    ]
    return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")


def summary_bytes(summary: dict[str, Any]) -> bytes:
    """``summary.json``'s (or ``run.json``'s) bytes: indented JSON, NaN refused."""
    return (
        json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    ).encode("utf-8")


def write_plot(
    path: Path, episodes: list[dict[str, Any]], *, reward_range: tuple[float, float], title: str
) -> str | None:
    """Save ``rewards.png`` (histogram of episode returns, returns by episode) with
    matplotlib's object API (no pyplot, no display needed).

    Returns:
        ``None`` when written, else a note saying why not (matplotlib missing, no episodes).
    """
    if not episodes:
        return "rewards.png not written: no finished episodes."
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return (
            "rewards.png not written: matplotlib is not installed (pip install 'rl-envkit[plot]')."
        )
    try:
        _plot(path, episodes, reward_range=reward_range, title=title)
    except DestinationError:
        raise
    except Exception as exc:  # noqa: BLE001 - a plot must never cost the run its results
        return f"rewards.png not written: matplotlib failed: {type(exc).__name__}: {exc}."
    return None


def _plot(
    path: Path, episodes: list[dict[str, Any]], *, reward_range: tuple[float, float], title: str
) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    eps = sorted(episodes, key=lambda e: e["episode"])
    returns = [e["return"] for e in eps]
    fig = Figure(figsize=(9, 3.6), dpi=100)
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.hist(returns, bins=min(20, max(5, len(returns))), color="#4c72b0", edgecolor="white")
    ax1.set_xlabel("episode return (sum of step rewards)")
    ax1.set_ylabel("episodes")
    ax1.set_title("Episode returns")
    colors = ["#55a868" if e["success"] else "#c44e52" for e in eps]
    ax2.scatter([e["episode"] for e in eps], returns, c=colors, s=18)
    ax2.axhline(reward_range[1], color="gray", linestyle="--", linewidth=0.8)
    ax2.set_xlabel("episode (green: reached max reward)")
    ax2.set_ylabel("return")
    ax2.set_title("Returns by episode")
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    atomic_write(path, buf.getvalue())
