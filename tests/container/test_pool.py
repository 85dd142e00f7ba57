"""`envkit run --docker --replicas N`: a pool of replicas behind one HAProxy URL, on a real
Docker engine, with the guess template, OpenEnv's real client and real `envkit` subprocesses.

One pool serves the whole module (3 replicas x MAX_CONCURRENT_ENVS=4 = 12 sessions); its
finalizer removes everything carrying the pool's label, whatever the tests did.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from envkit.container._engine import listed_containers
from envkit.container.haproxy import parse_stats, render_config, slots_for

REPLICAS = 3
PER_REPLICA = 4


def _envkit(*args: object, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """A real `envkit` process (wide, plain output)."""
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "envkit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


class Pool:
    """The module's pool: its URL, name, environment directory and what `run` printed."""

    def __init__(self, path: Path, name: str, result: subprocess.CompletedProcess[str]):
        self.path = path
        self.name = name
        self.result = result
        self.url = result.stdout.strip().splitlines()[-1]
        m = re.search(r"stats: (http://127\.0\.0\.1:\d+/stats)", result.stderr)
        self.stats_url = m.group(1) if m else ""
        m = re.search(r"watcher: process (\d+)", result.stderr)
        self.watcher_pid = int(m.group(1)) if m else None

    def servers(self) -> list[dict[str, str]]:
        import httpx

        return parse_stats(httpx.get(self.stats_url + ";csv", timeout=5).text)

    def up(self) -> list[dict[str, str]]:
        return [r for r in self.servers() if r["status"].startswith("UP")]


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (its parent, the `envkit run` process, has exited) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def pool(docker_engine, dclient, run_id, tmp_path_factory):
    """`envkit run --docker --replicas 3 -e MAX_CONCURRENT_ENVS=4 --detach --name P` of a
    fresh guess environment (its image tagged and labelled for this session's cleanup)."""
    from envkit.scaffold import init_project

    parent = tmp_path_factory.mktemp("pool")
    path = init_project("g", template="guess", output_dir=parent, lock=False, skills=False).path
    name = f"envkit-test-pool-{run_id}"
    result = _envkit(
        "run", "--docker", path, "--replicas", REPLICAS, "-e", f"MAX_CONCURRENT_ENVS={PER_REPLICA}",
        "--detach", "--name", name, "--tag", f"envkit-test-g:{run_id}",
        "--label", f"envkit.test={run_id}",
    )  # fmt: skip
    try:
        assert result.returncode == 0, result.stderr
        yield Pool(path, name, result)
    finally:
        watcher = Pool(path, name, result).watcher_pid if result.returncode == 0 else None
        selector = {"label": [f"envkit.pool={name}"]}
        for c in listed_containers(dclient, selector):
            c.remove(force=True)
        for net in dclient.networks.list(filters=selector):
            net.remove()
        deadline = time.monotonic() + 10
        while _alive(watcher) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(watcher):  # started by this fixture's `envkit run`: ours to end
            os.kill(watcher, 9)


