"""EK6xx deployment-safety rules (secrets, upload size, ignore files). Also run by
``envkit push`` before it uploads.

"Would be uploaded" is :func:`envkit.envdir.upload_set.upload_set` (shared with push). The Docker
build context is every file ``.dockerignore`` does not exclude: ``COPY . /app`` copies it into
the image, which a public Space lets anyone pull.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from envkit.envdir.upload_set import upload_set
from envkit.findings import Finding, Location, Severity, register
from envkit.fsutil import read_bounded
from envkit.secret_scan import (
    SCAN_LIMIT,
    SecretHit,
    allowed_patterns,
    is_allowed,
    is_credentials_name,
    scan_files,
)
from envkit.validation.context import StaticContext

SECRET_FILE = register(
    "EK601",
    "secret-file-uploaded",
    Severity.ERROR,
    rfc008="static.image_hygiene",
    summary="A credentials file (`.env`, a private key, `secrets.json`, ...) would be uploaded "
    "or built into the image.",
    what="No file named like a credentials store -- `.env`/`.env.*`/`*.env`, a private key "
    "(`*.pem`, `*.key`, `id_rsa`, ...), `*.p12`/`*.pfx`/`*.jks`/`*.keystore`, `.netrc`, "
    "`.npmrc`, `.pypirc`, `.git-credentials`, `credentials*`, `secrets.json`/`.yaml`/"
    "`.toml`, `service-account*.json`, ... -- is in the upload set or in the Docker build "
    "context (files `.dockerignore` does not exclude), unless `pyproject.toml` allows it "
    'by path: `[tool.envkit.push] allow = ["config/credentials.example.json"]` '
    "(its content is still scanned).",
    why="A public Space serves its files and its image to anyone: an uploaded `.env` leaks "
    "every key in it, and `COPY . /app` bakes it into the image.",
    example="`.env` holding `HF_TOKEN=...` with no `.dockerignore`.",
    fix="Add the file to `.dockerignore` and `.gitignore` (and rotate the credential if it "
    "was ever pushed); if it holds no secret, list it in `[tool.envkit.push] allow`.",
)
SECRET_IN_FILE = register(
    "EK602",
    "secret-in-file",
    Severity.ERROR,
    summary="A file that would be uploaded contains a token (Hugging Face, OpenAI, AWS, ...).",
    what="No text file in the upload set contains a Hugging Face token, an OpenAI key, an AWS "
    "access key, a private key block or another token detect-secrets recognises.",
    why="Uploaded files are public on a public Space; scanners harvest leaked tokens within "
    "minutes.",
    example='`inference.py` with `api_key="hf_..."` hard-coded.',
    fix='Read the token from the environment (`os.environ["HF_TOKEN"]`), remove it from the '
    "file, and rotate it.",
)
LARGE_FILE = register(
    "EK603",
    "large-file",
    Severity.WARNING,
    summary="A file over 10 MB would be uploaded.",
    what="Every file in the upload set is at most 10 MB.",
    why="The Hub stores files over 10 MB only through LFS/Xet; plain uploads of them are "
    "refused, and large files slow every Space rebuild.",
    example="A 200 MB `data/episodes.jsonl` next to the server.",
    fix="Ignore it (`.gitignore`/`.dockerignore`), track it with Git LFS, or download it at "
    "build time from a dataset repo.",
)
NOT_SCANNED = register(
    "EK606",
    "file-not-scanned",
    Severity.ERROR,
    summary="A file that would be uploaded could not be scanned for secrets.",
    what="Every file in the upload set is a regular file of at most 16 MiB that the secret "
    "scanner reads whole, unless `[tool.envkit.push] allow` in `pyproject.toml` lists it.",
    why="A file envkit cannot read may hold a token; `envkit push` fails closed rather than "
    "upload what it could not check.",
    example="A 200 MB `data/episodes.jsonl` next to the server.",
    fix="Exclude the file (`.gitignore`/`.dockerignore`) and download it at build time, or, "
    "if you vouch for it, add its path to `[tool.envkit.push] allow = [...]`.",
)
NAME_NOT_UTF8 = register(
    "EK607",
    "file-name-not-utf8",
    Severity.ERROR,
    summary="A file that would be uploaded has a name that is not valid UTF-8.",
    what="Every path in the upload set is valid UTF-8 text.",
    why="Hub paths are UTF-8 strings: the upload of such a file fails (or its name is "
    "mangled), and git, Docker and most tools show it differently on each machine.",
    example="`data/r\\xe9sum\\xe9.txt` written by a Latin-1 tool.",
    fix="Rename the file to a UTF-8 name, or exclude it (`.gitignore`/`.dockerignore`).",
)
NO_GITIGNORE = register(
    "EK604",
    "gitignore-missing",
    Severity.WARNING,
    hygiene=True,
    summary="`.gitignore` is missing.",
    what="The environment has a `.gitignore`.",
    why="Without it `git add .` commits `.venv`, `__pycache__` and `.env` files, which then "
    "reach the Hub.",
    example="A fresh directory made by `openenv init`.",
    fix="Add a `.gitignore` listing `.venv/`, `__pycache__/`, `.env` and `*.pem` at least.",
)
NO_DOCKERIGNORE = register(
    "EK605",
    "dockerignore-missing",
    Severity.WARNING,
    rfc008="static.image_hygiene",
    hygiene=True,
    summary="`.dockerignore` is missing.",
    what="The environment has a `.dockerignore`.",
    why="Without it the build context includes `.git`, `.venv` and secrets: builds are slow "
    "and `COPY . /app` bakes everything into the image.",
    example="A fresh directory made by `openenv init`.",
    fix="Add a `.dockerignore` listing `.git`, `.venv`, `**/__pycache__`, `.env` and `*.pem`.",
)


@dataclass(frozen=True)
class EnclosingRepository:
    """The repository an in-repo environment lives in (OpenEnv's ``envs/NAME`` layout).

    Attributes:
        top: the repository's top folder (holds ``.git``, else the highest ``.gitignore``).
        gitignore: the nearest ``.gitignore`` above the environment, inside ``top``, or
            ``None``.
    """

    top: Path
    gitignore: Path | None

    def rel(self, root: Path, path: Path) -> str:
        """``path`` as seen from the environment ``root`` (``../../.gitignore``)."""
        return Path(os.path.relpath(path, root)).as_posix()


def enclosing_repository(root: Path) -> EnclosingRepository | None:
    """The repository ``root`` sits inside, ``None`` for a standalone environment.

    Walks up from ``root``'s parent: the first folder holding ``.git`` (a folder or a
    worktree's file) is the top; a ``.gitignore`` on the way (the nearest one) is the one git
    applies to the environment's files. Without ``.git`` above, a parent ``.gitignore`` still
    marks a repository (an exported copy), except in the home folder, where it is often a
    global excludes file. An environment holding its own ``.git`` is standalone.
    In-repo environments are not nagged about layout.
    """
    root = root.resolve()
    if (root / ".git").exists():
        return None
    home = Path.home().resolve()
    nearest: Path | None = None
    highest: Path | None = None
    for parent in root.parents:
        if (parent / ".gitignore").is_file() and parent != home:
            nearest = nearest or parent / ".gitignore"
            highest = parent
        if (parent / ".git").exists():
            return EnclosingRepository(parent, nearest)
    if highest is not None:
        return EnclosingRepository(highest, nearest)
    return None


INLINE_LIMIT = 10 * 1024 * 1024  # bytes; the Hub needs LFS/Xet above this
_PRUNE = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
}


def _is_utf8(path: str) -> bool:
    """Whether ``path`` (as ``os`` returns it: undecodable bytes surrogate-escaped) is text."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_secret_name(name: str) -> bool:
    return is_credentials_name(name)


def _dockerignore_lines(root: Path) -> list[str]:
    try:
        data = read_bounded(root / ".dockerignore", root=root)
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def build_context_secret_files(root: Path) -> list[str]:
    """Credential-looking files that ``docker build`` would send (not in ``.dockerignore``)."""
    import pathspec  # ~50 ms, only for a .dockerignore: `envkit rules` imports this module

    spec = pathspec.GitIgnoreSpec.from_lines([ln.lstrip("/") for ln in _dockerignore_lines(root)])
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(
            d for d in dirnames if d not in _PRUNE and not spec.match_file(f"{rel_dir}{d}/")
        )
        for name in filenames:
            rel = f"{rel_dir}{name}"
            if _is_secret_name(name) and not spec.match_file(rel):
                out.append(rel)
    return sorted(out)


def _allowed(ctx: StaticContext) -> tuple[str, ...]:
    data, _error = ctx.pyproject()
    return allowed_patterns(data)


def check(ctx: StaticContext) -> Iterator[Finding]:
    root = ctx.root
    repo = enclosing_repository(root) if not (root / ".gitignore").is_file() else None
    if repo is not None and repo.gitignore is not None:
        ctx.skip(
            (NO_GITIGNORE.code,),
            f"in-repo environment: `{repo.rel(root, repo.gitignore)}` of the "
            f"enclosing repository (`{repo.rel(root, repo.top)}`) applies",
        )
    elif not (root / ".gitignore").is_file():
        yield NO_GITIGNORE.finding(
            "Expected a `.gitignore` (keeps `.venv`, caches and `.env` out of commits and "
            "uploads); found none.",
            location=Location(".gitignore"),
        )
    if not (root / ".dockerignore").is_file():
        yield NO_DOCKERIGNORE.finding(
            "Expected a `.dockerignore` (keeps `.git`, `.venv` and secrets out of the image); "
            "found none.",
            location=Location(".dockerignore"),
        )
    allow = _allowed(ctx)
    files = upload_set(root)
    odd = [f for f in files if not _is_utf8(f.path)]
    for f in odd:
        shown = os.fsencode(f.path).decode("utf-8", errors="backslashreplace")
        yield NAME_NOT_UTF8.finding(
            f"Uploaded paths must be UTF-8; `{shown}` is not (its bytes are shown escaped). "
            "It was not scanned and cannot be pushed.",
            location=Location(shown),
        )
    files = [f for f in files if _is_utf8(f.path)]
    flagged: set[str] = set()
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        if _is_secret_name(name) and not is_allowed(f.path, allow):
            flagged.add(f.path)
            yield SECRET_FILE.finding(
                f"`{f.path}` looks like a credentials file and would be uploaded to the Space; "
                "it must be excluded (or listed in `[tool.envkit.push] allow` if it holds no "
                "secret).",
                location=Location(f.path),
            )
    for rel in build_context_secret_files(root):
        if rel in flagged or is_allowed(rel, allow):
            continue
        yield SECRET_FILE.finding(
            f"`{rel}` looks like a credentials file and is in the Docker build context "
            "(`.dockerignore` does not exclude it), so `COPY . ` bakes it into the image.",
            location=Location(rel),
        )
    for f in files:
        if f.size > INLINE_LIMIT and (f.size <= SCAN_LIMIT or is_allowed(f.path, allow)):
            yield LARGE_FILE.finding(
                f"Files uploaded without LFS/Xet should be at most 10 MB; `{f.path}` is "
                f"{f.size / 1024 / 1024:.1f} MB.",
                location=Location(f.path),
            )
    hits, unscanned = scan_files(root, [f.path for f in files], limit=SCAN_LIMIT)
    # one finding per file, line and kind: a database row with four tokens is one place to
    # fix (calendar_env's seed database)
    grouped: dict[tuple[str, int, str], list[SecretHit]] = {}
    for hit in hits:
        grouped.setdefault((hit.file, hit.line, hit.kind), []).append(hit)
    for (file, line, kind), same in grouped.items():
        first = same[0]
        what = (
            f"a {kind} (`{first.preview}`, value not shown)"
            if len(same) == 1
            else f"{len(same)} values that look like a {kind} (first `{first.preview}`, "
            "values not shown)"
        )
        yield SECRET_IN_FILE.finding(
            f"`{file}` would be uploaded and contains {what} at line {line}.",
            location=Location(file, line, first.column),
        )
    for miss in unscanned:
        if is_allowed(miss.file, allow):
            continue
        yield NOT_SCANNED.finding(
            f"Every uploaded file must be scanned for secrets; `{miss.file}` was not "
            f"({miss.reason}).",
            location=Location(miss.file),
        )
