"""Which files of an environment would be uploaded to a Space (or sent as a build context).

Shared by ``envkit push`` (staging) and the EK6xx deployment-safety rules of
``envkit validate``, so both always agree. Semantics:

- ``.gitignore`` and ``.dockerignore`` patterns are honoured with gitignore semantics
  (``pathspec``'s ``GitIgnoreSpec``: a maintained implementation of git's own matching rules,
  negation and directory patterns included) -- we do not hand-roll pattern matching;
- some paths are ALWAYS excluded, whatever the ignore files say: ``.git/``, ``.venv/`` and
  other virtualenvs, ``__pycache__/``, ``.env*``, private-key files, build output, tool caches.
  These are always excluded.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pathspec

from envkit.fsutil import read_bounded

ALWAYS_EXCLUDED = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    ".tox/",
    ".nox/",
    "__pycache__/",
    "*.py[cod]",
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "*.p12",
    "*.pfx",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".ipynb_checkpoints/",
    "build/",
    "dist/",
    "*.egg-info/",
    ".DS_Store",
)


@dataclass(frozen=True)
class UploadFile:
    """A file that would be uploaded.

    Attributes:
        path: path relative to the environment root (POSIX separators).
        size: bytes.
    """

    path: str
    size: int


def _read_patterns(path: Path) -> list[str]:
    try:  # a FIFO or a link to /dev/zero named .gitignore must not hang or fill memory
        data = read_bounded(path, root=path.parent)
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def ignore_spec(root: Path, *, use_gitignore: bool = True, use_dockerignore: bool = True):
    """The combined ignore spec for ``root`` (always-excluded + .gitignore + .dockerignore).

    Only the root ``.gitignore`` is read (nested ones are rare in environments).
    """
    git, docker = _ignore_lines(root, use_gitignore, use_dockerignore)
    return pathspec.GitIgnoreSpec.from_lines([*ALWAYS_EXCLUDED, *git, *docker])


def _ignore_lines(
    root: Path, use_gitignore: bool, use_dockerignore: bool
) -> tuple[list[str], list[str]]:
    """The patterns of ``root/.gitignore`` and ``root/.dockerignore`` (each ``[]`` when not
    used)."""
    git = _read_patterns(root / ".gitignore") if use_gitignore else []
    # .dockerignore patterns are anchored at the context root; "**" works as in git.
    docker = (
        [ln.lstrip("/") for ln in _read_patterns(root / ".dockerignore")]
        if use_dockerignore
        else []
    )
    return git, docker


@dataclass(frozen=True)
class LeftOut:
    """A file or directory of the environment that is not uploaded, and why.

    Attributes:
        path: relative to the environment root (POSIX separators); a directory ends in
            ``/`` and stands for everything under it.
        reason: ``always left out (PATTERN)``, ``.gitignore``, ``.dockerignore``,
            ``a symbolic link``, ``not a regular file`` or ``unreadable``.
    """

    path: str
    reason: str


def upload_set(
    root: Path, *, use_gitignore: bool = True, use_dockerignore: bool = True
) -> list[UploadFile]:
    """Every file under ``root`` that would be uploaded, sorted by path.

    Only regular files count: symbolic links are not followed (a link out of the tree must not
    upload the target), and FIFOs, sockets and devices are skipped (they cannot be uploaded,
    and reading one would block or never end).

    Args:
        root: environment directory.
        use_gitignore: honour ``root/.gitignore``.
        use_dockerignore: honour ``root/.dockerignore``.
    """
    return walk_upload_set(root, use_gitignore=use_gitignore, use_dockerignore=use_dockerignore)[0]


def walk_upload_set(
    root: Path, *, use_gitignore: bool = True, use_dockerignore: bool = True
) -> tuple[list[UploadFile], list[LeftOut]]:
    """:func:`upload_set`, and what it leaves out with the reason (a left-out directory
    once, not every file under it), both sorted by path."""
    git, docker = _ignore_lines(root, use_gitignore, use_dockerignore)  # each file read once
    spec = pathspec.GitIgnoreSpec.from_lines([*ALWAYS_EXCLUDED, *git, *docker])
    why = _Reasons(git, docker)
    out: list[UploadFile] = []
    left: list[LeftOut] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        # prune ignored directories early (a .venv can hold 50k files)
        kept = []
        for d in sorted(dirnames):
            if spec.match_file(f"{rel_dir}{d}/"):
                left.append(LeftOut(f"{rel_dir}{d}/", why(f"{rel_dir}{d}/")))
            else:
                kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = f"{rel_dir}{name}"
            if spec.match_file(rel):
                left.append(LeftOut(rel, why(rel)))
                continue
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                left.append(LeftOut(rel, "unreadable"))
                continue
            if stat.S_ISLNK(st.st_mode):
                left.append(LeftOut(rel, "a symbolic link"))
            elif not stat.S_ISREG(st.st_mode):
                left.append(LeftOut(rel, "not a regular file"))
            else:
                out.append(UploadFile(rel, st.st_size))
    return sorted(out, key=lambda f: f.path), sorted(left, key=lambda f: f.path)


class _Reasons:
    """Which source of patterns leaves a path out: the always-excluded list first (naming
    the pattern), then ``.gitignore``, then ``.dockerignore``."""

    def __init__(self, git: list[str], docker: list[str]):
        self.always = [(p, pathspec.GitIgnoreSpec.from_lines([p])) for p in ALWAYS_EXCLUDED]
        self.git = pathspec.GitIgnoreSpec.from_lines(git)
        self.docker = pathspec.GitIgnoreSpec.from_lines(docker)

    def __call__(self, rel: str) -> str:
        for pattern, spec in self.always:
            if spec.match_file(rel):
                return f"always left out ({pattern})"
        if self.git.match_file(rel):
            return ".gitignore"
        if self.docker.match_file(rel):
            return ".dockerignore"
        return "ignored"
