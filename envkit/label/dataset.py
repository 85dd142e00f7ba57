"""From labels to data: the majority label of each pair, the export in TRL's preference
format, and labeling statistics.

Export format (TRL "preference" type, conversational format; huggingface.co/docs/trl
``dataset_formats``): ``prompt`` (list of ``{"role", "content"}`` messages: the reset
observation as the user message the ``openai`` policy sent), ``chosen`` and ``rejected`` (the
two rollouts after the prompt: assistant replies, and between them the user messages with the
observations). DPOTrainer and RewardTrainer read these three columns; the others are
metadata they ignore: ``seed``, ``chosen_return``, ``rejected_return``, ``labeler``,
``agreement`` (share of the pair's labels that agree with the majority), ``n_labels``,
``chosen_id``, ``rejected_id`` (episode ids in ``trajectories.jsonl``), ``env_digest`` and
``schema_digest`` (the environment the rollouts were played on, from ``summary.json``'s
``versions``; ``None`` for a run that predates them; docs/versions.md).
"""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import DestinationError, UsageError
from envkit.fsutil import write_atomic
from envkit.label.folder import EvalFolder
from envkit.label.pairs import select_pairs
from envkit.label.store import Label, LabelStore

VERDICTS = ("a", "b", "tie", "cant_tell")
FORMATS = ("jsonl", "parquet")
LABEL_EXTRA = "pip install 'rl-envkit[label]'"


@dataclass
class PairVotes:
    """The labels of one pair, side-free.

    Attributes:
        a, b: trajectory ids.
        votes: labeler -> verdict (``a``, ``b``, ``tie``, ``cant_tell``); skips excluded.
        majority: the verdict with the most votes, ``None`` when two verdicts share the top
            count (contested).
        agreement: votes for the majority / all votes (0.0 when contested).
    """

    a: int
    b: int
    votes: dict[str, str]
    majority: str | None
    agreement: float


def aggregate(folder: EvalFolder, labels: list[Label]) -> tuple[list[PairVotes], int]:
    """Group labels by pair and take the majority.

    Labels whose trajectories changed since (fingerprint mismatch, e.g. a new ``envkit eval``
    in the same folder) or no longer exist are stale and ignored.

    Returns:
        ``(pairs with at least one vote, ordered by ids; number of stale labels)``.
    """
    by_id = folder.by_id()
    stale = 0
    votes: dict[tuple[int, int], dict[str, str]] = {}
    for lab in labels:
        ta, tb = by_id.get(lab.a), by_id.get(lab.b)
        if (
            ta is None
            or tb is None
            or (lab.a_fingerprint and lab.a_fingerprint != ta.fingerprint)
            or (lab.b_fingerprint and lab.b_fingerprint != tb.fingerprint)
        ):
            stale += 1
            continue
        if lab.label == "skip":
            continue
        votes.setdefault((lab.a, lab.b), {})[lab.labeler] = lab.verdict
    out = []
    for (a, b), v in sorted(votes.items()):
        counts = Counter(v.values()).most_common()
        top, n = counts[0]
        contested = len(counts) > 1 and counts[1][1] == n
        out.append(
            PairVotes(
                a,
                b,
                dict(sorted(v.items())),
                None if contested else top,
                0.0 if contested else n / len(v),
            )
        )
    return out, stale


@dataclass
class ExportResult:
    """What :func:`export` wrote.

    Attributes:
        path: the file written (``None`` when ``rows`` is 0 and nothing was written).
        format: ``jsonl`` or ``parquet``.
        rows: preference rows written.
        ties, cant_tell: pairs whose majority label was tie / can't tell (not rows).
        contested: pairs without a majority.
        below_agreement: pairs dropped by ``min_agreement``.
        unlabeled: selected pairs (``all`` mode) without any label.
        stale: labels ignored because their trajectories changed.
        records: the rows themselves.
    """

    path: Path | None
    format: str
    rows: int
    ties: int = 0
    cant_tell: int = 0
    contested: int = 0
    below_agreement: int = 0
    unlabeled: int = 0
    stale: int = 0
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "format": self.format,
            "rows": self.rows,
            "ties": self.ties,
            "cant_tell": self.cant_tell,
            "contested": self.contested,
            "below_agreement": self.below_agreement,
            "unlabeled": self.unlabeled,
            "stale": self.stale,
        }


