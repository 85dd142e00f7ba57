"""Staging: a temporary copy of exactly what a push uploads.

- The files are :func:`envkit.upload_set.upload_set` (``.gitignore``/``.dockerignore`` with git
  semantics, plus the always-excluded ``.git/``, ``.venv/``, ``__pycache__/``, ``.env*``, keys,
  build output), so ``envkit validate``'s EK6xx rules and the push agree.
- A Docker Space builds the ``Dockerfile`` at the repo root: when only ``server/Dockerfile``
  exists (``openenv init``'s layout, ../shared/PROTOCOL.md) it is moved to the root in the
  staged copy.
- ``README.md`` is repaired in the staged copy with :func:`envkit.card.repair_card` (sdk docker,
  app_port = manifest port, named colours, short_description <= 60, tags openenv + envkit).
- The user's own files are never modified.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from envkit.errors import SpecError
from envkit.manifest import Manifest
from envkit.upload_set import UploadFile, upload_set

# Well-known credential shapes. A hit in any staged file stops the push (issue #5: no flag
# uploads secrets).
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}\b")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
)
_SCAN_MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class SecretHit:
    """A credential found in a file that would be uploaded (the value itself is never kept).

    Attributes:
        file: path relative to the environment root.
        line: 1-based line.
        kind: e.g. ``Hugging Face token``.
    """

    file: str
    line: int
    kind: str


@dataclass
class StagedFolder:
    """The staged copy.

    Attributes:
        path: the temporary directory (the caller owns and removes it).
        files: what it holds, sorted by path, sizes in bytes (README after repair).
        readme_changes: what the card repair changed, one line each.
        notes: other things staging did (e.g. moved ``server/Dockerfile``).
    """

    path: Path
    files: list[UploadFile] = field(default_factory=list)
    readme_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def scan_secrets(root: Path, files: list[str], extra_literals: tuple[str, ...] = ()) -> list[SecretHit]:
    """Find credentials in ``files`` (paths relative to ``root``).

    Args:
        extra_literals: exact strings that must not be uploaded either (the token in use).
    """
    hits: list[SecretHit] = []
    literals = tuple(s for s in extra_literals if s and len(s) >= 8)
    for rel in files:
        try:
            data = (root / rel).read_bytes()[:_SCAN_MAX_BYTES]
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for kind, pattern in SECRET_PATTERNS:
                if pattern.search(line):
                    hits.append(SecretHit(rel, lineno, kind))
                    break
            else:
                if any(lit in line for lit in literals):
                    hits.append(SecretHit(rel, lineno, "the Hugging Face token in use"))
    return hits


def stage(root: Path, manifest: Manifest, dest: Path, *, title: str) -> StagedFolder:
    """Copy the upload set of ``root`` into ``dest`` (which must not exist or be empty).

    Args:
        root: the environment directory.
        manifest: its manifest (``port`` for the card's ``app_port``).
        dest: the staging directory.
        title: Space title used when the card has none.

    Raises:
        SpecError: no Dockerfile at the root nor in ``server/``; README front matter that is
            not YAML (cannot be repaired safely).
    """
    from envkit.card import CardSyntaxError, repair_card

    dest.mkdir(parents=True, exist_ok=True)
    staged = StagedFolder(path=dest)
    chosen = upload_set(root)
    paths = {f.path for f in chosen}
    if "Dockerfile" not in paths:
        if "server/Dockerfile" in paths:
            staged.notes.append("moved server/Dockerfile to Dockerfile (a Docker Space builds "
                                "the Dockerfile at the repo root)")
        else:
            raise SpecError(
                f"No Dockerfile in {root} (nor in server/): a Docker Space cannot build it.",
                hint="Add a Dockerfile at the environment root (`envkit init` generates one), "
                "or check it is not excluded by .gitignore/.dockerignore.")
    for f in chosen:
        target = "Dockerfile" if f.path == "server/Dockerfile" and "Dockerfile" not in paths \
            else f.path
        out = dest / target
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / f.path, out)
    readme = dest / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    try:
        fixed, changes = repair_card(text, manifest.port, title=title)
    except CardSyntaxError as exc:
        raise SpecError(
            f"README.md:{exc.line or 1}: {exc}; the Space card cannot be repaired safely.",
            hint="Fix the YAML between the `---` lines at the top of README.md.") from None
    if changes:
        readme.write_text(fixed, encoding="utf-8")
        staged.readme_changes = changes
    staged.files = sorted(
        (UploadFile(p.relative_to(dest).as_posix(), p.stat().st_size)
         for p in dest.rglob("*") if p.is_file()),
        key=lambda f: f.path)
    return staged
