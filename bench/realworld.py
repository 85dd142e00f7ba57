"""Run `envkit validate` on real OpenEnv environments and tabulate what it found (issue #13).

The table of the closing note of issue #13 (`docs/realworld.md`, "After issue #13") comes from
this script, so it can be regenerated with one command. For each environment folder under EXPORT
(one at a time, to keep the machine usable) it runs, as a user would:

    envkit validate EXPORT/NAME --python PY --format json

and reads the JSON report: how the server was started (the start form, see `envkit/envdir/launch.py`),
the findings by code and their counts by family (manifest, project, dockerfile, runtime, reward,
deployment). The table goes to stdout as markdown (and to --markdown FILE); each environment's
JSON report and stderr are kept in --out DIR, so `--reuse` can rebuild the table without
re-running anything.

EXPORT is a folder of environments such as the `envs/` of a checkout of huggingface/OpenEnv
(never committed here; keep it inside the checkout, so the repository's `.git`/`.gitignore` is
above it and envkit recognises in-repo environments as a user's clone would); PY is the
interpreter of a venv holding openenv 0.10 and the environments' dependencies. Only the
environments that serve offline make sense (see docs/realworld.md, "Which environments serve
offline"), e.g.:

    .venv/bin/python bench/realworld.py /tmp/OpenEnv/envs --python /tmp/oe-venv/bin/python \\
        --envs echo_env,connect4_env,maze_env,chess_env,coding_env,wildfire_env,grid_world_env \\
        --envs carla_env,textarena_env,repl_env,reasoning_gym_env,dipg_safety_env,openspiel_env \\
        --envs atari_env --out /tmp/rw-out --markdown /tmp/rw-table.md

Every server envkit starts binds 127.0.0.1; nothing else is contacted.
Exit code: 0 when every environment produced a report, 1 when one did not (timeout, crash,
no JSON), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: Family names by the first digit of a code (envkit.findings.FAMILIES, repeated here so the
#: table can be rebuilt from saved reports without importing envkit).
FAMILY_NAMES = {
    "1": "manifest",
    "2": "project",
    "3": "dockerfile",
    "4": "runtime",
    "5": "reward",
    "6": "deployment",
}

#: Marker every process of one run inherits, to sweep leftovers after a timeout.
MARKER_VAR = "ENVKIT_REALWORLD_RUN"


def sweep(marker: str) -> list[int]:
    """SIGKILL live processes whose environment holds ``MARKER_VAR=marker`` (our own children
    only: the value is fresh per run); returns their PIDs. Reads `/proc` (Linux)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    killed: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return killed
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
        except OSError:
            continue
    return killed


@dataclass
class EnvResult:
    """One environment's run.

    Attributes:
        name: the folder name.
        exit_code: `envkit validate`'s exit code (0 ok, 1 findings, 2 error), ``None`` on timeout.
        seconds: wall time of the command.
        report: the parsed JSON report, ``None`` when there was none.
        stderr: its stderr (progress lines and any error).
    """

    name: str
    exit_code: int | None
    seconds: float
    report: dict | None
    stderr: str = ""
    codes: Counter = field(default_factory=Counter)
    hygiene: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.report is not None:
            found = self.report.get("findings", [])
            self.codes = Counter(f["code"] for f in found)
            # `hygiene`: generic layout warnings the text report folds (issue #13 item 4)
            self.hygiene = Counter(f["code"] for f in found if f.get("hygiene"))

    def checks(self) -> int | None:
        """Checks run (rules evaluated, not skipped), from the report's summary."""
        return (self.report or {}).get("summary", {}).get("checks_run")

    def families(self) -> Counter:
        """Findings per family name."""
        out: Counter = Counter()
        for code, n in self.codes.items():
            out[FAMILY_NAMES.get(code[2], code[2])] += n
        return out

    def start_form(self) -> str:
        """How the server was started: the kind of `envkit.envdir.launch` candidate that served
        (``manifest``, ``package``, ``script``, ``dockerfile``), read from the report's
        `runtime.launch` entry when it has one, else from the progress line envkit prints
        when the manifest form was not the one ("started with the package form from ...");
        ``manifest`` when the server started without a fallback; ``none (EK401)`` when
        nothing served."""
        rep = self.report or {}
        runtime = rep.get("runtime") if isinstance(rep.get("runtime"), dict) else {}
        for val in (runtime.get("launch"), rep.get("launch")):
            if isinstance(val, dict):
                val = val.get("label") or val.get("kind") or ""
            if isinstance(val, str) and val:
                return _form(val)
        if self.exit_code is None:
            return "timeout"
        if self.report is None:
            return "no report"
        if "EK401" in self.codes:
            return "none (EK401)"
        for line in self.stderr.splitlines():
            line = line.strip()
            if line.lower().startswith("started with the "):
                return _form(line[len("started with the ") :])
        return "manifest"