def preference_rows(
    folder: EvalFolder, store: LabelStore, *, min_agreement: float = 0.0
) -> ExportResult:
    """The preference rows of ``folder``'s labels, not written anywhere (``path`` is None).

    Args:
        folder: the eval folder.
        store: its label store.
        min_agreement: drop pairs whose majority holds less than this share of the votes,
            0.0-1.0 (e.g. 0.66 keeps 2-of-3 majorities).

    Raises:
        UsageError: ``min_agreement`` outside 0-1.
    """
    if not 0.0 <= min_agreement <= 1.0:
        raise UsageError(
            f"--min-agreement {min_agreement}: expected a share between 0 and 1.",
            hint="E.g. --min-agreement 0.66 keeps pairs where 2 of 3 labelers agree.",
        )
    pairs, stale = aggregate(folder, store.labels())
    by_id = folder.by_id()
    system = (folder.summary.get("settings") or {}).get("system_prompt_text")
    system = system if isinstance(system, str) and system else None
    versions = folder.summary.get("versions") or {}
    result = ExportResult(path=None, format="jsonl", rows=0, stale=stale)
    labeled = {(p.a, p.b) for p in pairs}
    result.unlabeled = sum(1 for p in select_pairs(folder, "all") if (p.a, p.b) not in labeled)
    for p in pairs:
        if p.majority is None:
            result.contested += 1
            continue
        if p.majority == "tie":
            result.ties += 1
            continue
        if p.majority == "cant_tell":
            result.cant_tell += 1
            continue
        if p.agreement + 1e-9 < min_agreement:
            result.below_agreement += 1
            continue
        chosen, rejected = (
            (by_id[p.a], by_id[p.b]) if p.majority == "a" else (by_id[p.b], by_id[p.a])
        )
        result.records.append(
            {
                "prompt": chosen.prompt_messages(system),
                "chosen": chosen.completion_messages(),
                "rejected": rejected.completion_messages(),
                "seed": chosen.seed,
                "chosen_return": chosen.ret,
                "rejected_return": rejected.ret,
                "labeler": ",".join(lab for lab, v in p.votes.items() if v == p.majority),
                "agreement": round(p.agreement, 6),
                "n_labels": len(p.votes),
                "chosen_id": chosen.id,
                "rejected_id": rejected.id,
                "env_digest": versions.get("env_digest"),
                "schema_digest": versions.get("schema_digest"),
            }
        )
    result.rows = len(result.records)
    return result


def _parquet_bytes(records: list[dict[str, Any]]) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError(
            "--format parquet needs pyarrow, which is not installed.",
            hint=f"Install the extra ({LABEL_EXTRA}) or use --format jsonl.",
        ) from None
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), buf)
    return buf.getvalue()


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    """One JSON object per line, UTF-8, ending with a newline (empty for no records)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def export(
    folder: EvalFolder,
    store: LabelStore,
    out: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,
    min_agreement: float = 0.0,
) -> ExportResult:
    """Write the preference dataset of ``folder`` (see the module docstring for columns).

    Args:
        folder: the eval folder.
        store: its label store.
        out: destination file; default ``<folder>/preferences.<format>``. Written atomically
            (a reader never sees half a file).
        format: ``jsonl`` or ``parquet``; default from ``out``'s suffix, else ``jsonl``.
            Parquet needs ``pyarrow`` (the ``label`` extra).
        min_agreement: see :func:`preference_rows`.

    Returns:
        An :class:`ExportResult`; the file is written even with 0 rows (an empty dataset).

    Raises:
        UsageError: unknown format, pyarrow missing for parquet, bad ``min_agreement``.
        DestinationError: the file cannot be written.
    """
    if format is None:
        format = "parquet" if out is not None and str(out).endswith(".parquet") else "jsonl"
    if format not in FORMATS:
        raise UsageError(
            f"--format {format}: unknown export format.",
            hint="Use jsonl (always available) or parquet (needs pyarrow).",
        )
    result = preference_rows(folder, store, min_agreement=min_agreement)
    result.format = format
    data = _parquet_bytes(result.records) if format == "parquet" else jsonl_bytes(result.records)
    path = Path(out).expanduser() if out is not None else folder.path / f"preferences.{format}"
    if path.is_dir():
        raise DestinationError(
            f"-o {path}: is a directory.",
            hint=f"Pass a file name, e.g. -o {path / ('preferences.' + format)}.",
        )
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise DestinationError(
            f"Cannot write {path}: {exc.strerror or exc}.", hint="Pass a writable path with -o."
        ) from None
    result.path = path
    return result


# -- statistics ------------------------------------------------------------------------------


def cohen_kappa(x: list[str], y: list[str]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items (Cohen 1960).

    Returns:
        kappa in [-1, 1]; ``None`` for no items, or when chance agreement is 1 and observed
        agreement is not (undefined).
    """
    n = len(x)
    if n == 0 or n != len(y):
        return None
    po = sum(1 for i, j in zip(x, y) if i == j) / n
    cx, cy = Counter(x), Counter(y)
    pe = sum(cx[k] * cy[k] for k in set(cx) | set(cy)) / (n * n)
    if pe >= 1.0:
        return 1.0 if po >= 1.0 else None
    return (po - pe) / (1 - pe)


