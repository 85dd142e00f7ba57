"""`envkit validate` on a template, N times in a row, each in a fresh process: how many runs
report EK430 (a crash inside one of envkit's own checks). A fresh process per run because the
crashes this hunts are start-up races (two threads importing or parsing at once), which a
warm process never shows again.

    python bench/crashes.py [--template guess] [--runs 20] [--python PY]

PY serves the environment (it needs openenv 0.10 and the template's dependencies; default:
this interpreter). Prints one line per run, then `EK430 in K of N runs`; exits 1 when K > 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envkit.scaffold import init_project


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--template", default="guess")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    crashed = 0
    with tempfile.TemporaryDirectory(prefix="envkit-crashes-") as tmp:
        env = init_project(
            f"{args.template}-env", template=args.template, output_dir=Path(tmp), lock=False
        ).path
        for n in range(1, args.runs + 1):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "envkit",
                    "validate",
                    str(env),
                    "--python",
                    args.python,
                    "--no-train-path",
                    "-f",
                    "json",
                ],
                capture_output=True,
                text=True,
                timeout=900,
            )
            try:
                findings = json.loads(proc.stdout)["findings"]
            except (ValueError, KeyError):
                print(f"run {n}: no JSON report (exit {proc.returncode}): {proc.stderr[-300:]}")
                crashed += 1
                continue
            crashes = [f for f in findings if f["code"] == "EK430"]
            crashed += bool(crashes)
            codes = sorted({f["code"] for f in findings}) or ["no findings"]
            print(f"run {n}: {', '.join(codes)} ({time.perf_counter() - t0:.1f} s)")
            for f in crashes:
                print(f"    {f['message'][:300]}")
    print(f"EK430 in {crashed} of {args.runs} runs ({args.template} template)")
    return 1 if crashed else 0


if __name__ == "__main__":
    raise SystemExit(main())
