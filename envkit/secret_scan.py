"""The one secret scanner of envkit: ``validate`` (EK309, EK601, EK602, EK606), ``build`` (its
preflight runs those rules) and ``push`` (its preflight, plus the token in use) all call it.
One scanner for validate and push, so the two never disagree.

What it finds:

- credentials in text, with Yelp's ``detect-secrets`` detectors through their public
  ``analyze_string`` method (AWS access key ids, private keys, OpenAI, GitHub, Slack, Stripe,
  PyPI) -- no baseline, no global settings, no network verification -- plus detectors of our
  own written as detect-secrets plugins: Hugging Face tokens, OpenAI project/service keys,
  Anthropic keys, Google API keys and OAuth access tokens (``ya29.``) and an AWS *secret
  access key* on its own (40 base64 characters that look random, see :class:`_AwsSecretKey`);
- in any text encoding a secret can hide in: UTF-8, UTF-16 and UTF-32 with or without a byte
  order mark, and files with stray NUL bytes (:func:`text_views`);
- files *named* like a credentials store (``.env``, ``secrets.json``, ``credentials``,
  ``*.keystore``, ``.npmrc``, ``.pypirc``, ``.git-credentials``, private keys, ...):
  :func:`is_credentials_name`. A project allows such a name explicitly with
  ``[tool.envkit.push] allow = ["config/credentials.example"]`` in ``pyproject.toml``
  (:func:`allowed_patterns`); allowed files are still scanned for content.

Nothing here returns a secret in full: :func:`redact` keeps the first 4 characters.

``detect_secrets`` imports ``requests`` (~0.25 s), so it is imported only when a line contains
one of the cheap markers below; every detector's patterns contain one of them.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from envkit.fsutil import FileTooLargeError, UnsafeFileError, read_bounded

SCAN_LIMIT = 16 * 1024 * 1024  # bytes; a larger file is reported as not scanned (EK606)
_LINE_WINDOW = 8192  # characters; longer lines are scanned in overlapping windows
_WINDOW_OVERLAP = 512  # characters; longer than any token the detectors know

# Credentials-store file names (fnmatch, matched against the file's name, case-insensitive).
CREDENTIAL_FILE_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.ppk",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".git-credentials",
    ".pgpass",
    ".htpasswd",
    ".s3cfg",
    ".boto",
    ".dockercfg",
    "credentials",
    "credentials.*",
    "credentials-*",
    "credentials_*",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "secrets.env",
    "client_secret*.json",
    "service-account*.json",
    "*-credentials.json",
)
# Templates of such files, and source/docs that merely carry the word (their content is scanned).
SAFE_NAMES = (".env.example", ".env.sample", ".env.template", ".env.dist", "example.env")
_SAFE_SUFFIXES = (".pub", ".py", ".md", ".rst", ".example", ".sample", ".template")

# A line must contain one of these before the detectors look at it (superset of their patterns).
_MARKERS = re.compile(
    r"hf_|sk-|sk_live_|rk_live_|AKIA|ASIA|ABIA|ACCA|A3T|aws|AWS|PRIVATE KEY|PuTTY-User-Key|"
    r"gh[pousr]_|github_pat_|xox[abposr]|hooks\.slack\.com|pypi-|T3BlbkFJ|AIza|ya29\."
)
_B64_RUN = re.compile(r"[A-Za-z0-9/+=]{40,}")  # one pass; exactly 40 without `=` may be AWS
_HF = re.compile(r"hf_(?<![A-Za-z0-9_]hf_)[A-Za-z0-9]{30,}\b")
_OPENAI_PROJECT = re.compile(r"sk-(?<![A-Za-z0-9_]sk-)(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}")
_ANTHROPIC = re.compile(r"sk-ant-(?<![A-Za-z0-9_]sk-ant-)[A-Za-z0-9_-]{20,}")
_GOOGLE = re.compile(r"AIza(?<![A-Za-z0-9_]AIza)[0-9A-Za-z_-]{35}\b")
_GITHUB_PAT = re.compile(r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{40,}")
_GOOGLE_OAUTH = re.compile(r"ya29\.(?<![A-Za-z0-9_]ya29\.)[0-9A-Za-z_.-]{20,}")
# 40 base64 characters standing alone: next to `-`, `_` or `.` they are the inside of a longer
# URL-safe token (an OAuth access token, a JWT), not an AWS secret (calendar_env's
# placeholder `ya29.` token was reported as an AWS key).
_TOKEN_CHAR = r"[A-Za-z0-9/+=_.-]"  # what continues a token on either side of the 40
_AWS_SECRET = re.compile(
    rf"[A-Za-z0-9/+]{{40}}(?<!{_TOKEN_CHAR}[A-Za-z0-9/+]{{40}})(?!{_TOKEN_CHAR})"
)
_TOKEN_EDGE = re.compile(_TOKEN_CHAR)
_AWS_CONTEXT = re.compile(r"aws|secret", re.IGNORECASE)


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


@dataclass(frozen=True)
class FileHit:
    """A credential in a file (path relative to the scanned root)."""

    file: str
    line: int
    column: int
    kind: str
    preview: str


@dataclass(frozen=True)
class Unscanned:
    """A file the scanner could not read whole (so it may hold a secret).

    Attributes:
        file: path relative to the scanned root.
        reason: e.g. ``80.0 MB, more than the 64 MB the scanner reads``.
    """

    file: str
    reason: str


def redact(secret: str) -> str:
    """The first 4 characters and an ellipsis: never more of a secret."""
    return secret[:4] + "…"


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(n / len(s) * math.log2(n / len(s)) for n in counts.values())


def looks_like_aws_secret(candidate: str, *, context: bool) -> bool:
    """Whether 40 base64 characters look like an AWS secret access key (random bytes) rather
    than a word, an identifier or a hex digest.

    AWS secret access keys are 40 characters of base64 (``A-Z a-z 0-9 / +``) with no fixed
    prefix, so the shape alone is weak evidence. Random base64 of that length almost always mixes
    upper case, lower case and digits, has a Shannon entropy above 4.2 bits per character and
    changes character class about 26 times; identifiers (``CamelCase123``) change it about 15
    times and carry no ``/`` or ``+``. With ``context`` (``aws`` or ``secret`` on the same line)
    the mixed classes are enough.
    """
    if len(candidate) != 40 or not re.fullmatch(r"[A-Za-z0-9/+]{40}", candidate):
        return False
    if not (
        re.search(r"[A-Z]", candidate)
        and re.search(r"[a-z]", candidate)
        and re.search(r"[0-9/+]", candidate)
    ):
        return False
    if context:
        return _entropy(candidate) >= 3.5
    if not re.search(r"[0-9]", candidate) or _entropy(candidate) < 4.2:
        return False
    classes = [
        "u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s"
        for c in candidate
    ]
    runs = 1 + sum(a != b for a, b in itertools.pairwise(classes))
    return runs >= 18 or "/" in candidate or "+" in candidate


class _Fallback:
    """Used only when detect-secrets is not installed (a broken install): the patterns the
    issue names, so a missing optional import never hides a leaked token."""

    def __init__(self, secret_type: str, pattern: str) -> None:
        self.secret_type = secret_type
        self._re = re.compile(pattern)

    def analyze_string(self, string: str) -> Iterator[str]:
        for m in self._re.finditer(string):
            yield m.group(0)


class _AwsSecretFallback(_Fallback):
    def __init__(self) -> None:
        super().__init__("AWS Secret Access Key", _AWS_SECRET.pattern)

    def analyze_string(self, string: str) -> Iterator[str]:
        context = bool(_AWS_CONTEXT.search(string))
        for match in super().analyze_string(string):
            if looks_like_aws_secret(match, context=context):
                yield match


@lru_cache(maxsize=1)
def _detectors() -> tuple[Any, ...]:
    own = (
        ("Hugging Face Token", _HF),
        ("OpenAI Token", _OPENAI_PROJECT),
        ("Anthropic API Key", _ANTHROPIC),
        ("Google API Key", _GOOGLE),
        ("Google OAuth Token", _GOOGLE_OAUTH),
        ("GitHub Token", _GITHUB_PAT),
    )
    try:
        import detect_secrets  # noqa: F401
    except ImportError:  # pragma: no cover - detect-secrets is a dependency
        return (
            *(_Fallback(kind, pattern.pattern) for kind, pattern in own),
            _Fallback("OpenAI Token", r"\bsk-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
            _Fallback("AWS Access Key", r"\b(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}\b"),
            _AwsSecretFallback(),
            _Fallback("Private Key", r"BEGIN (?:[A-Z]+ )?PRIVATE KEY"),
        )
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector

    def plugin(kind: str, pattern: re.Pattern[str]) -> type:
        return type(
            kind.replace(" ", "") + "Detector",
            (RegexBasedDetector,),
            {"secret_type": kind, "denylist": (pattern,)},
        )

    class AwsSecretAccessKeyDetector(RegexBasedDetector):
        """An AWS secret access key without its ``AKIA`` id nearby (detect-secrets 1.5 finds
        it only in ``aws ... key = "..."`` assignments)."""

        secret_type = "AWS Secret Access Key"
        denylist = (_AWS_SECRET,)

        def analyze_string(self, string: str) -> Iterator[str]:
            context = bool(_AWS_CONTEXT.search(string))
            for match in super().analyze_string(string):
                if looks_like_aws_secret(match, context=context):
                    yield match

    return tuple(
        cls()
        for cls in (
            *(plugin(kind, pattern) for kind, pattern in own),
            OpenAIDetector,
            AWSKeyDetector,
            AwsSecretAccessKeyDetector,
            PrivateKeyDetector,
            GitHubTokenDetector,
            SlackDetector,
            StripeDetector,
            PypiTokenDetector,
        )
    )


_KIND = {
    "Hugging Face Token": "Hugging Face token",
    "OpenAI Token": "OpenAI API key",
    "Anthropic API Key": "Anthropic API key",
    "Google API Key": "Google API key",
    "Google OAuth Token": "Google OAuth access token",
    "AWS Access Key": "AWS access key",
    "AWS Secret Access Key": "AWS secret access key",
    "Private Key": "private key",
    "GitHub Token": "GitHub token",
    "Slack Token": "Slack token",
    "Stripe Access Key": "Stripe key",
    "PyPI Token": "PyPI token",
}


def _windows(text: str, positions: list[int]) -> Iterator[tuple[int, str]]:
    """``(offset, chunk)``: for each sorted marker position not inside the previous chunk, the
    text from ``_WINDOW_OVERLAP`` characters before it, ``_LINE_WINDOW`` characters long (chunks
    may span lines: the detectors' patterns never cross a newline)."""
    covered_to = -1
    for pos in positions:
        if pos < covered_to:
            continue
        start = max(0, pos - _WINDOW_OVERLAP)
        end = min(len(text), start + _LINE_WINDOW)
        covered_to = end - _WINDOW_OVERLAP if end < len(text) else len(text) + 1
        yield start, text[start:end]


MAX_HITS = 100  # per text: a file full of key-shaped strings is reported, not enumerated


def scan_text(text: str, literals: Iterable[str] = ()) -> list[SecretHit]:
    """Every credential in ``text`` (one hit per kind and value per line; at most
    :data:`MAX_HITS`).

    One cheap pass finds the places a detector could match (marker strings, 40-character
    base64 runs, the literals); the detectors then read only the text around them, so time
    grows linearly with the text and a one-line 10 MB file is scanned whole.

    Args:
        text: the text.
        literals: exact strings that are secrets too (e.g. the Hub token in use); shorter than
            8 characters are ignored.
    """
    hits: list[SecretHit] = []
    lits = [s for s in literals if s and len(s) >= 8]
    positions = [m.start() for m in _MARKERS.finditer(text)]
    positions += [
        m.start()
        for m in _B64_RUN.finditer(text)
        if m.end() - m.start() == 40 and "=" not in m.group()
    ]
    for lit in lits:
        at = text.find(lit)
        while at >= 0:
            positions.append(at)
            at = text.find(lit, at + 1)
    seen: set[tuple[int, str, str]] = set()

    starts: set[int] = set()

    def add(kind: str, match: str, at: int, preview: str) -> None:
        if (
            kind == "AWS secret access key"
            and (  # a chunk edge is not a boundary
                (at > 0 and _TOKEN_EDGE.fullmatch(text[at - 1]))
                or _TOKEN_EDGE.fullmatch(text[at + 40 : at + 41])
            )
        ):
            return
        number = text.count("\n", 0, at) + 1
        if (
            at in starts
            or (number, kind, match) in seen
            or any(n == number and match in m for n, _k, m in seen)
        ):
            return
        starts.add(at)
        seen.add((number, kind, match))
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        hits.append(SecretHit(kind, number, column, preview))

    for offset, chunk in _windows(text, sorted(set(positions))):
        if len(hits) >= MAX_HITS:
            break
        for lit in lits:
            col = chunk.find(lit)
            while col >= 0:
                add("Hugging Face token in use", lit, offset + col, redact(lit))
                col = chunk.find(lit, col + 1)
        for detector in _detectors():
            kind = _KIND.get(detector.secret_type, detector.secret_type)
            for match in detector.analyze_string(chunk):
                col = chunk.find(match)
                while col >= 0:
                    add(
                        kind,
                        match,
                        offset + col,
                        "-----BEGIN …" if kind == "private key" else redact(match),
                    )
                    col = chunk.find(match, col + 1)
    return hits[:MAX_HITS]


def looks_secret(value: str) -> str | None:
    """The kind of credential ``value`` contains, or ``None``."""
    hits = scan_text(value)
    return hits[0].kind if hits else None


# -- decoding ----------------------------------------------------------------------------------
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def _guess_wide(data: bytes) -> str | None:
    """UTF-16/UTF-32 without a byte order mark, told by where the NUL bytes of ASCII text sit."""
    sample = data[:65536]
    n = len(sample)
    if n < 4 or b"\0" not in sample:
        return None
    for width, names in ((4, ("utf-32-le", "utf-32-be")), (2, ("utf-16-le", "utf-16-be"))):
        cut = n - n % width
        for name, zero_at in zip(names, (range(1, width), range(width - 1))):
            units = cut // width
            if units == 0:
                continue
            ok = sum(1 for i in range(0, cut, width) if all(sample[i + z] == 0 for z in zero_at))
            if ok >= 0.6 * units:
                return name
    return None


def text_views(data: bytes) -> list[str]:
    """The texts a secret in ``data`` can be read from.

    The first view is the file decoded by its byte order mark, else as UTF-32/UTF-16 when the
    NUL bytes sit where ASCII text in those encodings puts them, else as UTF-8 (undecodable
    bytes replaced). When the data holds NUL bytes, a second view drops them: it reads ASCII
    text in any of these encodings and text with NULs sprinkled in (line numbers stay
    those of the first view where the file is ASCII-compatible).
    """
    views: list[str] = []
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), None) or _guess_wide(
        data
    )
    if encoding is not None:
        views.append(data.decode(encoding, errors="replace").lstrip("\ufeff"))
    else:
        views.append(data.decode("utf-8", errors="replace"))
    if b"\0" in data:
        views.append(data.replace(b"\0", b"").decode("utf-8", errors="replace"))
    return views


