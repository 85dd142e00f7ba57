"""`envkit push` fails closed (issue #12): a bug in a static rule stops the push with an
internal error (exit 2) and nothing reaches the Hub; secrets in any encoding stop it (exit 1)."""

from __future__ import annotations

import json

import pytest

from tests.hubstub import WRITE_TOKEN

FAKE_HF_TOKEN = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"  # built here, never a real one


def _broken(*args, **kwargs):
    raise TypeError("simulated bug in a static rule")


@pytest.mark.parametrize("extra", [[], ["--no-validate"], ["--dry-run"]])
def test_a_crashing_rule_stops_the_push(cli, hub, env_copy, space_id, monkeypatch, extra):
    import envkit.validation.rules.deploy

    monkeypatch.setattr(envkit.validation.rules.deploy, "scan_files", _broken)  # the EK6xx rules
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, *extra)
    assert r.exit_code == 2, r.output
    assert "Internal error: TypeError: simulated bug in a static rule" in r.stderr
    assert "secret scan only" not in r.output
    assert space_id not in hub.state.spaces and hub.writes() == []  # nothing was sent


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32-le", "utf-8"])
def test_secret_in_any_encoding_stops_the_push(cli, hub, env_copy, space_id, encoding):
    (env_copy / "notes.txt").write_bytes(f"token = {FAKE_HF_TOKEN}\n".encode(encoding))
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, "--no-validate")
    assert r.exit_code == 1, r.output
    assert "Refusing to push: secrets would be uploaded (notes.txt" in r.stderr
    assert FAKE_HF_TOKEN not in r.output and FAKE_HF_TOKEN[4:] not in r.output
    assert space_id not in hub.state.spaces


def test_secret_after_a_nul_byte_stops_the_push(cli, hub, env_copy, space_id):
    (env_copy / "data.txt").write_bytes(b"header\0\0\x01\nkey: " + FAKE_HF_TOKEN.encode() + b"\n")
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, "--dry-run")
    assert r.exit_code == 1, r.output
    assert "data.txt" in r.stderr and FAKE_HF_TOKEN not in r.output


def test_credentials_store_name_needs_an_explicit_allow(cli, hub, env_copy, space_id):
    (env_copy / "secrets.json").write_text('{"level": 3}\n')
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, "--no-validate")
    assert r.exit_code == 1, r.output
    assert "secrets.json" in r.stderr and "EK601" in r.stderr
    assert space_id not in hub.state.spaces
    with (env_copy / "pyproject.toml").open("a") as fh:
        fh.write('\n[tool.envkit.push]\nallow = ["secrets.json"]\n')
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN, "--no-validate")
    assert r.exit_code == 0, r.output
    assert "secrets.json" in hub.files(space_id)


def test_a_fifo_in_the_project_is_skipped_not_hung(cli, hub, env_copy, space_id):
    import os

    os.mkfifo(env_copy / "notes.txt")
    r = cli(
        "push",
        env_copy,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "--dry-run",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert "notes.txt" not in [f["path"] for f in doc["files"]]
    assert {"path": "notes.txt", "reason": "not a regular file"} in doc["left_out"]
