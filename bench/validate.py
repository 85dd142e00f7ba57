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
"""

from __future__ import annotations

import argparse
import asyncio
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
    from envkit.manifest import read_manifest
    from envkit.validation.runtime import RuntimeTarget, run_runtime

    t = time.perf_counter()
    out = run_runtime(RuntimeTarget(url=None, root=root, manifest=read_manifest(root),
                                    python=sys.executable), episodes=episodes)
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
    from openenv.core import GenericEnvClient

    from envkit.manifest import read_manifest
    from envkit.server import start_server
    from envkit.validation import fuzz
    from envkit.wire import EnvSession

    import httpx

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
                print(f"warning: the {lane} lane reported {len(rep.errors)} error(s): "
                      + ", ".join(f.code for f in rep.errors), file=sys.stderr)
    finally:
        from envkit.container import docker_client

        client = docker_client()
        try:
            client.images.remove(tag, force=True)
        finally:
            client.close()
    return source_s, docker_s, build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--no-docker", dest="docker", action="store_false",
                    help="skip the container lane vs source lane timing (needs Docker)")
    ap.add_argument("--only-lanes", action="store_true",
                    help="time only the two lanes")
    args = ap.parse_args()

    from envkit.scaffold import init_project

    with tempfile.TemporaryDirectory() as tmp:
        root = init_project("bench-env", output_dir=Path(tmp), lock=False).path
        from envkit.manifest import read_manifest

        app = read_manifest(root).app
        lane_times = lanes(root, args.episodes) if args.docker else None
        if lane_times is not None:
            src, dock, build = lane_times
            print(f"source lane validate          {src:7.2f} s")
            print(f"docker lane validate          {dock:7.2f} s   ratio {dock / src:5.2f}x  "
                  f"(target <= 2x; warm image, built once in {build:.1f} s)")
        if args.only_lanes:
            return
        cold_start(root, app)  # warm the OS caches once, like any later run would be
        base = cold_start(root, app)
        full, nfind = full_runtime(root, args.episodes)
        stat = static_only(root)
        ours, theirs = fuzz_vs_raw(root, args.steps)

    print(f"server cold start (baseline)  {base:7.2f} s")
    print(f"full runtime validate         {full:7.2f} s   ratio {full / base:5.2f}x  "
          f"(target <= 3x; {nfind} findings)")
    if stat is not None:
        print(f"static-only validate          {stat:7.2f} s   (target <= 0.5 s)")
    print(f"fuzz steps/s (envkit)         {ours:7.0f}")
    print(f"raw client steps/s (openenv)  {theirs:7.0f}     ratio {ours / theirs:5.2f}x  "
          "(target >= 0.8x)")


if __name__ == "__main__":
    main()
