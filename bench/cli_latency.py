"""CLI latency: envkit vs OpenEnv's CLI, measured in the same run on the same machine.

Prints the median wall time (seconds) of
  - `envkit --help`            vs `openenv --help`
  - `envkit init x --no-lock`  vs `openenv init x`
and the ratios (how many times faster envkit is). Targets: --help >= 30x,
init >= 30x against OpenEnv 0.10's `openenv` CLI. `openenv` 0.10 runs from its own venv (it
and `openenv-core` install the same packages, so neither shares one): made once with uv under
`~/.cache/envkit-bench/openenv-0.10.0` (or `--openenv PATH` to an `openenv` executable).

Both CLIs run as an installed package runs: with Python's bytecode cache. The dropped first
run of each command writes it (`PYTHONDONTWRITEBYTECODE` is removed from the commands'
environment): with it set, every run compiles every module of an editable install from source,
which measures the compiler, not the CLI (`pip install` compiles a wheel's modules at install).

Usage:
    python bench/cli_latency.py [--runs 7] [--openenv PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
OPENENV_VERSION = "0.10.0"


def _openenv_cli() -> str:
    """The `openenv` executable of a dedicated venv with openenv==0.10.0 (made on first use)."""
    from envkit.envdir.uv import uv_binary

    venv = Path.home() / ".cache" / "envkit-bench" / f"openenv-{OPENENV_VERSION}"
    exe = venv / "bin" / "openenv"
    if not exe.exists():
        uv = uv_binary()
        if not uv:
            raise SystemExit("uv is needed to make the openenv venv (pip install uv)")
        print(f"making {venv} (openenv=={OPENENV_VERSION}) ...", file=sys.stderr)
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--python",
                str(venv / "bin" / "python"),
                f"openenv=={OPENENV_VERSION}",
            ],
            check=True,
        )
    return str(exe)


# the commands' environment: bytecode caching on, as for an installed package
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(cmd: list[str], cwd: Path, runs: int, setup=None) -> float:
    samples = []
    for i in range(runs + 1):  # first run warms the page and bytecode caches and is dropped
        if setup:
            setup(i)
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd + ([f"x{i}"] if setup else []),
            cwd=cwd,
            check=False,
            capture_output=True,
            text=True,
            env=ENV,
        )
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
        if i:
            samples.append(elapsed)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--openenv", help="an `openenv` 0.10 executable (default: its own venv)")
    args = parser.parse_args()
    envkit, openenv = str(BIN / "envkit"), args.openenv or _openenv_cli()
    work = Path(tempfile.mkdtemp(prefix="envkit-bench-"))
    try:
        rows = []
        e_help = _time([envkit, "--help"], work, args.runs)
        o_help = _time([openenv, "--help"], work, args.runs)
        rows.append(("--help", e_help, o_help, 30.0))
        (work / "e").mkdir()
        (work / "o").mkdir()
        e_init = _time(
            [envkit, "init", "--no-lock", "--output-dir", str(work / "e")],
            work,
            args.runs,
            setup=lambda i: None,
        )
        o_init = _time(
            [openenv, "init", "--output-dir", str(work / "o")],
            work,
            args.runs,
            setup=lambda i: None,
        )
        rows.append(("init", e_init, o_init, 30.0))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'command':<8} {'envkit (s)':>11} {'openenv (s)':>12} {'speed-up':>9} {'target':>7}")
    ok = True
    for name, e, o, target in rows:
        ratio = o / e
        ok &= ratio >= target
        print(
            f"{name:<8} {e:>11.3f} {o:>12.3f} {ratio:>8.1f}x {target:>6.0f}x"
            f"{'' if ratio >= target else '  (below target)'}"
        )
    print(
        f"median of {args.runs} runs each; Python {sys.version.split()[0]}; "
        f"openenv {OPENENV_VERSION} from {openenv}"
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
