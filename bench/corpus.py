"""Per-rule figures of the independent corpora (tests/corpus): defects found by their own rule
(``own``), reported instead by a rule it names for them (``instead``, ``Rule.reported_as``:
counted apart, never as the rule's own), missed, or timed out (the time cut the schedule
short twice: no verdict), and near-misses left quiet. A rule meets the target when its own
code finds at least 4.

    python bench/corpus.py [--rule NAME ...] [--python PY] [--jobs N] [--write-readmes]

PY is the interpreter that serves the environments (it needs openenv 0.10; default: this
one). Each case is a full `envkit validate` runtime stage with its rule selected (and the
rules of tests/corpus/corpus.py's REPORTED_AS for it), as the corpus test plays it; about 7 s
of CPU a case. N cases play at once (default 4). --write-readmes rewrites each played case's
status line in tests/corpus/<rule>/README.md from this run.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus.corpus import (
    HERE,
    JOBS,
    KNOWN_MISSES,
    KNOWN_NOISE,
    MIN_CAUGHT,
    REPORTED_AS,
    Case,
    Played,
    cases,
    play_all,
    verdict,
)

HEADER = (
    "Status lines written by `python bench/corpus.py --write-readmes` from its last run: each "
    "case validated with its rule (and the rules named in tests/corpus/corpus.py's "
    "REPORTED_AS for it) selected, `--no-train-path`; a defect is caught when {code} is "
    "reported, a near-miss is quiet when {code} is not."
)


def status(case: Case, played: Played | BaseException) -> str:
    """The case's status line, from what its run gave."""
    if isinstance(played, BaseException):
        return f"error ({type(played).__name__}: {played})"
    said = verdict(case, played)
    again = " (played twice: the first ran out of time)" if played.tries > 1 else ""
    others = sorted(played.codes - {case.code})
    also = f"; also reported: {', '.join(others)}" if others else ""
    if said == "found":
        return f"caught ({case.code} reported{also}){again}"
    if said == "instead":
        return f"reported instead as {', '.join(others)}: {REPORTED_AS[case.key][1]}{again}"
    if said == "missed":
        why = KNOWN_MISSES.get(case.key)
        return f"not caught ({case.code} not reported{f'; known miss: {why}' if why else ''})"
    if said == "noise":
        why = KNOWN_NOISE.get(case.key)
        return f"reported ({case.code} on a near-miss{f'; known noise: {why}' if why else ''})"
    if said == "quiet":
        return f"quiet ({case.code} not reported){again}"
    return f"timed out twice (not played: {', '.join(played.out_of_time)})"


def write_readmes(results: dict[str, tuple[Case, Played | BaseException]]) -> list[Path]:
    """Rewrite the status line of every case in ``results`` (``- `name` (kind): mechanism.
    **status**``) and the header line of its README; returns the READMEs changed."""
    changed = []
    for readme in sorted(HERE.glob("*/README.md")):
        rule = readme.parent.name
        text = readme.read_text(encoding="utf-8")
        lines = text.splitlines()
        code = None
        for i, line in enumerate(lines):
            m = re.match(r"- `([^`]+)` \((defect|nearmiss)\): ", line)
            if not m or f"{rule}/{m.group(1)}" not in results:
                continue
            case, played = results[f"{rule}/{m.group(1)}"]
            code = case.code
            cut = line.find(" **", m.end())
            head = line if cut < 0 else line[:cut]
            lines[i] = f"{head} **{status(case, played)}**"
        if code is not None:
            for i, line in enumerate(lines):
                if line.startswith(("Checked with", "Status lines written by")):
                    lines[i] = HEADER.format(code=code)
                    break
        new = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
        if new != text:
            readme.write_text(new, encoding="utf-8")
            changed.append(readme)
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rule", action="append", default=[], help="only this corpus")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument(
        "--write-readmes", action="store_true", help="write each case's status line from the run"
    )
    args = parser.parse_args()
    chosen = [c for c in cases() if not args.rule or c.rule in args.rule]
    rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
    codes: dict[str, str] = {}
    results: dict[str, tuple[Case, Played | BaseException]] = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="envkit-corpus-") as tmp:
        for case, played, took in play_all(chosen, Path(tmp), args.python, args.jobs):
            codes[case.rule] = case.code
            results[case.key] = (case, played)
            if isinstance(played, BaseException):
                said, other = "error", f"{type(played).__name__}: {played}"
            else:
                said = verdict(case, played)
                other = ",".join(sorted(played.codes - {case.code})) or "-"
            rows[case.rule].append((case.kind, said))
            print(f"  {said:9s} {case.code} {case.key} (also: {other}; {took:.1f} s)")
    print()
    print(
        f"{'rule':28s} {'code':6s} {'own':>4s} {'instead':>8s} {'missed':>7s} "
        f"{'timed out':>10s} {'of':>3s} {'near-misses quiet':>18s}  target (own >= {MIN_CAUGHT})"
    )
    totals: dict[str, int] = defaultdict(int)
    for rule in sorted(rows):
        items = rows[rule]
        d = [v for kind, v in items if kind == "defect"]
        n = [v for kind, v in items if kind == "nearmiss"]
        counts = {k: d.count(k) for k in ("found", "instead", "missed", "timed out")}
        quiet = n.count("quiet")
        for k, v in counts.items():
            totals[k] += v
        totals["defects"] += len(d)
        totals["quiet"] += quiet
        totals["nearmisses"] += len(n)
        met = counts["found"] >= min(MIN_CAUGHT, len(d))
        totals["met"] += met
        print(
            f"{rule:28s} {codes[rule]:6s} {counts['found']:>4d} {counts['instead']:>8d} "
            f"{counts['missed']:>7d} {counts['timed out']:>10d} {len(d):>3d} "
            f"{quiet:>11d} of {len(n)}  {'met' if met else 'below'}"
        )
    print(
        f"{'all':35s} {totals['found']:>4d} {totals['instead']:>8d} {totals['missed']:>7d} "
        f"{totals['timed out']:>10d} {totals['defects']:>3d} {totals['quiet']:>11d} of "
        f"{totals['nearmisses']}  {totals['met']} of {len(rows)} met   "
        f"({time.perf_counter() - t_all:.0f} s)"
    )
    if args.write_readmes:
        for readme in write_readmes(results):
            print(f"wrote {readme.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
