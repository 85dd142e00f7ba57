"""Build speed: a cold build of the echo template vs a rebuild after a code-only change,
measured in the same run on the same engine, plus the image's size.

A cold build runs every step (``no_cache=True``, the local base image excepted); the rebuild
edits one Python file of the environment, so only the code layer (and the LABEL steps)
should run again: the dependency layer comes from the cache. Target (issue #4): rebuild
<= 10% of cold. Needs a Docker engine and the base image (``bash .ci/docker-setup.sh``).

Usage:
    python bench/build.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rebuilds to take the median of")
    args = parser.parse_args()

    from envkit.container import build_image, docker_client
    from envkit.scaffold import init_project

    run_id = uuid.uuid4().hex[:8]
    labels = {"envkit.bench": run_id}
    tag = f"envkit-bench-echo:{run_id}"
    client = docker_client()
    try:
        with tempfile.TemporaryDirectory(prefix="envkit-bench-") as tmp:
            env = init_project("echo-env", output_dir=Path(tmp), lock=False).path
            cold = build_image(env, tag=tag, labels=labels, no_cache=True)
            code = env / "server" / "echo_env_environment.py"
            rebuilds = []
            for i in range(args.runs):
                code.write_text(code.read_text() + f"\n# code-only edit {i}\n")
                r = build_image(env, tag=tag, labels=labels)
                dep = next(
                    s
                    for s in r.steps
                    if "uv pip install" in s.instruction or "uv sync" in s.instruction
                )
                if not dep.cached:
                    print(
                        "FAIL: the dependency layer was rebuilt after a code-only edit",
                        file=sys.stderr,
                    )
                    return 1
                rebuilds.append(r.seconds)
            rebuild = statistics.median(rebuilds)
            ratio = rebuild / cold.seconds
            print(
                f"cold build           {cold.seconds:7.2f} s  ({len(cold.steps)} steps, "
                f"{cold.cache_hits} from cache)"
            )
            print(
                f"rebuild (code edit)  {rebuild:7.2f} s  (median of {args.runs}; "
                f"{r.cache_hits}/{len(r.steps)} steps from cache)"
            )
            print(
                f"rebuild / cold       {ratio:7.1%}  (target <= 10%: "
                f"{'met' if ratio <= 0.10 else 'NOT met'})"
            )
            print(f"echo image size      {cold.size_mb:7.1f} MB")
            return 0 if ratio <= 0.10 else 1
    finally:
        for img in client.images.list(filters={"label": [f"envkit.bench={run_id}"]}):
            try:
                client.images.remove(img.id, force=True)
            except Exception:  # noqa: BLE001 - best-effort cleanup
                pass
        client.close()


if __name__ == "__main__":
    sys.exit(main())
