"""The one secret scanner (issue #12, defect 2): encodings, NUL bytes, AWS secret keys on
their own, credentials-store names, the same answer for validate and push, nothing printed."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from envkit.hub.staging import scan_secrets
from envkit.secret_scan import (
    allowed_patterns,
    is_credentials_name,
    scan_bytes,
    scan_text,
)
from envkit.validation import validate

# Built at run time so no scanner flags this file; none of them is a real credential.
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
OPENAI = "sk-" + "proj-" + "Ab1" * 12
GITHUB = "ghp_" + "A1b2C3d4" * 5


@pytest.mark.parametrize(
    "encoding",
    ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"],
)
def test_every_unicode_encoding_is_scanned(encoding):
    data = f"# settings\nTOKEN = '{HF}'\n".encode(encoding)
    hits = scan_bytes(data)
    assert [(h.kind, h.line, h.column) for h in hits] == [("Hugging Face token", 2, 10)]


def test_text_with_nul_bytes_is_scanned():
    data = b"\x00\x01\x02 header\x00\n" + b"key=" + HF.encode() + b"\x00\x00\n"
    assert [h.kind for h in scan_bytes(data)] == ["Hugging Face token"]


def test_aws_secret_access_key_on_its_own():
    assert [h.kind for h in scan_text(f"value = {AWS_SECRET}\n")] == ["AWS secret access key"]
    assert [h.kind for h in scan_text(f'SECRET = "{AWS_SECRET}"')] == ["AWS secret access key"]


@pytest.mark.parametrize(
    "text",
    [
        "ThisIsAVeryLongCamelCaseIdentifier123456",  # identifier, 40 characters
        "0123456789abcdef0123456789abcdef01234567",  # a git SHA-1
        "x" * 40,
        "path/to/a/file/in/the/repo/module_x.py",
        base64.b64encode(os.urandom(45)).decode(),  # longer than 40: not an AWS key's shape
    ],
)
def test_aws_secret_detector_ignores_lookalikes(text):
    assert scan_text(f"value = {text}\n") == []


def test_random_aws_shaped_keys_are_found():
    found = 0
    for _ in range(200):
        key = base64.b64encode(os.urandom(30)).decode()
        found += bool(scan_text(f"k = {key}\n"))
    assert found >= 195  # shape + entropy: nearly every random 40-character base64 string


@pytest.mark.parametrize(
    "name",
    [
        "secrets.json",
        "credentials",
        "credentials.json",
        "app.keystore",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".env",
        "prod.env",
        "id_rsa",
        "cert.pem",
        ".netrc",
        "service-account-prod.json",
        "release.jks",
    ],
)
def test_credentials_store_names(name):
    assert is_credentials_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "credentials.py",
        "secrets.md",
        ".env.example",
        "id_rsa.pub",
        "README.md",
        "keys.py",
        "secret_santa.txt",
    ],
)
def test_ordinary_names(name):
    assert not is_credentials_name(name)


def test_allow_list_is_read_from_pyproject():
    data = {"tool": {"envkit": {"push": {"allow": ["config/credentials.example.json"]}}}}
    assert allowed_patterns(data) == ("config/credentials.example.json",)
    assert allowed_patterns({"tool": {"envkit": {"push": {"allow": 3}}}}) == ()
    assert allowed_patterns(None) == ()


@pytest.mark.parametrize(
    ("rel", "content"),
    [
        ("a.py", f"KEY = '{HF}'\n".encode()),
        ("b.txt", f"openai {OPENAI}\n".encode("utf-16")),
        ("c.cfg", f"secret\n{AWS_SECRET}\n".encode("utf-32-le")),
        ("d.json", b'{"t": "' + GITHUB.encode() + b'"}\x00\x00'),
    ],
)
def test_validate_and_push_scanners_agree(clean_env: Path, rel, content):
    (clean_env / rel).write_bytes(content)
    report = validate(clean_env, static=True, select=["EK6"])
    ek602 = [(f.location.file, f.location.line) for f in report.findings if f.code == "EK602"]
    staged = [(h.file, h.line) for h in scan_secrets(clean_env, [rel])]
    assert ek602 == staged and len(staged) == 1
    from envkit.validation.report import render

    for fmt in ("text", "json", "github"):
        shown = render(report, fmt)
        for secret in (HF, OPENAI, AWS_SECRET, GITHUB):
            assert secret not in shown and secret[6:] not in shown


def test_credentials_store_file_is_refused_unless_allowed(clean_env: Path):
    (clean_env / "config").mkdir()
    (clean_env / "config" / "credentials.json").write_text('{"user": "demo"}\n')
    codes = [f.code for f in validate(clean_env, static=True).findings]
    assert codes == ["EK601"]  # uploaded (and in the build context: one finding per file)
    with (clean_env / "pyproject.toml").open("a") as fh:
        fh.write('\n[tool.envkit.push]\nallow = ["config/credentials.json"]\n')
    assert validate(clean_env, static=True).findings == []
    (clean_env / "config" / "credentials.json").write_text(f'{{"token": "{HF}"}}\n')
    codes = [f.code for f in validate(clean_env, static=True).findings]
    assert codes == ["EK602"]  # allowed by name, never by content


def test_a_url_safe_token_is_not_an_aws_secret_but_an_oauth_token_is_found() -> None:
    """Issue #13 (OpenEnv's calendar_env): 40 base64 characters inside a longer `ya29.`
    token, between `-` and `.`, were reported as an AWS secret access key; the token is a
    Google OAuth access token, and is reported as one."""
    from envkit.secret_scan import scan_text

    line = (
        '"x-access-token": "ya29.A0ARrdaM-k9Vq7GzY2pL4mQf8sN1xT0bR3uHcJWv5yKzP6eF2.'
        'qwErTyUIopASDfGhJkLzXcVbNm12_34-56"\n'
    )
    assert [h.kind for h in scan_text(line)] == ["Google OAuth access token"]
    inner = "k9Vq7GzY2pL4mQf8sN1xT0bR3uHcJWv5yKzP6eF2"
    assert scan_text(f"session = abc-{inner}.def\n") == []
    assert [h.kind for h in scan_text(f'secret = "{inner}"\n')] == ["AWS secret access key"]
