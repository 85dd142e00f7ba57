"""`envkit deploy ray` end to end on a real single-node Ray cluster (Ray Serve 2.60).

The guess template is built into a venv with `ray[serve]` (cached across runs), a private Ray
is started on 127.0.0.1 in a session of its own (bench/_scale_ray.py), two replicas of
`MAX_CONCURRENT_ENVS=4` are deployed, 8 openenv client sessions are held open at once and
play oracle episodes to the maximum reward, and `--delete` leaves no Serve application while
Ray keeps running. The cluster's processes are ended by their session id, never by
`ray stop` (it ends every Ray process on the host).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from bench._scale_ray import free_port, local_ray, session_pids
from tests.templates.conftest import build_env

# One xdist worker runs the module: one venv build and one private Ray cluster.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

RAY_REQUIREMENT = "ray[serve]==2.60.*\n"
CAPACITY = 4
REPLICAS = 2
SESSIONS = REPLICAS * CAPACITY
TIMINGS: dict[str, float] = {}


def _envkit(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envkit", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def ray_env(tmp_path_factory: pytest.TempPathFactory):
    started = time.monotonic()
    env = build_env(tmp_path_factory.mktemp("ray-env"), "guess", extra_requirements=RAY_REQUIREMENT)
    TIMINGS["venv build (s)"] = time.monotonic() - started
    return env


@pytest.fixture(scope="module")
def ray_cluster(ray_env):
    with local_ray(ray_env.python) as cluster:
        TIMINGS["ray start (s)"] = cluster.start_s
        yield cluster
    assert session_pids(cluster.sid) == set(), "a Ray process outlived the test"


def _play_all(url: str, env) -> dict[int, object]:
    """SESSIONS oracle episodes over openenv's client, all sessions open at once: each
    resets, waits at a barrier for the others, then plays to the end. Seed -> max reward
    (or the error's repr)."""
    from openenv.core import GenericEnvClient

    from envkit.envdir.manifest import read_manifest
    from envkit.policy import PolicyProcess

    spec = read_manifest(env.path).spec
    oracle = PolicyProcess(spec.oracle, env.path, env.python)
    lock = threading.Lock()
    barrier = threading.Barrier(SESSIONS)
    results: dict[int, object] = {}

    def play(seed: int) -> None:
        try:
            with GenericEnvClient(base_url=url).sync() as client:
                result = client.reset(seed=seed)
                barrier.wait(timeout=120)  # all SESSIONS sessions are held now
                rewards = []
                while not result.done and len(rewards) < spec.max_steps:
                    with lock:
                        action = oracle(result.observation)
                    result = client.step(action)
                    rewards.append(result.reward)
                results[seed] = max(rewards)
        except Exception as exc:  # noqa: BLE001 - reported per seed by the assertion
            results[seed] = repr(exc)[:300]
            barrier.abort()

    threads = [threading.Thread(target=play, args=(seed,)) for seed in range(SESSIONS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    finally:
        oracle.close()
    return results


def test_deploy_serves_replicas_then_delete_leaves_no_application(ray_env, ray_cluster):
    from envkit.scale.ray_deploy import serve_applications

    begun = time.monotonic()
    port = free_port()
    started = time.monotonic()
    deploy = _envkit(
        "deploy", "ray", str(ray_env.path), "--replicas", str(REPLICAS),
        "--python", ray_env.python, "--address", ray_cluster.address, "--port", str(port),
        "-e", f"MAX_CONCURRENT_ENVS={CAPACITY}",
    )  # fmt: skip
    TIMINGS["deploy (s)"] = time.monotonic() - started
    assert deploy.returncode == 0, deploy.stdout + deploy.stderr
    url = f"http://127.0.0.1:{port}"
    assert deploy.stdout.strip() == url
    assert "binds all interfaces and has no authentication" in deploy.stderr
    assert f"{REPLICAS} replicas x {CAPACITY} sessions" in deploy.stderr

    # The driver has exited: the application lives on in Serve.
    started = time.monotonic()
    results = _play_all(url, ray_env)
    TIMINGS["8 sessions (s)"] = time.monotonic() - started
    assert results == dict.fromkeys(range(SESSIONS), 1.0)

    apps = serve_applications(ray_cluster.address, ray_env.python)
    assert apps == {"guess_env": "RUNNING"}

    delete = _envkit(
        "deploy", "ray", "--delete", "guess_env",
        "--address", ray_cluster.address, "--python", ray_env.python,
    )  # fmt: skip
    TIMINGS["deploy+play+status+delete (s)"] = time.monotonic() - begun
    assert delete.returncode == 0, delete.stdout + delete.stderr
    # Ray keeps running (this answer comes from it) with no application left.
    assert serve_applications(ray_cluster.address, ray_env.python) == {}
    assert session_pids(ray_cluster.sid), "deleting the application stopped Ray"
    TIMINGS["test body (s)"] = time.monotonic() - begun


def teardown_module() -> None:
    print("\n" + ", ".join(f"{k}: {v:.1f}" for k, v in TIMINGS.items()))


def test_missing_application_and_missing_cluster_are_one_line_errors(ray_env, ray_cluster):
    gone = _envkit(
        "deploy", "ray", "--delete", "no-such-app",
        "--address", ray_cluster.address, "--python", ray_env.python,
    )  # fmt: skip
    assert gone.returncode == 2
    assert "No Serve application named 'no-such-app'" in gone.stderr
    assert "Traceback" not in gone.stderr

    nobody = _envkit(
        "deploy", "ray", str(ray_env.path), "--python", ray_env.python,
        "--address", f"127.0.0.1:{free_port()}", "-e", "MAX_CONCURRENT_ENVS=4",
    )  # fmt: skip
    assert nobody.returncode == 2
    assert "No Ray cluster answers at --address" in nobody.stderr
    assert "ray start --head" in nobody.stderr


def test_autoscaling_config_is_accepted_by_ray_serve(ray_env):
    """The dict `--autoscale` sends is a valid `AutoscalingConfig` of the installed Ray Serve
    (no cluster needed; an unknown key or a bad value raises)."""
    import json

    from envkit.scale.ray_deploy import autoscaling_config

    config = autoscaling_config(1, 3, CAPACITY)
    code = (
        "import json, sys\n"
        "from ray.serve.config import AutoscalingConfig\n"
        "c = AutoscalingConfig(**json.loads(sys.argv[1]))\n"
        "print(c.min_replicas, c.max_replicas, int(c.target_ongoing_requests))\n"
    )
    proc = subprocess.run(
        [ray_env.python, "-c", code, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "3", "3"]
