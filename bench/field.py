"""The field corpus's figures (tests/corpus/field): of the defects drawn from external failure
classes, how many envkit reports by its own (triaged) code, by any finding, or misses; of the
near-misses, how many stay without a runtime error; and how many the time cut short in both
plays (no verdict; the second play is alone, with --timeout 3600: tests/corpus/field.py).

    python bench/field.py [--class SLUG ...] [--python PY] [--jobs N]

Each case is a full `envkit validate` runtime stage (every EK4xx and EK5xx rule), as
tests/corpus/test_field.py plays it. PY serves the environments (it needs openenv 0.10;
default: this one). N cases play at once (default 4, ENVKIT_CORPUS_JOBS).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus.corpus import JOBS
from tests.corpus.field import field_cases, play_all, verdict


def _pct(n: int, of: int) -> str:
    return f"{n} of {of} ({100 * n / of:.0f} %)" if of else "0 of 0"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--class", dest="classes", action="append", default=[])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=JOBS)
    args = parser.parse_args()
    chosen = [c for c in field_cases() if not args.classes or c.klass in args.classes]
    if not chosen:
        print("no field cases (tests/corpus/field/<class>/<case>/case.toml)", file=sys.stderr)
        return 2
    counts: dict[str, int] = defaultdict(int)
    took: list[float] = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="envkit-field-") as tmp:
        for case, played, secs in play_all(chosen, Path(tmp), args.python, args.jobs):
            took.append(secs)
            if isinstance(played, BaseException):
                said, codes = "error", f"{type(played).__name__}: {played}"
            else:
                said = verdict(case, played)
                codes = ",".join(f"{c}:{s[0]}" for c, s in sorted(played.codes.items())) or "-"
            counts[f"{case.kind}:{said}"] += 1
            counts[f"{case.kind}:triaged"] += bool(case.code)
            counts["defect:own"] += case.kind == "defect" and bool(case.code) and said == "found"
            counts[case.kind] += 1
            own = case.code or "untriaged"
            print(f"  {said:7s} {case.external:34s} {case.key} ({own}; got {codes}; {secs:.1f} s)")
    defects, nearmisses = counts["defect"], counts["nearmiss"]
    by_own = counts["defect:own"]
    reported = counts["defect:found"] + counts["defect:other"]
    print()
    print(f"defects found by envkit's own code:  {_pct(by_own, defects)}")
    print(f"defects reported by any finding:     {_pct(reported, defects)}")
    print(f"defects untriaged (no code yet):     {defects - counts['defect:triaged']}")
    print(f"near-misses quiet (no runtime error): {_pct(counts['nearmiss:quiet'], nearmisses)}")
    cut = counts["defect:timed out"] + counts["nearmiss:timed out"]
    print(f"cut short twice by time (no verdict): {cut}")
    mean = sum(took) / len(took)
    print(
        f"({len(took)} cases, {time.perf_counter() - t_all:.0f} s wall, {mean:.1f} s a case, "
        f"{args.jobs} at once)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
