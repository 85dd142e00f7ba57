"""Per-rule figures of the independent corpora (tests/corpus): defects found by their own rule,
reported instead by a rule it names for them (``Rule.reported_as``), or missed, and
near-misses left quiet. A rule meets the target when found + instead >= 4.

    python bench/corpus.py [--rule NAME ...] [--python PY] [--jobs N]

PY is the interpreter that serves the environments (it needs openenv 0.10; default: this
one). Each case is a full `envkit validate` runtime stage with its rule selected (and the
rules of tests/corpus/corpus.py's REPORTED_AS for it), as the corpus test plays it; about 7 s
of CPU a case. N cases play at once (default 4).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus.corpus import JOBS, MIN_CAUGHT, REPORTED_AS, Case, cases, play_all


def _verdict(case: Case, found: set[str]) -> str:
    if case.kind == "nearmiss":
        return "noise" if case.code in found else "quiet"
    if case.code in found:
        return "found"
    if case.key in REPORTED_AS and found & set(REPORTED_AS[case.key][0]):
        return "instead"
    return "missed"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rule", action="append", default=[], help="only this corpus")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=JOBS)
    args = parser.parse_args()
    chosen = [c for c in cases() if not args.rule or c.rule in args.rule]
    rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
    codes: dict[str, str] = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="envkit-corpus-") as tmp:
        for case, found, took in play_all(chosen, Path(tmp), args.python, args.jobs):
            codes[case.rule] = case.code
            if isinstance(found, BaseException):
                verdict, other = "error", f"{type(found).__name__}: {found}"
            else:
                verdict = _verdict(case, found)
                other = ",".join(sorted(found - {case.code})) or "-"
            rows[case.rule].append((case.kind, verdict))
            print(f"  {verdict:9s} {case.code} {case.key} (also: {other}; {took:.1f} s)")
    print()
    print(
        f"{'rule':28s} {'code':6s} {'found':>6s} {'instead':>8s} {'missed':>7s} "
        f"{'of':>3s} {'near-misses quiet':>18s}  target"
    )
    totals = defaultdict(int)
    for rule in sorted(rows):
        items = rows[rule]
        d = [v for kind, v in items if kind == "defect"]
        n = [v for kind, v in items if kind == "nearmiss"]
        counts = {k: d.count(k) for k in ("found", "instead", "missed")}
        quiet = n.count("quiet")
        for k, v in counts.items():
            totals[k] += v
        totals["defects"] += len(d)
        totals["quiet"] += quiet
        totals["nearmisses"] += len(n)
        met = counts["found"] + counts["instead"] >= min(MIN_CAUGHT, len(d))
        totals["met"] += met
        print(
            f"{rule:28s} {codes[rule]:6s} {counts['found']:>6d} {counts['instead']:>8d} "
            f"{counts['missed']:>7d} {len(d):>3d} {quiet:>11d} of {len(n)}  "
            f"{'met' if met else 'below'}"
        )
    print(
        f"{'all':35s} {totals['found']:>6d} {totals['instead']:>8d} {totals['missed']:>7d} "
        f"{totals['defects']:>3d} {totals['quiet']:>11d} of {totals['nearmisses']}"
        f"  {totals['met']} of {len(rows)} met   ({time.perf_counter() - t_all:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
