"""Writing an evaluation run to disk: every file is written to a temporary name in the same
directory and renamed into place, so a reader never sees half a file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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


def trajectories_bytes(episodes: Iterable[dict[str, Any]]) -> bytes:
    """One JSON line per episode, ordered by episode index."""
    lines = [
        json.dumps(e, ensure_ascii=False, allow_nan=False, default=str)
        for e in sorted(episodes, key=lambda e: e["episode"])
    ]
    return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")


def summary_bytes(summary: dict[str, Any]) -> bytes:
    """``summary.json``'s bytes; stamps ``versions`` (the environment and schema digests,
    docs/versions.md) into ``summary`` first, once."""
    if "versions" not in summary:
        from envkit.versions.snapshot import run_digests

        summary["versions"] = run_digests(summary.get("environment") or {}).to_dict()
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
    import io

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
