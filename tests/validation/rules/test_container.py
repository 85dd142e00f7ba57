"""The container rules (EK440-EK446) judge the facts the container lane hands down: no Docker
needed to see what each fact pattern becomes."""

from __future__ import annotations

import pytest

from envkit.validation.rules import container as RC

RUN = RC.HardenedRun(
    image="guess:0.1.0",
    command="docker run --read-only guess:0.1.0",
    flags=["--read-only"],
    user="65532:65532",
    port=8000,
    memory_mb=512,
    timeout_s=30.0,
    isolated=False,
)
SEALED = RC.HardenedRun(**{**RUN.__dict__, "isolated": True})


@pytest.mark.parametrize(
    ("kind", "detail", "healthcheck", "code", "says"),
    [
        ("oom", "", None, "EK443", "within 512 MB of memory"),
        ("loopback", "127.0.0.1", "healthy", "EK440", "127.0.0.1 port 8000 only (its HEALTH"),
        ("loopback", "127.0.0.1", None, "EK440", "127.0.0.1 port 8000 only, so"),
        ("timeout", "0.0.0.0", None, "EK444", "0.0.0.0 port 8000 but /health never"),
        ("timeout", "", None, "EK444", "within 30 s; nothing listens on port 8000"),
    ],
)
def test_a_wait_that_ended_is_judged_from_what_it_saw(kind, detail, healthcheck, code, says):
    found = RC.wait_ended(RUN, kind, detail, "boot log", healthcheck)
    assert (found.code, says in found.message) == (code, True), found.message
    assert "Log tail:\nboot log" in found.message
    assert found.message.endswith(
        "Reproduce: `docker run --read-only guess:0.1.0` (or `envkit run --docker --hardened`)."
    )
    assert found.data["docker_run"] == ["--read-only"] and found.data["image"] == "guess:0.1.0"


@pytest.mark.parametrize(
    ("run", "log", "code"),
    [
        (RUN, "OSError: [Errno 30] Read-only file system: '/app/x'", "EK442"),
        (RUN, "PermissionError: [Errno 13] Permission denied: '/app/cfg'", "EK441"),
        (SEALED, "OSError: [Errno 101] Network is unreachable", "EK445"),
        (RUN, "OSError: [Errno 101] Network is unreachable", None),  # not no-network
        (RUN, "Traceback: KeyError 'x'", None),
    ],
)
def test_an_exit_with_a_known_sign_in_its_log_is_named(run, log, code):
    found = RC.exited(run, "1", log)
    assert (found.code if found else None) == code


def test_an_unexplained_exit_is_needs_root_only_when_it_starts_without_hardening():
    assert RC.exited_unexplained(RUN, "3", "log", starts_plain=True).code == "EK441"
    failed = RC.exited_unexplained(RUN, "3", "log", starts_plain=False)
    assert failed.code == "EK446" and "exited with code 3" in failed.message


def test_interfaces_and_what_the_container_shows_after_play():
    assert RC.interfaces(RUN, ["lo", "eth0"]) == []  # only judged under no-network
    assert RC.interfaces(SEALED, ["lo"]) == [] and RC.interfaces(SEALED, None) == []
    (found,) = RC.interfaces(SEALED, ["eth0", "lo"])
    assert found.code == "EK445" and "it has eth0, lo" in found.message
    log = "ok\nOSError: [Errno 30] Read-only file system\nmore\nsocket.gaierror: [Errno -3] x"
    assert [f.code for f in RC.after_play(RUN, True, log)] == ["EK443", "EK442"]
    assert [f.code for f in RC.after_play(SEALED, False, log)] == ["EK442", "EK445"]
    assert RC.after_play(RUN, False, "all fine") == []
    assert RC.evaluated(RUN) == ["EK440", "EK441", "EK442", "EK443", "EK444", "EK446"]
    assert "EK445" in RC.evaluated(SEALED)