def _oracle(path: Path):
    spec = importlib.util.spec_from_file_location(
        "pool_guess_oracle", path / "server" / "oracle.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.policy


@pytest.mark.docker
def test_banner_prints_url_capacity_and_stop_command(pool):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", pool.url)
    err = pool.result.stderr
    assert f"3 replicas x {PER_REPLICA} sessions (MAX_CONCURRENT_ENVS) = 12 concurrent" in err
    assert f"Stop it with: envkit stop {pool.name}" in err
    assert "WebSocket idle timeout 60 s" in err  # the guess manifest's episode_timeout_s
    assert pool.watcher_pid is not None and pool.stats_url


@pytest.mark.docker
def test_everything_labelled_and_published_on_loopback_only(pool, dclient):
    sel = {"label": [f"envkit.pool={pool.name}", "envkit.managed=true"]}
    containers = listed_containers(dclient, sel)
    roles = sorted(c.labels["envkit.role"] for c in containers)
    assert roles == ["lb", "replica", "replica", "replica"]
    assert len(dclient.networks.list(filters=sel)) == 1
    for c in containers:
        ports = c.attrs["NetworkSettings"]["Ports"] or {}
        bindings = [b for v in ports.values() if v for b in v]
        if c.labels["envkit.role"] == "replica":
            assert bindings == []  # reachable only through the balancer
            assert "MAX_CONCURRENT_ENVS=4" in c.attrs["Config"]["Env"]
        else:
            assert bindings and {b["HostIp"] for b in bindings} == {"127.0.0.1"}
            assert pool.url.endswith(":" + ports["8080/tcp"][0]["HostPort"])


@pytest.mark.docker
def test_twelve_oracle_sessions_and_the_thirteenth_refused(pool):
    from openenv.core import GenericEnvClient

    from envkit.envdir import EnvDir
    from envkit.wire import EnvSession, probe_session

    policy = _oracle(pool.path)
    best = EnvDir(pool.path).spec.reward_range[1]
    with ExitStack() as stack:
        clients = [
            stack.enter_context(GenericEnvClient(base_url=pool.url).sync()) for _ in range(12)
        ]
        firsts = [c.reset(seed=i) for i, c in enumerate(clients)]  # all 12 open at once
        assert sorted(int(r["scur"]) for r in pool.up()) == [4, 4, 4]
        start = time.monotonic()
        extra = EnvSession(pool.url, timeout_s=5)
        try:
            refusal = probe_session(extra, timeout_s=5)
        finally:
            extra.close()
        assert time.monotonic() - start < 5
        assert refusal is not None and refusal.code == "CAPACITY_REACHED", refusal
        assert "capacity" in refusal.message.lower()
        for client, result in zip(clients, firsts, strict=True):
            rewards = []
            while not result.done and len(rewards) < 16:
                result = client.step(policy(result.observation))
                rewards.append(result.reward)
            assert result.done and max(rewards) == best


@pytest.mark.docker
def test_eval_through_the_pool_has_no_errors(pool, tmp_path):
    r = _envkit(
        "eval", pool.path, "--url", pool.url, "-c", 12, "--policy", "oracle",
        "--episodes", 12, "--format", "json", "--out", tmp_path / "out",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["episode_errors"] == 0 and summary["episodes"] == 12
    assert summary["success_rate"] == 1.0


@pytest.mark.docker
def test_a_killed_replica_is_restarted_and_sessions_keep_succeeding(pool, dclient):
    from envkit.wire import EnvSession

    victim = f"{pool.name}-r2"
    dclient.containers.get(victim).kill()
    killed = time.monotonic()
    ok_in_a_row = 0
    while time.monotonic() - killed < 15 and ok_in_a_row < 6:
        try:
            with EnvSession(pool.url, timeout_s=5) as s:
                s.reset(seed=1)
            ok_in_a_row += 1
        except Exception:  # noqa: BLE001 - a failed session is what is counted here
            ok_in_a_row = 0
        time.sleep(0.3)
    assert ok_in_a_row >= 6, f"sessions kept failing for 15 s after killing {victim}"
    # The restarted replica imports its server again before /health answers, then needs two
    # passing checks (`rise 2`): ~5 s on a quiet machine, several times that on a CI machine
    # whose two cores also build images. 90 s tells slow from never.
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if dclient.containers.get(victim).status == "running" and len(pool.up()) == REPLICAS:
            break
        time.sleep(0.5)
    container = dclient.containers.get(victim)
    assert container.status == "running"
    # the last health check of each slot (HAProxy's CSV: L7OK, L4TOUT, L7TOUT, ... and ms),
    # so a replica left DOWN says why
    rows = [
        (
            r["svname"],
            r["status"],
            r.get("check_status"),
            r.get("check_duration"),
            r.get("last_chk"),
        )
        for r in pool.servers()
        if not r["status"].startswith("MAINT")
    ]
    if len(pool.up()) != REPLICAS:  # say which address each slot and each replica holds
        replicas = {
            c.name: (c.status, c.attrs["NetworkSettings"]["Networks"], c.attrs["RestartCount"])
            for c in listed_containers(dclient, {"label": f"envkit.pool={pool.name}"})
        }
        lb_log = dclient.containers.get(f"{pool.name}-lb").logs(tail=30)
        pytest.fail(
            f"{victim} running since {container.attrs['State']['StartedAt']} but the balancer "
            f"shows {rows}; its log ends: {container.logs(tail=15).decode(errors='replace')}\n"
            f"replicas (status, networks, restarts): {replicas}\n"
            f"the balancer's log ends: {lb_log.decode(errors='replace')}"
        )


def _servers(dclient, sel: dict) -> list[dict[str, str]]:
    """The pool's replica rows from its balancer's stats port (found through docker)."""
    import httpx

    lb = dclient.containers.list(
        filters={"label": [*sel["label"], "envkit.role=lb"]}, ignore_removed=True
    )
    binding = (lb[0].attrs["NetworkSettings"]["Ports"] or {}).get("8404/tcp") if lb else None
    if not binding:
        return []
    return parse_stats(
        httpx.get(f"http://127.0.0.1:{binding[0]['HostPort']}/stats;csv", timeout=5).text
    )


@pytest.mark.docker
def test_foreground_pool_is_removed_on_sigterm(pool, dclient, run_id):
    """Without --detach: the pool runs while `envkit run` does; SIGTERM removes it all."""
    import signal

    name = f"envkit-test-fg-{run_id}"
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "400"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "envkit", "run", "--docker", str(pool.path), "--replicas", "1",
         "-e", "MAX_CONCURRENT_ENVS=2", "--name", name, "--tag", f"envkit-test-g:{run_id}",
         "--label", f"envkit.test={run_id}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    sel = {"label": [f"envkit.pool={name}"]}
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if any("Watching the pool" in ln for ln in list(lines)):
                break
            time.sleep(0.3)
        assert sum(r["status"].startswith("UP") for r in _servers(dclient, sel)) == 1
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        reader.join(10)
        err = "".join(lines)
        assert proc.returncode == 0, err
        assert "1 replica x 2 sessions (MAX_CONCURRENT_ENVS) = 2 concurrent" in err
        assert "Stopped and removed" in err
        assert listed_containers(dclient, sel) == []
        assert dclient.networks.list(filters=sel) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for c in listed_containers(dclient, sel):
            c.remove(force=True)
        for net in dclient.networks.list(filters=sel):
            net.remove()


@pytest.mark.docker
def test_stop_removes_the_whole_pool_and_its_watcher(pool, dclient):
    r = _envkit("stop", pool.name, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"{pool.name}-lb" in r.stdout and f"{pool.name}-net" in r.stdout
    sel = {"label": [f"envkit.pool={pool.name}"]}
    assert listed_containers(dclient, sel) == []
    assert dclient.networks.list(filters=sel) == []
    deadline = time.monotonic() + 10
    while _alive(pool.watcher_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pool.watcher_pid)


# -- no engine needed ------------------------------------------------------------------------


def test_config_has_the_directives_the_pool_relies_on():
    text = render_config(alias="p-replicas", port=8000, slots=slots_for(3), tunnel_s=60)
    for directive in (
        "nameserver dns 127.0.0.11:53",
        "hold valid 2s",
        "balance leastconn",
        "option httpchk GET /health",
        "server-template r 16 p-replicas:8000",
        "resolvers docker init-addr none",
        "timeout tunnel 60s",
        "timeout queue 5s",
    ):
        assert directive in text
    assert "maxconn" not in text.split("backend replicas")[1]  # a full replica refuses, no queue
    assert slots_for(20) == 40


def test_replicas_need_docker_and_concurrent_sessions(cli, echo_env):
    r = cli("run", echo_env, "--replicas", "2")
    assert r.exit_code == 2 and "--replicas needs --docker" in r.output
    r = cli("run", "--docker", echo_env, "--replicas", "2", "-e", "MAX_CONCURRENT_ENVS=1")
    assert r.exit_code == 2
    assert "does not support concurrent sessions" in " ".join(r.output.split())
    r = cli("run", "--docker", echo_env, "--replicas", "2", "--web")
    assert r.exit_code == 2 and "--web does not apply to --replicas" in r.output
