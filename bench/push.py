"""Benchmark of `envkit push` against the Hub stand-in (tests/hubstub), in one run:

- overhead: `envkit.hub.push()` of the echo template to a new Space vs a bare
  `HfApi.create_repo` + `HfApi.upload_folder` of the same (staged) folder to another new Space;
  ratio = push / bare (push also stages, runs static validate, scans for secrets, diffs).
- unchanged re-push: bytes of request bodies sent to preupload/commit (target 0) and whether
  a commit was made (target: none), vs the bare `upload_folder` re-upload.

Usage: .venv/bin/python bench/push.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from tests.hubstub import WRITE_TOKEN, HubStub

    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    with tempfile.TemporaryDirectory() as tmp, HubStub.start(Path(tmp) / "hub") as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        os.environ["HF_HOME"] = str(Path(tmp) / "hf")
        from huggingface_hub import HfApi
        from huggingface_hub.utils import disable_progress_bars, logging

        from envkit.hub import push
        from envkit.scaffold import init_project

        disable_progress_bars()
        logging.set_verbosity_error()
        env = init_project("echo-env", output_dir=Path(tmp) / "envs", lock=False).path
        staged = Path(tmp) / "staged"
        push(env, repo_id="alice/warmup", token=WRITE_TOKEN, dry_run=True, dry_run_dir=staged)
        api = HfApi(endpoint=hub.url, token=WRITE_TOKEN)

        def upload_bytes() -> int:
            return sum(
                r.body_bytes
                for r in hub.requests
                if "/preupload/" in r.path or "/commit/" in r.path
            )

        t_push, t_bare = [], []
        for i in range(args.rounds):
            t0 = time.perf_counter()
            push(env, repo_id=f"alice/envkit-{i}", token=WRITE_TOKEN)
            t_push.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            api.create_repo(f"alice/bare-{i}", repo_type="space", space_sdk="docker")
            api.upload_folder(repo_id=f"alice/bare-{i}", repo_type="space", folder_path=staged)
            t_bare.append(time.perf_counter() - t0)

        hub.requests.clear()
        commits = hub.commit_count("alice/envkit-0")
        t0 = time.perf_counter()
        again = push(env, repo_id="alice/envkit-0", token=WRITE_TOKEN)
        t_again = time.perf_counter() - t0
        push_bytes = upload_bytes()
        push_commit = hub.commit_count("alice/envkit-0") != commits
        hub.requests.clear()
        t0 = time.perf_counter()
        api.upload_folder(repo_id="alice/bare-0", repo_type="space", folder_path=staged)
        t_bare_again = time.perf_counter() - t0
        bare_bytes = upload_bytes()

    mp, mb = statistics.median(t_push), statistics.median(t_bare)
    files = len(again.files)
    print(
        f"echo template: {files} files, {sum(f.size for f in again.files)} bytes; "
        f"{args.rounds} rounds, medians"
    )
    print(
        f"first push   envkit push {mp * 1000:7.1f} ms | bare create_repo+upload_folder "
        f"{mb * 1000:7.1f} ms | ratio {mp / mb:.2f}"
    )
    print(
        f"re-push      envkit push {t_again * 1000:7.1f} ms, {push_bytes} bytes to "
        f"preupload/commit, commit made: {push_commit} (file bytes {again.bytes_uploaded}) | "
        f"bare upload_folder {t_bare_again * 1000:7.1f} ms, {bare_bytes} bytes"
    )


if __name__ == "__main__":
    main()