#: Labels of `envkit.envdir.launch.LaunchCandidate`, shortened for the table.
_FORMS = (
    ("manifest app from an enclosing", "manifest (enclosing folder)"),
    ("manifest", "manifest"),
    ("package", "package"),
    ("[project.scripts]", "script"),
    ("dockerfile", "dockerfile"),
)


def _form(label: str) -> str:
    """``package form from the parent folder: uvicorn ...`` -> ``package``."""
    low = label.lower()
    for prefix, short in _FORMS:
        if low.startswith(prefix.lower()):
            return short
    return label.split(": ", 1)[0]


def run_one(
    root: Path, python: str, *, timeout_s: float, extra: list[str], out: Path | None
) -> EnvResult:
    """Run `envkit validate ROOT --python PY --format json` and keep its report (and stderr)
    in ``out`` when given."""
    argv = [
        sys.executable,
        "-m",
        "envkit",
        "validate",
        str(root),
        "--python",
        python,
        "--format",
        "json",
        *extra,
    ]
    marker = f"{uuid.uuid4().hex}"
    env = dict(os.environ, NO_COLOR="1", **{MARKER_VAR: marker})
    t = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        # Ctrl-C first, so envkit stops the server it started; then whatever still carries
        # the marker (the server runs in its own session, out of envkit's process group).
        os.killpg(proc.pid, signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        code = None
    finally:
        sweep(marker)
    seconds = time.perf_counter() - t
    try:
        report = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        report = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{root.name}.json").write_text(stdout)
        (out / f"{root.name}.err").write_text(stderr)
        (out / f"{root.name}.meta.json").write_text(
            json.dumps({"exit_code": code, "seconds": round(seconds, 1)})
        )
    return EnvResult(root.name, code, seconds, report, stderr)


def load_one(name: str, out: Path) -> EnvResult:
    """An earlier run's result from ``out`` (see --reuse)."""
    meta_path = out / f"{name}.meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    raw = (out / f"{name}.json").read_text() if (out / f"{name}.json").is_file() else ""
    try:
        report = json.loads(raw) if raw.strip() else None
    except ValueError:
        report = None
    err = (out / f"{name}.err").read_text() if (out / f"{name}.err").is_file() else ""
    return EnvResult(
        name,
        meta.get("exit_code", 1 if report else None),
        float(meta.get("seconds", 0.0)),
        report,
        err,
    )


def markdown(results: list[EnvResult]) -> str:
    """The summary table plus a totals line, as markdown."""
    fams = list(FAMILY_NAMES.values())
    head = [
        "environment",
        "start form",
        "exit",
        "time s",
        "checks",
        "findings by code",
        "hygiene (folded)",
        *fams,
        "total",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total: Counter = Counter()
    for r in results:
        fam = r.families()
        total.update(fam)
        shown = r.codes - r.hygiene
        codes = _codes(shown)
        folded = _codes(r.hygiene)
        exit_txt = "timeout" if r.exit_code is None else str(r.exit_code)
        checks = r.checks()
        row = [
            r.name,
            r.start_form(),
            exit_txt,
            f"{r.seconds:.0f}",
            "-" if checks is None else str(checks),
            codes,
            folded,
            *(str(fam.get(f, 0)) for f in fams),
            str(sum(fam.values())),
        ]
        lines.append("| " + " | ".join(row) + " |")
    n = sum(total.values())
    n_hygiene = sum(sum(r.hygiene.values()) for r in results)
    behaviour = total.get("runtime", 0) + total.get("reward", 0)
    lines.append("")
    lines.append(
        f"{len(results)} environments, {n} findings: "
        + ", ".join(f"{f} {total.get(f, 0)}" for f in fams)
        + (f" (behaviour, runtime+reward: {behaviour}, {100 * behaviour // n}%)." if n else ".")
    )
    lines.append(f"Hygiene findings folded in the text report: {n_hygiene} of {n}.")
    started = sum(1 for r in results if r.report is not None and "EK401" not in r.codes)
    lines.append(f"Started by envkit itself: {started} of {len(results)}.")
    return "\n".join(lines) + "\n"


def _codes(counts: Counter) -> str:
    """``EK401, EK503x2``: codes in order, with a count when repeated; ``-`` when none."""
    return ", ".join(c + (f"x{n}" if n > 1 else "") for c, n in sorted(counts.items())) or "-"


def pick(export: Path, names: list[str]) -> list[Path]:
    """The environment folders to run: ``names`` in order, else every subfolder of ``export``
    with an `openenv.yaml` or a `server/` folder (sorted)."""
    if names:
        missing = [n for n in names if not (export / n).is_dir()]
        if missing:
            raise SystemExit(
                f"error: not in {export}: {', '.join(missing)}. "
                "Pass folder names under EXPORT to --envs."
            )
        return [export / n for n in names]
    return sorted(
        p
        for p in export.iterdir()
        if p.is_dir() and ((p / "openenv.yaml").is_file() or (p / "server").is_dir())
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("export", type=Path, help="folder holding the environment folders")
    ap.add_argument(
        "--python",
        help="interpreter with openenv 0.10 and the environments' deps (required unless --reuse)",
    )
    ap.add_argument(
        "--envs",
        action="append",
        default=[],
        help="comma-separated folder names, in order (repeatable); default: all",
    )
    ap.add_argument("--out", type=Path, help="keep each NAME.json/.err/.meta.json here")
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per environment (default 900)"
    )
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="do not run; rebuild the table from the reports in --out",
    )
    ap.add_argument(
        "--validate-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for envkit validate (repeatable), e.g. --episodes=3",
    )
    args = ap.parse_args(argv)

    names = [n.strip() for chunk in args.envs for n in chunk.split(",") if n.strip()]
    if not args.export.is_dir():
        ap.error(f"{args.export} is not a folder")
    if args.reuse and args.out is None:
        ap.error("--reuse needs --out (where the earlier reports are)")
    if not args.reuse and not args.python:
        ap.error("--python is required (a venv with openenv 0.10 and the environments' deps)")

    results: list[EnvResult] = []
    for root in pick(args.export.resolve(), names):
        if args.reuse:
            results.append(load_one(root.name, args.out))
            continue
        print(f"validating {root.name} ...", file=sys.stderr, flush=True)
        r = run_one(
            root, args.python, timeout_s=args.timeout, extra=args.validate_arg, out=args.out
        )
        print(
            f"  exit {r.exit_code}, {r.seconds:.0f} s, {sum(r.codes.values())} findings",
            file=sys.stderr,
            flush=True,
        )
        results.append(r)
    table = markdown(results)
    sys.stdout.write(table)
    if args.markdown is not None:
        args.markdown.write_text(table)
    return 0 if all(r.report is not None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
