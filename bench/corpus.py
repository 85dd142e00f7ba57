"""Per-rule figures of the independent corpora (tests/corpus): defects found of defects, and
near-misses left quiet, for every rule that has a corpus.

    python bench/corpus.py [--rule NAME ...] [--python PY]

PY is the interpreter that serves the environments (it needs openenv 0.10; default: this
one). Each case is a full `envkit validate` runtime stage with only its rule selected, so a
corpus of 7 cases takes about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus.corpus import cases, play


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", action="append", default=[], help="only this corpus")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    rows: dict[str, list[tuple[str, str, bool]]] = defaultdict(list)
    codes: dict[str, str] = {}
    for case in cases():
        if args.rule and case.rule not in args.rule:
            continue
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="envkit-corpus-") as tmp:
            found = case.code in play(case, Path(tmp), args.python)
        ok = found if case.kind == "defect" else not found
        codes[case.rule] = case.code
        rows[case.rule].append((case.kind, case.name, ok))
        mark = "ok  " if ok else "MISS" if case.kind == "defect" else "NOISE"
        print(f"  {mark} {case.code} {case.rule}/{case.name} ({time.perf_counter() - t0:.1f} s)")
    print()
    print(f"{'rule':28s} {'code':6s} {'defects found':>14s} {'near-misses quiet':>18s}")
    for rule, items in rows.items():
        d = [ok for kind, _, ok in items if kind == "defect"]
        n = [ok for kind, _, ok in items if kind == "nearmiss"]
        print(f"{rule:28s} {codes[rule]:6s} {sum(d):>8d} of {len(d):<3d} {sum(n):>11d} of {len(n)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