def scan_bytes(data: bytes, literals: Iterable[str] = ()) -> list[SecretHit]:
    """:func:`scan_text` over every :func:`text_views` of ``data`` (binary files included: a
    token stays ASCII inside them). The same secret found in two views counts once."""
    lits = tuple(literals)
    hits: list[SecretHit] = []
    for index, view in enumerate(text_views(data)):
        earlier = {(h.kind, h.preview) for h in hits}
        for hit in scan_text(view, lits):
            if index and (hit.kind, hit.preview) in earlier:
                continue
            hits.append(hit)
    return hits


# -- files -------------------------------------------------------------------------------------
def is_credentials_name(name: str) -> bool:
    """Whether a file name (not a path) looks like a credentials store.

    Templates (``.env.example``), public keys (``*.pub``) and source or docs files
    (``credentials.py``, ``credentials.md``: their content is scanned instead) are not.
    """
    lower = name.lower()
    if lower in SAFE_NAMES or lower.endswith(_SAFE_SUFFIXES):
        return False
    return any(fnmatch.fnmatchcase(lower, p) for p in CREDENTIAL_FILE_PATTERNS)


def allowed_patterns(pyproject: object) -> tuple[str, ...]:
    """The ``[tool.envkit.push] allow`` globs of a parsed ``pyproject.toml`` (``()`` when
    absent or not a list of strings).

    A path matching one of them (``fnmatch`` on the path relative to the project root, or on
    the file name) may carry a credentials-store name (EK601) and may be too large to scan
    (EK606). Its content is still scanned (EK602): no setting uploads a secret.
    """
    try:
        allow = pyproject["tool"]["envkit"]["push"]["allow"]
    except (KeyError, TypeError, IndexError):
        return ()
    if isinstance(allow, str):
        allow = [allow]
    if not isinstance(allow, list):
        return ()
    return tuple(a.lstrip("/") for a in allow if isinstance(a, str) and a)


