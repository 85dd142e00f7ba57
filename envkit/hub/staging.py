"""Staging: a temporary copy of exactly what a push uploads.

- The files are :func:`envkit.envdir.upload_set.upload_set` (``.gitignore``/``.dockerignore`` with git
  semantics, plus the always-excluded ``.git/``, ``.venv/``, ``__pycache__/``, ``.env*``, keys,
  build output), so ``envkit validate``'s EK6xx rules and the push agree.
- A Docker Space builds the ``Dockerfile`` at the repo root: when only ``server/Dockerfile``
  exists (``openenv init``'s layout, docs/protocol.md) it is moved to the root in the
  staged copy.
- ``README.md`` is repaired in the staged copy with :func:`envkit.envdir.card.repair_card` (sdk docker,
  app_port = manifest port, named colours, short_description <= 60, tags openenv + envkit).
- The user's own files are never modified.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from envkit.envdir.card import CardSyntaxError, repair_card
from envkit.envdir.manifest import Manifest
from envkit.envdir.toml import read_pyproject
from envkit.envdir.upload_set import LeftOut, UploadFile, walk_upload_set
from envkit.errors import SpecError
from envkit.fsutil import read_text_bounded
from envkit.secret_scan import SCAN_LIMIT, allowed_patterns, is_allowed, scan_files


@dataclass(frozen=True)
class SecretHit:
    """A credential found in a file that would be uploaded (the value itself is never kept).

    Attributes:
        file: path relative to the environment root.
        line: 1-based line.
        kind: e.g. ``Hugging Face token``.
        preview: redacted prefix, e.g. ``hf_a…``.
    """

    file: str
    line: int
    kind: str
    preview: str = ""


@dataclass
class StagedFolder:
    """The staged copy.

    Attributes:
        path: the temporary directory (the caller owns and removes it).
        files: what it holds, sorted by path, sizes in bytes (README after repair).
        readme_changes: what the card repair changed, one line each.
        notes: other things staging did (e.g. moved ``server/Dockerfile``).
        left_out: what of the environment directory is not uploaded, and why (a directory
            once).
    """

    path: Path
    files: list[UploadFile] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    readme_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def scan_secrets(
    root: Path, files: list[str], extra_literals: tuple[str, ...] = ()
) -> list[SecretHit]:
    """Find credentials in ``files`` (paths relative to ``root``) with envkit's one secret
    scanner (:mod:`envkit.secret_scan`, the same as ``envkit validate``'s EK602).

    Files the scanner cannot read whole are not hits here: :func:`stage` refuses files over
    the scanner's limit before copying them, and the push's EK6 preflight reports any other
    (EK606), honouring ``[tool.envkit.push] allow``.

    Args:
        root: the staged folder.
        files: POSIX paths relative to ``root``.
        extra_literals: exact strings that must not be uploaded either (the token in use).
    """
    found, _unscanned = scan_files(root, files, extra_literals)
    return [SecretHit(h.file, h.line, h.kind, h.preview) for h in found]


def stage(root: Path, manifest: Manifest, dest: Path, *, title: str) -> StagedFolder:
    """Copy the upload set of ``root`` into ``dest`` (which must not exist or be empty).

    Args:
        root: the environment directory.
        manifest: its manifest (``port`` for the card's ``app_port``).
        dest: the staging directory.
        title: Space title used when the card has none.

    Raises:
        SpecError: no Dockerfile at the root nor in ``server/``; README front matter that is
            not YAML (cannot be repaired safely) or a README over 1 MiB; a file over the secret
            scanner's limit (16 MiB) that ``[tool.envkit.push] allow`` does not list (it is
            refused before it is copied: EK606).
    """
    dest.mkdir(parents=True, exist_ok=True)
    staged = StagedFolder(path=dest)
    chosen, staged.left_out = walk_upload_set(root)
    paths = {f.path for f in chosen}
    staged.notes.extend(_dockerfile_notes(root, paths))
    _refuse_unscannable(root, chosen)
    for f in chosen:
        target = (
            "Dockerfile" if f.path == "server/Dockerfile" and "Dockerfile" not in paths else f.path
        )
        out = dest / target
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / f.path, out)
    staged.readme_changes = _repair_readme(dest, manifest, title)
    staged.files = sorted(
        (
            UploadFile(p.relative_to(dest).as_posix(), p.stat().st_size)
            for p in dest.rglob("*")
            if p.is_file()
        ),
        key=lambda f: f.path,
    )
    return staged


def _dockerfile_notes(root: Path, paths: set[str]) -> list[str]:
    """A note when ``server/Dockerfile`` will be moved to the root (a Docker Space builds the
    root ``Dockerfile``).

    Raises:
        SpecError: no Dockerfile at the root nor in ``server/``.
    """
    if "Dockerfile" in paths:
        return []
    if "server/Dockerfile" in paths:
        return [
            (
                "moved server/Dockerfile to Dockerfile (a Docker Space builds "
                "the Dockerfile at the repo root)"
            )
        ]
    raise SpecError(
        f"No Dockerfile in {root} (nor in server/): a Docker Space cannot build it.",
        hint="Add a Dockerfile at the environment root (`envkit init` generates one), "
        "or check it is not excluded by .gitignore/.dockerignore.",
    )


def _refuse_unscannable(root: Path, chosen: list[UploadFile]) -> None:
    """Refuse files larger than the secret scanner reads, unless ``[tool.envkit.push] allow``
    in ``pyproject.toml`` vouches for them (an unreadable pyproject vouches for none).

    Raises:
        SpecError: such a file is in the upload set (EK606).
    """
    too_big = [f for f in chosen if f.size > SCAN_LIMIT]
    if not too_big:
        return
    data, _error = read_pyproject(root)  # a broken pyproject allows nothing (EK202 reports it)
    allow = allowed_patterns(data) if data is not None else ()
    refused = [f.path for f in too_big if not is_allowed(f.path, allow)]
    if refused:
        raise SpecError(
            f"Refusing to push: {', '.join(refused)} is larger than the "
            f"{SCAN_LIMIT // (1024 * 1024)} MiB the secret scanner reads (EK606).",
            hint="Exclude it in .gitignore/.dockerignore, or vouch for it with "
            '`[tool.envkit.push] allow = ["<path>"]` in pyproject.toml.',
        )


def _repair_readme(dest: Path, manifest: Manifest, title: str) -> list[str]:
    """Repair the staged ``README.md`` as a Space card in place (written only when changed).

    Returns:
        What the repair changed, one line each.

    Raises:
        SpecError: the README is unreadable, over 1 MiB, or its front matter is not YAML.
    """
    readme = dest / "README.md"
    try:
        text = read_text_bounded(readme, root=dest) if readme.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(
            f"README.md cannot be used as the Space card: {exc}.",
            hint="Keep README.md a UTF-8 text file under 1 MiB.",
        ) from None
    try:
        fixed, changes = repair_card(text, manifest.port, title=title)
    except CardSyntaxError as exc:
        raise SpecError(
            f"README.md:{exc.line or 1}: {exc}; the Space card cannot be repaired safely.",
            hint="Fix the YAML between the `---` lines at the top of README.md.",
        ) from None
    if changes:
        readme.write_text(fixed, encoding="utf-8")
    return list(changes)