def fleiss_kappa(items: list[list[str]]) -> float | None:
    """Fleiss' kappa (Fleiss 1971) of items each rated by the same number (>= 2) of raters.

    Args:
        items: for each item, the categories its raters chose.

    Returns:
        kappa; ``None`` when there are no items, raters differ in number, or chance agreement
        is 1 with imperfect observed agreement.
    """
    if not items:
        return None
    n = len(items[0])
    if n < 2 or any(len(i) != n for i in items):
        return None
    cats = sorted({c for i in items for c in i})
    big_n = len(items)
    p_i = []
    totals = Counter()
    for it in items:
        c = Counter(it)
        totals.update(c)
        p_i.append((sum(v * v for v in c.values()) - n) / (n * (n - 1)))
    p_bar = sum(p_i) / big_n
    pe = sum((totals[k] / (big_n * n)) ** 2 for k in cats)
    if pe >= 1.0:
        return 1.0 if p_bar >= 1.0 else None
    return (p_bar - pe) / (1 - pe)


@dataclass
class LabelStats:
    """Progress and agreement of a folder's labels (``envkit label stats``).

    Attributes:
        pairs_total: pairs under ``--pairs all`` (every distinct pair within a seed).
        pairs_labeled: pairs with at least one label (skips excluded).
        per_labeler: labeler -> {label: count} (``left``, ``right``, ``tie``, ``cant_tell``,
            ``skip``, ``total``).
        cohen: one entry per pair of labelers with overlapping pairs:
            ``{"labelers": [x, y], "overlap": n, "kappa": k or None}``.
        fleiss: ``{"labelers": n, "items": n, "kappa": k}`` over pairs labeled by every
            labeler, when there are >= 2 labelers and such pairs; else ``None``.
        reward_agreement: over pairs with a preference majority and different returns, the
            share where the preferred rollout has the higher return (``None``: no such pair).
        reward_comparable: how many pairs that share is computed over.
        reward_ties_broken: pairs with equal returns that got a preference majority.
        majority: verdict counts of the pairs' majorities (``a``/``b`` both count as
            ``preference``; ``tie``, ``cant_tell``, ``contested``).
        stale: labels ignored because their trajectories changed.
    """

    pairs_total: int
    pairs_labeled: int
    per_labeler: dict[str, dict[str, int]]
    cohen: list[dict[str, Any]]
    fleiss: dict[str, Any] | None
    reward_agreement: float | None
    reward_comparable: int
    reward_ties_broken: int
    majority: dict[str, int]
    stale: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def label_stats(folder: EvalFolder, store: LabelStore) -> LabelStats:
    """Compute :class:`LabelStats` for ``folder``."""
    labels = store.labels()
    pairs, stale = aggregate(folder, labels)
    per: dict[str, dict[str, int]] = {}
    for lab in labels:
        d = per.setdefault(
            lab.labeler, dict.fromkeys(("left", "right", "tie", "cant_tell", "skip", "total"), 0)
        )
        d[lab.label] += 1
        d["total"] += 1
    labelers = sorted(per)
    cohen = []
    for i, x in enumerate(labelers):
        for y in labelers[i + 1 :]:
            both = [p for p in pairs if x in p.votes and y in p.votes]
            if both:
                cohen.append(
                    {
                        "labelers": [x, y],
                        "overlap": len(both),
                        "kappa": cohen_kappa(
                            [p.votes[x] for p in both], [p.votes[y] for p in both]
                        ),
                    }
                )
    fleiss = None
    if len(labelers) >= 2:
        full = [list(p.votes.values()) for p in pairs if len(p.votes) == len(labelers)]
        if full:
            fleiss = {"labelers": len(labelers), "items": len(full), "kappa": fleiss_kappa(full)}
    by_id = folder.by_id()
    agree = comparable = ties_broken = 0
    majority = Counter()
    for p in pairs:
        if p.majority is None:
            majority["contested"] += 1
            continue
        majority["preference" if p.majority in ("a", "b") else p.majority] += 1
        if p.majority not in ("a", "b"):
            continue
        ra, rb = by_id[p.a].ret, by_id[p.b].ret
        if abs(ra - rb) <= 1e-9:
            ties_broken += 1
            continue
        comparable += 1
        agree += (ra > rb) == (p.majority == "a")
    return LabelStats(
        pairs_total=len(select_pairs(folder, "all")),
        pairs_labeled=len(pairs),
        per_labeler=per,
        cohen=cohen,
        fleiss=fleiss,
        reward_agreement=agree / comparable if comparable else None,
        reward_comparable=comparable,
        reward_ties_broken=ties_broken,
        majority={k: majority.get(k, 0) for k in ("preference", "tie", "cant_tell", "contested")},
        stale=stale,
    )
