"""envkit.container.hardening: the lane's facts read from a real openenv.yaml (defaults for
anything missing or of the wrong type) and the hardened run options built from them, as
docker-py keyword arguments and as the equal `docker run` flags. Pure functions: no engine."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from envkit.container.hardening import (
    CONTAINER_ENV,
    DEFAULT_CPU,
    DEFAULT_DISK_MB,
    DEFAULT_MEMORY_MB,
    DEFAULT_STARTUP_TIMEOUT_S,
    HARDENED_USER,
    PIDS_LIMIT,
    SHM_CAP_BYTES,
    ContainerFacts,
    HardenedOptions,
    container_facts,
)
from envkit.errors import SpecError

MIB = 1024 * 1024

FULL = """\
name: hardened_env
port: 8123
validation:
  resources: {cpu: 1.5, memory_mb: 512, disk_mb: 256, episode_timeout_s: 60}
  network: {mode: no-network}
envkit:
  startup_timeout_s: 12
"""


def _root(tmp_path: Path, manifest: str, name: str = "env-dir") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "openenv.yaml").write_text(manifest)
    return root


def _pairs(flags: list[str]) -> dict[str, list[str]]:
    """``--flag value`` pairs (``--init`` and ``--read-only`` take none) -> {flag: [values]}."""
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("--init", "--read-only"):
            out.setdefault(flag, [])
            i += 1
            continue
        out.setdefault(flag, []).append(flags[i + 1])
        i += 2
    return out


# -- container_facts ----------------------------------------------------------------------------


def test_a_manifest_with_only_a_name_gets_every_default(tmp_path: Path) -> None:
    facts = container_facts(_root(tmp_path, "name: bare\n"))
    assert facts == ContainerFacts(name="bare")
    assert (facts.port, facts.memory_mb, facts.cpu, facts.disk_mb) == (
        8000,
        DEFAULT_MEMORY_MB,
        DEFAULT_CPU,
        DEFAULT_DISK_MB,
    )
    assert facts.network_mode == "public"
    assert facts.startup_timeout_s == DEFAULT_STARTUP_TIMEOUT_S
    assert facts.declared == frozenset()


def test_every_declared_fact_is_read_and_marked_declared(tmp_path: Path) -> None:
    facts = container_facts(_root(tmp_path, FULL))
    assert facts == ContainerFacts(
        name="hardened_env",
        port=8123,
        memory_mb=512,
        cpu=1.5,
        disk_mb=256,
        network_mode="no-network",
        startup_timeout_s=12.0,
        declared=frozenset({"memory_mb", "cpu", "disk_mb", "network_mode", "startup_timeout_s"}),
    )
    assert isinstance(facts.memory_mb, int) and isinstance(facts.cpu, float)


def test_the_generated_echo_environment_is_no_network(echo_env: Path) -> None:
    facts = container_facts(echo_env)
    assert facts.network_mode == "no-network"
    assert {"memory_mb", "cpu", "disk_mb", "network_mode"} <= facts.declared


def test_envkit_startup_timeout_wins_over_the_legacy_key(tmp_path: Path) -> None:
    both = "name: a\nvalidation:\n  startup_timeout_s: 99\nenvkit:\n  startup_timeout_s: 5\n"
    legacy = "name: a\nvalidation:\n  startup_timeout_s: 99\n"
    assert container_facts(_root(tmp_path, both, "both")).startup_timeout_s == 5.0
    only_legacy = container_facts(_root(tmp_path, legacy, "legacy"))
    assert only_legacy.startup_timeout_s == 99.0
    assert "startup_timeout_s" in only_legacy.declared


def test_a_bad_envkit_startup_timeout_falls_back_to_the_legacy_key(tmp_path: Path) -> None:
    text = "name: a\nvalidation:\n  startup_timeout_s: 30\nenvkit:\n  startup_timeout_s: soon\n"
    assert container_facts(_root(tmp_path, text)).startup_timeout_s == 30.0


@pytest.mark.parametrize(
    "resources",
    [
        "{memory_mb: 1g, cpu: two, disk_mb: lots}",
        "{memory_mb: true, cpu: true, disk_mb: false}",
        "{memory_mb: 0, cpu: 0, disk_mb: 0}",
        "{memory_mb: -512, cpu: -1, disk_mb: -1}",
        "{memory_mb: null, cpu: .nan, disk_mb: [1]}",
        "[512, 1, 256]",
        "not-a-mapping",
    ],
)
def test_resources_of_the_wrong_type_or_sign_fall_back_to_the_defaults(
    tmp_path: Path, resources: str
) -> None:
    facts = container_facts(_root(tmp_path, f"name: a\nvalidation:\n  resources: {resources}\n"))
    assert (facts.memory_mb, facts.cpu, facts.disk_mb) == (
        DEFAULT_MEMORY_MB,
        DEFAULT_CPU,
        DEFAULT_DISK_MB,
    )
    assert facts.declared == frozenset()


@pytest.mark.parametrize("port", ["0", "65536", "true", '"8000"', "-1", "8000.0"])
def test_a_bad_port_falls_back_to_8000(tmp_path: Path, port: str) -> None:
    assert container_facts(_root(tmp_path, f"name: a\nport: {port}\n")).port == 8000


@pytest.mark.parametrize("port", [1, 65535])
def test_port_bounds_are_inclusive(tmp_path: Path, port: int) -> None:
    assert container_facts(_root(tmp_path, f"name: a\nport: {port}\n")).port == port


@pytest.mark.parametrize("mode", ["bridge", "host", "NO-NETWORK", "null", "[public]"])
def test_an_unknown_network_mode_is_public(tmp_path: Path, mode: str) -> None:
    text = f"name: a\nvalidation:\n  network:\n    mode: {mode}\n"
    facts = container_facts(_root(tmp_path, text))
    assert facts.network_mode == "public" and "network_mode" not in facts.declared


@pytest.mark.parametrize("manifest", ["name: 5\n", "version: 1\n", "- a\n- b\n", "just text\n"])
def test_without_a_string_name_the_directory_name_is_used(tmp_path: Path, manifest: str) -> None:
    facts = container_facts(_root(tmp_path, manifest, name="dir-name"))
    assert facts.name == "dir-name"
    assert facts.port == 8000 and facts.declared == frozenset()


def test_no_manifest_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        container_facts(tmp_path)
    assert "Cannot read" in info.value.message
    assert info.value.hint == "Make it a regular UTF-8 text file under 1 MiB."


@pytest.mark.timeout(10)
def test_a_fifo_manifest_is_a_spec_error_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "openenv.yaml")
    with pytest.raises(SpecError, match="FIFO"):
        container_facts(tmp_path)


def test_a_fractional_megabyte_count_falls_back_instead_of_lifting_the_limit(
    tmp_path: Path,
) -> None:
    text = "name: a\nvalidation:\n  resources: {memory_mb: 0.5, disk_mb: 0.5}\n"
    facts = container_facts(_root(tmp_path, text))
    assert facts.memory_mb > 0 and facts.disk_mb > 0


def test_an_infinite_memory_count_falls_back(tmp_path: Path) -> None:
    text = "name: a\nvalidation:\n  resources: {memory_mb: .inf}\n"
    assert container_facts(_root(tmp_path, text)).memory_mb == DEFAULT_MEMORY_MB


def test_an_infinite_cpu_count_does_not_crash_the_options(tmp_path: Path) -> None:
    text = "name: a\nvalidation:\n  resources: {cpu: .inf}\n"
    kwargs = HardenedOptions(container_facts(_root(tmp_path, text))).create_kwargs(None)
    assert kwargs["nano_cpus"] > 0


# -- HardenedOptions --------------------------------------------------------------------------


def test_create_kwargs_of_the_defaults(tmp_path: Path) -> None:
    kw = HardenedOptions(ContainerFacts(name="a")).create_kwargs(8123)
    assert kw == {
        "init": True,
        "user": HARDENED_USER,
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": PIDS_LIMIT,
        "mem_limit": "1024m",
        "memswap_limit": "1024m",  # equal to the memory: no swap on top
        "nano_cpus": 1_000_000_000,
        "shm_size": SHM_CAP_BYTES,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={1024 * MIB - SHM_CAP_BYTES},mode=1777"},
        "environment": CONTAINER_ENV,
        "stop_signal": "SIGTERM",
        "ports": {"8000/tcp": ("127.0.0.1", 8123)},
    }
    assert HARDENED_USER == "65532:65532"  # non-root, OpenEnv 0.10's validator


def test_create_kwargs_environment_is_a_copy() -> None:
    kw = HardenedOptions(ContainerFacts(name="a")).create_kwargs(None)
    kw["environment"]["HOST_SECRET"] = "leak"
    assert "HOST_SECRET" not in CONTAINER_ENV
    assert HardenedOptions(ContainerFacts(name="a")).create_kwargs(None)["environment"] == {
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


def test_create_kwargs_lets_the_engine_pick_the_port_and_honours_the_host() -> None:
    options = HardenedOptions(ContainerFacts(name="a", port=9000))
    assert options.create_kwargs(None)["ports"] == {"9000/tcp": ("127.0.0.1", None)}
    assert options.create_kwargs(5, host="0.0.0.0")["ports"] == {"9000/tcp": ("0.0.0.0", 5)}


def test_no_network_publishes_nothing() -> None:
    options = HardenedOptions(ContainerFacts(name="a", network_mode="no-network"))
    assert options.isolated
    kw = options.create_kwargs(8123)
    assert kw["network_mode"] == "none" and "ports" not in kw
    flags = options.flags(8123)
    assert flags[-2:] == ["--network", "none"] and "--publish" not in flags


@pytest.mark.parametrize("mode", ["public", "allowlist"])
def test_public_and_allowlist_are_published_on_loopback(mode: str) -> None:
    options = HardenedOptions(ContainerFacts(name="a", network_mode=mode))
    assert not options.isolated
    assert "network_mode" not in options.create_kwargs(1)
    assert options.flags(4321)[-2:] == ["--publish", "127.0.0.1:4321:8000"]
    assert options.flags()[-1] == "127.0.0.1::8000"  # no host port: the engine picks one


@pytest.mark.parametrize("disk_mb", [1, 2, 64, 127, 128, 129, 1024, 4096])
def test_shm_and_tmp_share_the_disk_allowance_exactly(disk_mb: int) -> None:
    kw = HardenedOptions(ContainerFacts(name="a", disk_mb=disk_mb)).create_kwargs(None)
    shm = kw["shm_size"]
    tmp = int(kw["tmpfs"]["/tmp"].split("size=")[1].split(",")[0])
    assert shm + tmp == disk_mb * MIB
    assert shm == min(SHM_CAP_BYTES, disk_mb * MIB // 2)
    assert 0 < shm <= SHM_CAP_BYTES and tmp >= shm


@pytest.mark.parametrize(
    ("cpu", "cpus_flag", "nano"),
    [(1.0, "1", 1_000_000_000), (1.5, "1.5", 1_500_000_000), (0.25, "0.25", 250_000_000)],
)
def test_flags_say_what_create_kwargs_say(cpu: float, cpus_flag: str, nano: int) -> None:
    options = HardenedOptions(ContainerFacts(name="a", memory_mb=300, cpu=cpu, disk_mb=100))
    kw = options.create_kwargs(7000)
    flags = _pairs(options.flags(7000))
    assert flags["--init"] == [] and flags["--read-only"] == []
    assert flags["--user"] == [kw["user"]]
    assert flags["--cap-drop"] == kw["cap_drop"]
    assert flags["--security-opt"] == kw["security_opt"]
    assert flags["--pids-limit"] == [str(kw["pids_limit"])]
    assert flags["--memory"] == [kw["mem_limit"]] == ["300m"]
    assert flags["--memory-swap"] == [kw["memswap_limit"]]
    assert flags["--cpus"] == [cpus_flag] and kw["nano_cpus"] == nano
    assert flags["--shm-size"] == [str(kw["shm_size"])]
    assert flags["--tmpfs"] == [f"/tmp:{kw['tmpfs']['/tmp']}"]
    assert flags["--env"] == [f"{k}={v}" for k, v in kw["environment"].items()]
    assert flags["--publish"] == ["127.0.0.1:7000:8000"]


def test_command_is_one_shell_quoted_line() -> None:
    options = HardenedOptions(ContainerFacts(name="a"))
    line = options.command("my image:latest", host_port=8123)
    assert line.startswith("docker run --rm --init --user 65532:65532 --read-only ")
    assert shlex.split(line) == [
        "docker",
        "run",
        "--rm",
        *options.flags(8123),
        "my image:latest",
    ]
    assert "'my image:latest'" in line
