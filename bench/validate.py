"""Benchmark of `envkit validate`'s runtime stage (issue #3, "Benchmark").

Run:  .venv/bin/python bench/validate.py [--episodes 5] [--steps 300] [--no-docker | --only-lanes]

Measured in the same run, on a freshly generated echo environment:
1. the server's own cold start (start uvicorn, wait for GET /health) -- the baseline;
2. a full runtime validate (`run_runtime`, which starts its own server)   target <= 3x (1);
3. static-only validate (`envkit.validation.validate(static=True)`)       target <= 0.5 s;
4. fuzz steps/s (envkit's session stepping fuzzed actions) vs raw client steps/s
   (openenv-core's GenericEnvClient on the same server)                     target >= 0.8x.
5. (issue #14; skip with --no-docker) the container lane (`validate_docker`, image already built:
   warm image cache) vs the source lane (`validate`), both full runs       target <= 2x.
6. (issue #13; needs --real-env PATH --real-python PY, else skipped) one real OpenEnv environment
   (e.g. echo_env or connect4_env exported from huggingface/OpenEnv `envs/`), served once with
   PY (a venv holding openenv 0.10 and the environment's dependencies); on that same server
   `envkit validate --url URL` vs OpenEnv 0.10's `openenv validate --url URL` (PY's venv):
   wall time of each command and the checks each ran          target envkit <= 1/3 of the time
                                                                while running >= 10x the checks.
   Also shown: `envkit validate PATH --url URL` (envkit's static rules on the folder too), and
   openenv's bare CLI start-up (`openenv --help`), which is most of its wall time.
   Run only this part (EXPORT: the exported `envs/` folder, VENV: its venv):
     .venv/bin/python bench/validate.py --only-real
         --real-env EXPORT/echo_env --real-python VENV/bin/python
7. every built-in template, generated and validated with the defaults (`validate(PATH)`:
   static and runtime stages): wall seconds of each, and the seconds of it spent in the
   reward-design probes (`timings["probes"]`, envkit.validation.probing)   target: the probes
   keep a template's validate <= 1.5x its time without them. A template whose dependencies
   the bench's interpreter lacks (gymnasium) needs `--template-python gymnasium=PY` (a venv
   with openenv 0.10 and them), else it is skipped. Run only this part:
     .venv/bin/python bench/validate.py --only-templates [--template-python gymnasium=PY]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cold_start(root: Path, app: str) -> float:
    from envkit.server import start_server

    t = time.perf_counter()
    server = start_server(root, app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=120)
        return time.perf_counter() - t
    finally:
        server.stop(grace_s=1)


def full_runtime(root: Path, episodes: int) -> tuple[float, int]:
    from envkit.envdir import EnvDir
    from envkit.validation.options import RunOptions
    from envkit.validation.runtime import RuntimeTarget, run_runtime

    t = time.perf_counter()
    out = run_runtime(
        RuntimeTarget(url=None, envdir=EnvDir(root), python=sys.executable),
        RunOptions(episodes=episodes),
    )
    return time.perf_counter() - t, len(out.findings)


def static_only(root: Path) -> float | None:
    try:
        from envkit.validation import validate
    except ImportError:
        return None
    t = time.perf_counter()
    validate(root, static=True)
    return time.perf_counter() - t


def fuzz_vs_raw(root: Path, steps: int) -> tuple[float, float]:
    import httpx
    from openenv.core import GenericEnvClient

    from envkit.envdir.manifest import read_manifest
    from envkit.server import start_server
    from envkit.validation import fuzz
    from envkit.wire import EnvSession

    server = start_server(root, read_manifest(root).app, python=sys.executable)
    try:
        server.wait_healthy(timeout_s=120)
        schema = httpx.get(server.url + "/schema").json()["action"]
        actions = fuzz.generate_actions(schema, min(steps, 100), seed=0)

        # envkit: the fuzz loop's wire path (steps, resets on done)
        with EnvSession(server.url) as s:
            s.reset(seed=0)
            t = time.perf_counter()
            for i in range(steps):
                if s.step(actions[i % len(actions)]).done:
                    s.reset(seed=i)
            ours = steps / (time.perf_counter() - t)

        async def raw() -> float:
            async with GenericEnvClient(base_url=server.url) as env:
                await env.reset(seed=0)
                t = time.perf_counter()
                for i in range(steps):
                    r = await env.step(actions[i % len(actions)])
                    if r.done:
                        await env.reset(seed=i)
                return steps / (time.perf_counter() - t)

        theirs = asyncio.run(raw())
        return ours, theirs
    finally:
        server.stop(grace_s=1)


def lanes(root: Path, episodes: int) -> tuple[float, float, float]:
    """(source lane s, docker lane s, build s): full `validate` runs of each lane; the image
    is built once first (the docker lane then finds it warm, like a re-run before a deploy)."""
    from envkit.container import build_image, validate_docker
    from envkit.validation import validate

    tag = "envkit-bench-echo:latest"
    t = time.perf_counter()
    build_image(root, tag=tag, labels={"envkit.bench": "validate"})
    build = time.perf_counter() - t
    try:
        validate_docker(root, image=tag, episodes=episodes)  # warm the page cache once
        t = time.perf_counter()
        docker = validate_docker(root, image=tag, episodes=episodes)
        docker_s = time.perf_counter() - t
        t = time.perf_counter()
        source = validate(root, python=sys.executable, episodes=episodes)
        source_s = time.perf_counter() - t
        for lane, rep in (("docker", docker), ("source", source)):
            if rep.errors:
                print(
                    f"warning: the {lane} lane reported {len(rep.errors)} error(s): "
                    + ", ".join(f.code for f in rep.errors),
                    file=sys.stderr,
                )
    finally:
        from envkit.container import docker_client

        client = docker_client()
        try:
            client.images.remove(tag, force=True)
        finally:
            client.close()
    return source_s, docker_s, build


# -- 6. a real OpenEnv environment vs OpenEnv 0.10's validator (issue #13) ----------------------
def serve_real(root: Path, python: str):
    """Start the real environment with the first `envkit.envdir.launch` candidate that gets healthy.

    Returns:
        (server, candidate): the running :class:`envkit.server.ServerProcess` (the caller stops
        it) and the :class:`envkit.envdir.launch.LaunchCandidate` that served.

    Raises:
        SystemExit: no candidate served (the last log tail is printed).
    """
    from envkit.envdir.launch import launch_candidates
    from envkit.envdir.manifest import read_manifest
    from envkit.errors import EnvkitError
    from envkit.server import start_server

    try:
        manifest = read_manifest(root)
    except EnvkitError:
        manifest = None
    last = ""
    for cand in launch_candidates(root, manifest):
        if cand.app is None:  # a main() entry point: envkit validate PATH handles it, not this
            continue
        server = start_server(cand.cwd, cand.app, python=python, env=cand.env())
        try:
            server.wait_healthy(timeout_s=180)
            return server, cand
        except EnvkitError as exc:
            last = f"{cand.describe()}: {exc}\n{server.log_tail(15)}"
            server.stop(grace_s=1)
        except BaseException:  # Ctrl-C while waiting: leave no server behind
            server.stop(grace_s=1)
            raise
    raise SystemExit(f"bench: could not serve {root}.\n{last}")


def _timed(argv: list[str]) -> tuple[float, dict, int]:
    """Run a validator command; (wall seconds, its JSON report, exit code)."""
    env = dict(os.environ, NO_COLOR="1")
    t = time.perf_counter()
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=1800, stdin=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(
            f"bench: {' '.join(argv[:4])} ... printed no JSON report "
            f"(exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        ) from None
    return wall, report, proc.returncode


def envkit_checks(report: dict) -> int:
    """Checks envkit ran: its JSON `checks` with status passed/failed when the report lists
    them, else `summary.checks_run` (the same count: rules evaluated, not skipped)."""
    checks = report.get("checks")
    if isinstance(checks, list):
        return sum(1 for c in checks if c.get("status") in ("passed", "failed"))
    return int(report["summary"]["checks_run"])


def openenv_checks(report: dict) -> int:
    """Checks `openenv validate` ran: the entries of its JSON `results` (local-package mode)
    or `criteria` (`--url` mode in 0.10), skipped ones left out."""
    items = report.get("results")
    if not isinstance(items, list):
        items = report.get("criteria") or []
    return sum(1 for c in items if str(c.get("status", "")).lower() not in ("skip", "skipped"))


def openenv_command(python: str) -> list[str]:
    """`openenv` next to ``python`` (the console script a user runs), else `-m openenv.cli`."""
    script = Path(python).parent / "openenv"
    return [str(script)] if script.is_file() else [python, "-m", "openenv.cli"]


def real_env(root: Path, python: str, episodes: int, repeat: int) -> None:
    """Serve ``root`` once and time both validators on it (best of ``repeat`` runs each, after
    one untimed warm-up of each so neither pays the cold OS cache); prints the figures."""
    server, cand = serve_real(root, python)
    try:
        url = server.url
        ours_cmd = [
            sys.executable,
            "-m",
            "envkit",
            "validate",
            "--url",
            url,
            "--format",
            "json",
            "--episodes",
            str(episodes),
        ]
        # the same server, plus envkit's static rules on the folder it was started from
        with_path_cmd = ours_cmd[:4] + [str(root)] + ours_cmd[4:]
        theirs_cmd = openenv_command(python) + ["validate", "--url", url, "--json"]
        _timed(ours_cmd)
        _timed(theirs_cmd)
        ours = min((_timed(ours_cmd) for _ in range(repeat)), key=lambda r: r[0])
        with_path = min((_timed(with_path_cmd) for _ in range(repeat)), key=lambda r: r[0])
        theirs = min((_timed(theirs_cmd) for _ in range(repeat)), key=lambda r: r[0])
        t = time.perf_counter()  # context: how much of theirs is the CLI's own start-up
        subprocess.run(
            openenv_command(python) + ["--help"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=600,
        )
        theirs_startup = time.perf_counter() - t
    finally:
        server.stop(grace_s=2)
    n_ours, n_theirs = envkit_checks(ours[1]), openenv_checks(theirs[1])
    s = ours[1].get("summary", {})
    print(f"real environment              {root.name} ({cand.label}; {url})")
    print(
        f"envkit validate --url         {ours[0]:7.2f} s   {n_ours:4d} checks  "
        f"(exit {ours[2]}; {s.get('errors', '?')} errors, {s.get('warnings', '?')} warnings, "
        f"{s.get('infos', '?')} infos)"
    )
    print(
        f"envkit validate PATH --url    {with_path[0]:7.2f} s   "
        f"{envkit_checks(with_path[1]):4d} checks  (static rules too; ratios "
        f"{with_path[0] / theirs[0]:.2f}x time, "
        f"{envkit_checks(with_path[1]) / max(n_theirs, 1):.1f}x checks)"
    )
    print(
        f"openenv validate --url (0.10) {theirs[0]:7.2f} s   {n_theirs:4d} checks  "
        f"(exit {theirs[2]}; passed={theirs[1].get('passed')}; its CLI start-up "
        f"`openenv --help` alone {theirs_startup:.1f} s)"
    )
    print(f"time ratio envkit/openenv     {ours[0] / theirs[0]:7.2f}x    (target <= 0.33x)")
    ratio = n_ours / n_theirs if n_theirs else float("inf")
    print(f"checks ratio envkit/openenv   {ratio:7.1f}x    (target >= 10x)")


def real_env_section(args: argparse.Namespace) -> None:
    if args.real_env is None or args.real_python is None:
        print(
            "real OpenEnv environment      skipped (pass --real-env PATH --real-python PY: "
            "an environment folder and a venv with openenv 0.10 and its dependencies)"
        )
        return
    real_env(Path(args.real_env).resolve(), args.real_python, args.episodes, args.repeat)


TEMPLATES = ("echo", "guess", "rlvr", "tools", "gymnasium", "code")
#: modules a template's server imports beyond openenv (its template.toml `dependencies`)
TEMPLATE_IMPORTS = {"gymnasium": "gymnasium"}


#: what the training-path work added to a default validate: the reward-design probes (the
#: lane is switched off with ``train_path=False``)
NEW_PROBES = tuple(f"EK{n}" for n in range(513, 523))


def template_costs(pythons: dict[str, str], only: list[str] | None = None, repeat: int = 1) -> None:
    """Section 7: generate each template and validate it with the defaults; prints the wall
    seconds of each run, the seconds of it the reward-design probes and the training-path
    lane took, and the same validate without them (``train_path=False``, the probes
    ignored) as the baseline measured in this run, with the ratio (target <= 1.5x).

    Args:
        pythons: template -> interpreter to serve it with (default: this one).
        only: the templates to run (default: all).
        repeat: runs of each, alternating baseline and default; the medians are printed.
    """
    import importlib.util

    from envkit.scaffold import init_project
    from envkit.validation import validate

    print(
        f"{'template':<12}{'baseline s':>11}{'validate s':>11}{'ratio':>7}"
        f"{'probes s':>10}{'lane s':>8}  findings"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in only or TEMPLATES:
            python = pythons.get(name, sys.executable)
            needs = TEMPLATE_IMPORTS.get(name)
            if name not in pythons and needs and importlib.util.find_spec(needs) is None:
                print(f"{name:<12}    skipped (needs {needs}: --template-python {name}=PY)")
                continue
            # a real lock (uv's cache, or PyPI once): EK222 compares it with pyproject.toml
            root = init_project(f"bench-{name}", template=name, output_dir=Path(tmp))
            bases, walls, probe_s, lane_s = [], [], [], []
            for _ in range(max(1, repeat)):
                t = time.perf_counter()
                validate(root.path, python=python, train_path=False, ignore=list(NEW_PROBES))
                bases.append(time.perf_counter() - t)
                t = time.perf_counter()
                report = validate(root.path, python=python)
                walls.append(time.perf_counter() - t)
                probe_s.append(report.timings.get("probes", 0.0))
                lane_s.append(report.timings.get("train_path", 0.0))
            base, wall = statistics.median(bases), statistics.median(walls)
            probes, lane = statistics.median(probe_s), statistics.median(lane_s)
            codes = ",".join(sorted({f.code for f in report.findings})) or "-"
            print(
                f"{name:<12}{base:11.2f}{wall:11.2f}{wall / base:6.2f}x"
                f"{probes:10.2f}{lane:8.2f}  {codes}"
            )


def main() -> None:
    # As users run it: the servers' bytecode cache (envkit.server.bytecode_env) is used unless
    # PYTHONDONTWRITEBYTECODE is set, which some shells (and these machines) set.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument(
        "--no-docker",
        dest="docker",
        action="store_false",
        help="skip the container lane vs source lane timing (needs Docker)",
    )
    ap.add_argument("--only-lanes", action="store_true", help="time only the two lanes")
    ap.add_argument(
        "--real-env",
        metavar="PATH",
        help="a real OpenEnv environment folder (section 6; skipped without it)",
    )
    ap.add_argument(
        "--real-python",
        metavar="PY",
        help="interpreter of a venv with openenv 0.10 and the real env's deps",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="timed runs of each validator in section 6 (best kept)",
    )
    ap.add_argument("--only-real", action="store_true", help="run only section 6")
    ap.add_argument("--only-templates", action="store_true", help="run only section 7")
    ap.add_argument(
        "--templates", default="", help="comma-separated templates for section 7 (default: all)"
    )
    ap.add_argument(
        "--template-repeat",
        type=int,
        default=3,
        help="section 7: runs of each, medians printed",
    )
    ap.add_argument(
        "--template-python",
        action="append",
        default=[],
        metavar="TEMPLATE=PY",
        help="interpreter serving one template in section 7 (repeatable)",
    )
    args = ap.parse_args()
    pythons = dict(item.split("=", 1) for item in args.template_python)
    if args.only_real:
        real_env_section(args)
        return
    if args.only_templates:
        template_costs(pythons, [t for t in args.templates.split(",") if t], args.template_repeat)
        return

    from envkit.scaffold import init_project

    with tempfile.TemporaryDirectory() as tmp:
        root = init_project("bench-env", output_dir=Path(tmp), lock=False).path
        from envkit.envdir.manifest import read_manifest

        app = read_manifest(root).app
        lane_times = lanes(root, args.episodes) if args.docker else None
        if lane_times is not None:
            src, dock, build = lane_times
            print(f"source lane validate          {src:7.2f} s")
            print(
                f"docker lane validate          {dock:7.2f} s   ratio {dock / src:5.2f}x  "
                f"(target <= 2x; warm image, built once in {build:.1f} s)"
            )
        if args.only_lanes:
            return
        cold_start(root, app)  # warm the OS caches once, like any later run would be
        base = cold_start(root, app)
        full, nfind = full_runtime(root, args.episodes)
        stat = static_only(root)
        ours, theirs = fuzz_vs_raw(root, args.steps)

    print(f"server cold start (baseline)  {base:7.2f} s")
    print(
        f"full runtime validate         {full:7.2f} s   ratio {full / base:5.2f}x  "
        f"(target <= 3x; {nfind} findings)"
    )
    if stat is not None:
        print(f"static-only validate          {stat:7.2f} s   (target <= 0.5 s)")
    print(f"fuzz steps/s (envkit)         {ours:7.0f}")
    print(
        f"raw client steps/s (openenv)  {theirs:7.0f}     ratio {ours / theirs:5.2f}x  "
        "(target >= 0.8x)"
    )
    real_env_section(args)
    template_costs(pythons, repeat=args.template_repeat)


if __name__ == "__main__":
    main()
