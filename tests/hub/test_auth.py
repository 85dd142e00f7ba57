"""`envkit.hub.auth`: which token is used (``--token``, then ``HF_TOKEN``, then the token file
``hf auth login`` saves under ``HF_HOME``), the default Space name, repo ids and URLs.

The saved-token cases run in a fresh interpreter: huggingface_hub reads ``HF_HOME`` once, at
import, to locate its token file (``$HF_HOME/token``), exactly as it does for a user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.errors import HubAuthError, UsageError
from envkit.hub.auth import (
    Credentials,
    check_repo_id,
    hub_endpoint,
    resolve_token,
    space_name,
    space_urls,
)

ROOT = Path(__file__).resolve().parents[2]
SAVED = "hf_saved" + "s" * 26
FROM_ENV = "hf_env" + "e" * 28
ARG = "hf_arg" + "a" * 28

_PROBE = """
import json
from envkit.errors import HubAuthError
from envkit.hub.auth import resolve_token
try:
    c = resolve_token({arg!r})
    print(json.dumps({{"token": c.token, "source": c.source}}))
except HubAuthError as e:
    print(json.dumps({{"error": e.message, "hint": e.hint}}))
"""


def resolve_in_fresh_process(hf_home: Path, *, arg: str | None, hf_token: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE"))}
    env["HF_HOME"] = str(hf_home)
    if hf_token is not None:
        env["HF_TOKEN"] = hf_token
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(arg=arg)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def hf_home(tmp_path: Path) -> Path:
    """An HF_HOME holding a saved token, as `hf auth login` leaves it."""
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text(SAVED + "\n")
    return home


def test_argument_wins_over_hf_token_and_the_saved_token(hf_home):
    got = resolve_in_fresh_process(hf_home, arg=f"  {ARG}\n", hf_token=FROM_ENV)
    assert got == {"token": ARG, "source": "--token"}  # stripped


def test_hf_token_wins_over_the_saved_token(hf_home):
    got = resolve_in_fresh_process(hf_home, arg=None, hf_token=f" {FROM_ENV} ")
    assert got == {"token": FROM_ENV, "source": "HF_TOKEN"}


def test_the_saved_token_under_hf_home_is_the_last_resort(hf_home):
    got = resolve_in_fresh_process(hf_home, arg=None, hf_token=None)
    assert got == {"token": SAVED, "source": "saved"}


def test_blank_argument_and_blank_hf_token_fall_through(hf_home):
    got = resolve_in_fresh_process(hf_home, arg="", hf_token="   ")
    assert got["source"] == "saved"


def test_no_token_anywhere_is_an_auth_error_with_both_fixes(tmp_path):
    empty = tmp_path / "empty-hf-home"
    empty.mkdir()
    got = resolve_in_fresh_process(empty, arg=None, hf_token=None)
    assert "Not logged in" in got["error"]
    assert "hf auth login" in got["hint"] and "HF_TOKEN" in got["hint"]
    assert "--token" in got["hint"]


def test_in_process_argument_then_hf_token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", FROM_ENV)
    assert resolve_token(ARG) == Credentials(ARG, "--token")
    assert resolve_token(None) == Credentials(FROM_ENV, "HF_TOKEN")


def test_credentials_repr_hides_the_token():
    text = repr(Credentials(ARG, "--token"))
    assert ARG not in text
    assert "<hidden>" in text and "--token" in text


def test_missing_token_error_type(monkeypatch, tmp_path):
    # No HF_TOKEN (the suite's isolation removes it) and a token file that does not exist.
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-tokens"))
    with pytest.raises(HubAuthError) as info:
        resolve_token(None)
    assert "no --token, no HF_TOKEN and no saved token" in info.value.message


@pytest.mark.parametrize(
    ("manifest_name", "space"),
    [
        ("echo_env", "echo-env"),  # snake_case -> kebab-case
        ("MyEnv", "my-env"),  # CamelCase -> kebab-case
        ("my-env", "my-env"),  # already kebab
        ("2048 game!", "2048-game"),  # not a valid env name: slugged
        ("***", "openenv-env"),  # nothing left: the fallback
    ],
)
def test_space_name_from_the_manifest_name(manifest_name, space):
    assert space_name(manifest_name) == space


def test_check_repo_id_accepts_and_normalises():
    assert check_repo_id(" alice/echo-env ") == "alice/echo-env"
    assert check_repo_id("envkit-org/my_env.v2") == "envkit-org/my_env.v2"


@pytest.mark.parametrize(
    "bad",
    [
        "echo-env",
        "a/b/c",
        "alice/-env",
        "alice/my--env",
        "alice/my..env",
        "alice/" + "x" * 97,
        "al ice/x",
    ],
)
def test_check_repo_id_refuses_malformed_ids(bad):
    with pytest.raises(UsageError) as info:
        check_repo_id(bad)
    assert "is not a valid Space id" in info.value.message
    assert "--repo-id alice/my-env" in info.value.hint


def test_space_urls_derive_the_app_host_or_use_the_reported_one():
    assert space_urls("Alice/My_Env.v2", "https://huggingface.co") == (
        "https://huggingface.co/spaces/Alice/My_Env.v2",
        "https://alice-my-env-v2.hf.space",
    )
    assert space_urls("alice/e", "http://127.0.0.1:9", "http://127.0.0.1:8001/")[1] == (
        "http://127.0.0.1:8001"
    )


def test_hub_endpoint_is_read_at_call_time(monkeypatch):
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert hub_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:5555/")
    assert hub_endpoint() == "http://127.0.0.1:5555"
