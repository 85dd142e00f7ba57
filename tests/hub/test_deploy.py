"""`envkit push` and `envkit fork` (`envkit.hub.deploy`): the real huggingface_hub client against
the Hub stand-in (tests/hubstub), and the --help pages of push and fork."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envkit.envdir.card import check_card, read_card
from tests.hubstub import READ_TOKEN, WRITE_TOKEN

FORBIDDEN = (".env", ".venv/", ".git/", "__pycache__/", ".pyc", "id_rsa")


def _dirty(env: Path) -> Path:
    """Add everything a push must never upload, move the Dockerfile to server/, break the card."""
    (env / ".env").write_text("OPENAI_API_KEY=not-a-real-key\n")
    (env / ".venv" / "bin").mkdir(parents=True)
    (env / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    (env / ".git").mkdir()
    (env / ".git" / "config").write_text("[core]\n")
    (env / "server" / "__pycache__").mkdir(exist_ok=True)
    (env / "server" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0\1")
    (env / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n")
    with (env / ".dockerignore").open("a") as f:  # else EK601 (build context) stops the push
        f.write("id_rsa\n")
    (env / "Dockerfile").rename(env / "server" / "Dockerfile")
    readme = env / "README.md"
    text = (
        readme.read_text()
        .replace("colorFrom: blue", "colorFrom: '#00C9FF'")
        .replace("app_port: 8000", "app_port: 7860")
    )
    readme.write_text(text)
    return env


def test_push_stages_exactly_the_upload_set(cli, hub, env_copy, space_id, monkeypatch):
    env = _dirty(env_copy)
    before = (env / "README.md").read_text()
    monkeypatch.setenv("FROM_SHELL", "shell-secret-value")
    r = cli(
        "push",
        env,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "-e",
        "LEVEL=3",
        "--secret",
        "API_KEY=inline-secret-value",
        "--secret",
        "FROM_SHELL",
    )
    assert r.exit_code == 0, r.output
    files = hub.files(space_id)
    assert "Dockerfile" in files and "server/Dockerfile" not in files
    assert "server/app.py" in files and "openenv.yaml" in files
    assert not [p for p in files if any(bad in p for bad in FORBIDDEN)], sorted(files)
    card = read_card(files["README.md"].decode())
    assert check_card(card, 8000) == []
    assert {"openenv", "envkit"} <= set(card.data["tags"])
    assert (env / "README.md").read_text() == before  # the user's file is untouched
    space = hub.space(space_id)
    assert space.variables["LEVEL"]["value"] == "3"
    assert space.secrets == {"API_KEY": "inline-secret-value", "FROM_SHELL": "shell-secret-value"}
    assert hub.commit_count(space_id) == 2  # the Hub's initial commit + exactly one push commit
    assert "moved server/Dockerfile" in r.output
    assert "colorFrom: '#00C9FF' -> 'blue'" in r.output and "app_port: 7860 -> 8000" in r.output
    for value in (WRITE_TOKEN, "inline-secret-value", "shell-secret-value"):
        assert value not in r.output


def test_unchanged_repush_makes_no_commit_and_sends_no_file(cli, hub, env_copy, space_id):
    assert cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN).exit_code == 0
    head = hub.head(space_id)
    hub.clear()
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN)
    assert r.exit_code == 0, r.output
    assert "up to date" in r.output and "0 B to upload" in r.output
    assert hub.head(space_id) == head
    assert not [q for q in hub.requests if "/commit/" in q.path or "/preupload/" in q.path]
    # one changed file -> one commit with only that file
    (env_copy / "models.py").write_text((env_copy / "models.py").read_text() + "\n# v2\n")
    (env_copy / "inference.py").unlink()
    r = cli("push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN)
    assert r.exit_code == 0, r.output
    assert hub.commit_count(space_id) == 3
    assert "inference.py" not in hub.files(space_id)
    assert hub.files(space_id)["models.py"].endswith(b"# v2\n")


def test_existing_space_gets_visibility_and_hardware(cli, hub, env_copy, space_id):
    hub.seed_space(space_id, {"README.md": b"old\n"}, private=False, hardware="cpu-basic")
    r = cli(
        "push",
        env_copy,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "--private",
        "--hardware",
        "t4-small",
    )
    assert r.exit_code == 0, r.output
    assert hub.space(space_id).private is True
    assert hub.space(space_id).hardware == "t4-small"
    paths = [(q.method, q.path) for q in hub.requests]
    assert ("PUT", f"/api/spaces/{space_id}/settings") in paths
    assert ("POST", f"/api/spaces/{space_id}/hardware") in paths
    assert "visibility: public -> private" in r.output


def test_create_pr_lands_on_a_pr_ref(cli, hub, env_copy, space_id):
    hub.seed_space(space_id, {"README.md": b"old\n"})
    head = hub.head(space_id)
    r = cli(
        "push",
        env_copy,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "--create-pr",
        "-m",
        "Try harder levels",
    )
    assert r.exit_code == 0, r.output
    assert hub.head(space_id) == head  # main untouched
    pr_files = hub.files(space_id, "refs/pr/1")
    assert "Dockerfile" in pr_files and "server/app.py" in pr_files
    assert f"/spaces/{space_id}/discussions/1" in r.output
    assert (
        hub.space(space_id).commits[hub.head(space_id, "refs/pr/1")]["summary"]
        == "Try harder levels"
    )


def test_dry_run_writes_nothing_and_stages_to_dir(cli, hub, env_copy, space_id, tmp_path):
    _dirty(env_copy)
    (env_copy / "id_rsa").unlink()
    out = tmp_path / "staged"
    r = cli(
        "push",
        env_copy,
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
        "--dry-run",
        "--dry-run-dir",
        out,
        "-e",
        "LEVEL=3",
        "--secret",
        "API_KEY=dry-secret-value",
    )
    assert r.exit_code == 0, r.output
    assert hub.writes() == []
    assert space_id not in hub.state.spaces
    assert (out / "Dockerfile").is_file() and not (out / ".env").exists()
    assert "server/app.py" in r.output and "API_KEY (value hidden)" in r.output
    assert "LEVEL=3" in r.output and "dry-secret-value" not in r.output
    assert check_card(read_card((out / "README.md").read_text()), 8000) == []
    # what is not uploaded is listed with the reason, a directory once
    assert "left out" in r.output
    assert "! .env  always left out (.env)" in r.output
    assert "! .venv/  always left out (.venv/)" in r.output


@pytest.mark.parametrize("no_validate", [False, True])
def test_secrets_in_the_upload_set_always_stop_the_push(cli, hub, env_copy, space_id, no_validate):
    (env_copy / "server" / "settings.py").write_text('TOKEN = "hf_' + "a1B2c3D4e5" * 4 + '"\n')
    args = ["push", env_copy, "--repo-id", space_id, "--token", WRITE_TOKEN]
    r = cli(*args, *(["--no-validate"] if no_validate else []))
    assert r.exit_code == 1, r.output
    assert "server/settings.py" in r.output and "Hugging Face token" in r.output
    assert hub.writes() == [] and space_id not in hub.state.spaces


def test_bad_repo_id_is_refused_before_any_request(cli, hub, env_copy):
    r = cli("push", env_copy, "--repo-id", "alice/bad--name", "--token", WRITE_TOKEN)
    assert r.exit_code == 2 and "not a valid Space id" in r.output
    assert hub.requests == []


def test_not_logged_in_names_both_fixes(cli, hub, env_copy):
    r = cli("push", env_copy)
    assert r.exit_code == 2
    assert "Not logged in" in r.output and "hf auth login" in r.output and "HF_TOKEN" in r.output
    assert hub.requests == []


@pytest.mark.parametrize(
    "case", ["401", "402", "403", "409", "429-then-ok", "429", "503", "unreachable"]
)
def test_hub_errors_are_mapped(cli, hub, env_copy, space_id, case, monkeypatch):
    token, repo, expect_code, expect = WRITE_TOKEN, space_id, 2, ""
    if case == "401":
        token, expect = "hf_" + "x" * 34, "rejected the token (401"
    elif case == "402":
        hub.config["paid_namespaces"] = set()
        expect = "needs a paid plan (402"
    elif case == "403":
        repo, expect = "someone-else/env", "cannot write to `someone-else` (403"
    elif case == "409":
        hub.fail("POST", r"/commit/", 409, times=1, body={"error": "conflicting operation"})
        expect = "conflict (409)"
    elif case == "429-then-ok":
        hub.fail("POST", r"/api/repos/create", 429, times=2)
        expect_code = 0
    elif case == "429":
        hub.fail("POST", r"/api/repos/create", 429, times=10)
        expect = "rate-limited envkit (429"
    elif case == "503":
        hub.fail("POST", r"/commit/", 503, times=10)
        expect = "failed with 503"
    elif case == "unreachable":
        from envkit.server import free_port

        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
        expect = "Cannot reach the Hugging Face Hub"
    t0 = time.monotonic()
    r = cli("push", env_copy, "--repo-id", repo, "--token", token)
    assert r.exit_code == expect_code, r.output
    assert expect in " ".join(r.output.split())
    assert token not in r.output
    assert time.monotonic() - t0 < 30
    if case in ("409", "503"):
        assert hub.commit_count(space_id) == 1  # only the Hub's initial commit: nothing half-done
    if case == "429-then-ok":
        assert "Dockerfile" in hub.files(space_id)


def test_read_only_token_gets_403_hint(cli, hub, env_copy, space_id):
    hub.seed_space(space_id, {"README.md": b"x\n"})
    r = cli("push", env_copy, "--repo-id", space_id, "--token", READ_TOKEN)
    assert r.exit_code == 2
    assert "403" in r.output and "write" in r.output
    assert READ_TOKEN not in r.output


def test_library_push_returns_a_result(hub, env_copy, space_id):
    from envkit.hub import PushResult, push

    plan = push(env_copy, repo_id=space_id, token=WRITE_TOKEN, dry_run=True)
    assert isinstance(plan, PushResult) and plan.created and not plan.committed
    assert plan.bytes_uploaded == sum(f.size for f in plan.files) > 0
    done = push(env_copy, repo_id=space_id, token=WRITE_TOKEN, env={"A": "1"})
    assert done.committed and done.commit_oid == hub.head(space_id)
    assert done.added == plan.added and done.variables_changed == ["A"]
    again = push(env_copy, repo_id=space_id, token=WRITE_TOKEN, env={"A": "1"})
    assert not again.committed and again.bytes_uploaded == 0 and again.variables_changed == []
    assert "token" not in repr(again).lower() or WRITE_TOKEN not in repr(again)


def _subprocess_env(hub, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    env.update({"HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_TELEMETRY": "1", **extra})
    return env


def test_subprocess_saved_token_default_repo_id_and_no_token_in_debug_output(hub, env_copy):
    home = Path(os.environ["HF_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "token").write_text(WRITE_TOKEN)
    hub.fail("POST", r"/commit/", 503, times=10)
    cmd = [sys.executable, "-m", "envkit", "push", str(env_copy)]
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, env=_subprocess_env(hub, ENVKIT_DEBUG="1")
    )
    assert p.returncode == 2, p.stderr
    assert "Traceback" in p.stderr and "failed with 503" in p.stderr
    assert WRITE_TOKEN not in p.stdout + p.stderr
    hub.clear()
    p = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, env=_subprocess_env(hub, ENVKIT_DEBUG="1")
    )
    assert p.returncode == 0, p.stderr
    assert "Dockerfile" in hub.files("alice/echo-env")  # default id: <whoami>/<kebab name>
    assert WRITE_TOKEN not in p.stdout + p.stderr


def test_ctrl_c_mid_push_leaves_the_previous_commit(hub, env_copy, space_id):
    hub.seed_space(space_id, {"README.md": b"previous\n"})
    head = hub.head(space_id)
    # Interrupt while the client waits on the Hub (preupload, just before the one commit).
    release, arrived = hub.hold("POST", r"/preupload/")
    cmd = [
        sys.executable,
        "-m",
        "envkit",
        "push",
        str(env_copy),
        "--repo-id",
        space_id,
        "--token",
        WRITE_TOKEN,
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_subprocess_env(hub)
    )
    try:
        assert arrived.wait(60), "the preupload request never arrived"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err
    time.sleep(0.3)
    assert not [q for q in hub.requests if "/commit/" in q.path]
    assert hub.head(space_id) == head
    assert hub.files(space_id) == {
        ".gitattributes": hub.files(space_id)[".gitattributes"],
        "README.md": b"previous\n",
    }


def test_fork_copies_files_and_variables(cli, hub, space_id):
    src = hub.seed_space("envkit-org/source-env", {"Dockerfile": b"FROM x\n", "app.py": b"a\n"})
    src.variables["LEVEL"] = {"value": "2", "updatedAt": "2026-01-01T00:00:00.000Z"}
    r = cli(
        "fork", "envkit-org/source-env", space_id.split("/")[1], "--private", "--token", WRITE_TOKEN
    )
    assert r.exit_code == 0, r.output
    assert hub.files(space_id)["app.py"] == b"a\n"
    assert hub.space(space_id).private is True
    assert hub.space(space_id).variables["LEVEL"]["value"] == "2"
    assert f"/spaces/{space_id}" in r.output and WRITE_TOKEN not in r.output
    again = cli("fork", "envkit-org/source-env", space_id, "--token", WRITE_TOKEN)
    assert again.exit_code == 2 and "already exists (409" in again.output


def test_fork_of_a_missing_space(cli, hub):
    r = cli("fork", "nobody/missing", "alice/copy", "--token", WRITE_TOKEN)
    assert r.exit_code == 2 and "`nobody/missing` was not found (404)" in r.output


def test_help_pages_have_examples(cli):
    for command in ("push", "fork"):
        r = cli(command, "--help")
        assert r.exit_code == 0 and "Examples:" in r.output
    assert "--dry-run" in cli("push", "--help").output
