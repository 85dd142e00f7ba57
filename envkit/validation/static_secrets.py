"""Finding credentials in text, with Yelp's ``detect-secrets`` detectors.

We use the library's maintained regex detectors (AWS keys, private keys, OpenAI, GitHub,
Slack, Stripe, PyPI tokens) through their public ``analyze_string`` method -- no baseline, no
global settings, no network verification -- plus one detector of our own for Hugging Face
tokens (``hf_`` + 34 letters/digits), which the library lacks, and OpenAI project/service keys
without the legacy ``T3BlbkFJ`` marker.

``detect_secrets`` imports ``requests`` (~0.25 s), so it is imported only when a line contains
one of the cheap markers below; every detector's patterns contain one of them.

Nothing here returns a secret in full: :func:`redact` keeps the first 4 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# A line must contain one of these before the detectors look at it (superset of their patterns).
_MARKERS = re.compile(
    r"hf_|sk-|sk_live_|rk_live_|AKIA|ASIA|ABIA|ACCA|A3T|aws|AWS|PRIVATE KEY|PuTTY-User-Key|"
    r"gh[pousr]_|xox[abposr]|hooks\.slack\.com|pypi-|T3BlbkFJ"
)
_HF = re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")
_OPENAI_PROJECT = re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}")


@dataclass(frozen=True)
class SecretHit:
    """One credential found in text.

    Attributes:
        kind: human name, e.g. ``Hugging Face token``.
        line: 1-based line.
        column: 1-based column of the match (1 when unknown).
        preview: redacted prefix, e.g. ``hf_a…``.
    """

    kind: str
    line: int
    column: int
    preview: str


def redact(secret: str) -> str:
    """The first 4 characters and an ellipsis: never more of a secret."""
    return secret[:4] + "…"


class _Fallback:
    """Used only when detect-secrets is not installed (a broken install): the patterns the
    issue names, so a missing optional import never hides a leaked token."""

    def __init__(self, secret_type: str, pattern: str) -> None:
        self.secret_type = secret_type
        self._re = re.compile(pattern)

    def analyze_string(self, string: str):
        for m in self._re.finditer(string):
            yield m.group(0)


@lru_cache(maxsize=1)
def _detectors() -> tuple:
    try:
        import detect_secrets  # noqa: F401
    except ImportError:
        return (_Fallback("Hugging Face Token", _HF.pattern),
                _Fallback("OpenAI Token", r"\bsk-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
                _Fallback("OpenAI Token", _OPENAI_PROJECT.pattern),
                _Fallback("AWS Access Key", r"\b(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}\b"),
                _Fallback("Private Key", r"BEGIN (?:[A-Z]+ )?PRIVATE KEY"))
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector

    class HuggingFaceDetector(RegexBasedDetector):
        """Hugging Face user access tokens (not in detect-secrets 1.5)."""

        secret_type = "Hugging Face Token"
        denylist = (_HF,)

    class OpenAIProjectKeyDetector(RegexBasedDetector):
        """OpenAI project/service-account/admin keys."""

        secret_type = "OpenAI Token"
        denylist = (_OPENAI_PROJECT,)

    return tuple(cls() for cls in (
        HuggingFaceDetector, OpenAIDetector, OpenAIProjectKeyDetector, AWSKeyDetector,
        PrivateKeyDetector, GitHubTokenDetector, SlackDetector, StripeDetector,
        PypiTokenDetector))


_KIND = {
    "Hugging Face Token": "Hugging Face token",
    "OpenAI Token": "OpenAI API key",
    "AWS Access Key": "AWS access key",
    "Private Key": "private key",
    "GitHub Token": "GitHub token",
    "Slack Token": "Slack token",
    "Stripe Access Key": "Stripe key",
    "PyPI Token": "PyPI token",
}


def scan_text(text: str) -> list[SecretHit]:
    """Every credential in ``text`` (one hit per kind per line)."""
    hits: list[SecretHit] = []
    if not _MARKERS.search(text):
        return hits
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > 20_000 or not _MARKERS.search(line):
            continue
        seen: set[str] = set()
        for detector in _detectors():
            kind = _KIND.get(detector.secret_type, detector.secret_type)
            if kind in seen:
                continue
            for match in detector.analyze_string(line):
                seen.add(kind)
                col = line.find(match)
                preview = "-----BEGIN …" if kind == "private key" else redact(match)
                hits.append(SecretHit(kind, number, col + 1 if col >= 0 else 1, preview))
                break
    return hits


def looks_secret(value: str) -> str | None:
    """The kind of credential ``value`` contains, or ``None``."""
    hits = scan_text(value)
    return hits[0].kind if hits else None