def is_allowed(rel: str, patterns: Iterable[str]) -> bool:
    """Whether ``rel`` (POSIX path relative to the root) matches one of ``patterns``."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def scan_files(
    root: Path, files: Iterable[str], literals: Iterable[str] = (), limit: int = SCAN_LIMIT
) -> tuple[list[FileHit], list[Unscanned]]:
    """Scan files (paths relative to ``root``) for credentials.

    Reads each with :func:`envkit.fsutil.read_bounded` (regular files inside ``root`` only,
    at most ``limit`` bytes), so time and memory stay bounded whatever the project holds.

    Args:
        root: the directory the paths are relative to.
        files: POSIX relative paths.
        literals: exact secret strings to look for as well (the token in use).
        limit: bytes read per file at most.

    Returns:
        ``(hits, unscanned)``: what was found, and the files that could not be read whole
        (too large, not a regular file, unreadable) -- the caller decides (EK606 stops a push).
    """
    lits = tuple(literals)
    hits: list[FileHit] = []
    unscanned: list[Unscanned] = []
    for rel in files:
        try:
            data = read_bounded(root / rel, root=root, limit=limit)
        except FileNotFoundError:
            continue
        except FileTooLargeError as exc:
            unscanned.append(
                Unscanned(
                    rel,
                    f"{exc.size / 1e6:.1f} MB, more than the "
                    f"{limit / 1e6:.0f} MB the secret scanner reads",
                )
            )
            continue
        except UnsafeFileError as exc:
            unscanned.append(Unscanned(rel, exc.reason))
            continue
        except OSError as exc:
            unscanned.append(Unscanned(rel, f"cannot be read ({exc.strerror or exc})"))
            continue
        for hit in scan_bytes(data, lits):
            hits.append(FileHit(rel, hit.line, hit.column, hit.kind, hit.preview))
    return hits, unscanned


def credential_files(root: Path, files: Iterable[str]) -> list[str]:
    """The paths among ``files`` whose name looks like a credentials store."""
    return [rel for rel in files if is_credentials_name(rel.rsplit("/", 1)[-1])]


__all__ = [
    "CREDENTIAL_FILE_PATTERNS",
    "SCAN_LIMIT",
    "FileHit",
    "SecretHit",
    "Unscanned",
    "allowed_patterns",
    "credential_files",
    "is_allowed",
    "is_credentials_name",
    "looks_like_aws_secret",
    "looks_secret",
    "redact",
    "scan_bytes",
    "scan_files",
    "scan_text",
    "text_views",
]
