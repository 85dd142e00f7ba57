"""`envkit validate` on each template, this checkout side by side with an earlier commit of
envkit, in one run: the ratio of their wall times.

    python bench/against.py [--ref 1ea90e5] [--templates echo,guess,rlvr,code,tools]
                            [--rounds 3] [--python PY] [--no-train-path]

For each template, the environment is generated once (by this checkout) and then validated
``--rounds`` times by each version, alternating (baseline, current, baseline, ...) so both see
the same machine load; each run is a fresh ``python -m envkit validate PATH`` process (the CLI
as a user runs it, default options), the baseline imported from a ``git worktree`` of REF made
in a temporary directory and removed afterwards. PY serves the environment (openenv 0.10 and
the template's dependencies; default: this interpreter), for both versions.

Prints, per template, the median seconds of each version and current / baseline; the target
(issue: "the default validate of a template stays <= 1.5x its time at 1ea90e5") is each ratio
<= 1.5. Exit 1 when one is above ``--target``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from envkit.scaffold import init_project

ROOT = Path(__file__).resolve().parent.parent


def timed_validate(src: Path, env: Path, python: str, extra: list[str]) -> tuple[float, int]:
    """Seconds of one ``envkit validate`` of ``env`` by the envkit whose source is ``src``, and
    its exit code."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "envkit", "validate", str(env), "--python", python, *extra],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=src,  # `-m envkit` imports the checkout in the working directory first
        env={**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1"},
    )
    return time.perf_counter() - t0, proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ref", default="1ea90e5", help="the baseline commit (default 1ea90e5)")
    parser.add_argument("--templates", default="echo,guess,rlvr,code,tools")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-train-path", action="store_true", help="pass it to both")
    parser.add_argument("--target", type=float, default=1.5)
    args = parser.parse_args()
    extra = ["--no-train-path"] if args.no_train_path else []
    over = []
    with tempfile.TemporaryDirectory(prefix="envkit-against-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.ref],
            check=True,
        )
        try:
            print(f"baseline {args.ref} vs this checkout; {args.rounds} rounds, medians (s)")
            for name in args.templates.split(","):
                env = init_project(
                    f"{name}-env", template=name, output_dir=Path(tmp) / name, lock=False
                ).path
                times: dict[str, list[float]] = {"baseline": [], "current": []}
                codes: dict[str, set[int]] = {"baseline": set(), "current": set()}
                for _ in range(args.rounds):
                    for label, src in (("baseline", base), ("current", ROOT)):
                        s, code = timed_validate(src, env, args.python, extra)
                        times[label].append(s)
                        codes[label].add(code)
                b, c = statistics.median(times["baseline"]), statistics.median(times["current"])
                ratio = c / b
                if ratio > args.target:
                    over.append(name)
                print(
                    f"{name:6} baseline {b:6.1f}  current {c:6.1f}  ratio {ratio:4.2f}x"
                    f"  (exit codes {sorted(codes['baseline'])} / {sorted(codes['current'])})",
                    flush=True,
                )
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )
    print(f"over {args.target}x: {', '.join(over) or 'none'}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
