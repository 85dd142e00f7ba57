"""What goes into an image besides its Dockerfile: the tag (docker's reference grammar), the
build context after ``.dockerignore`` and the labels envkit sets."""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from docker.utils.build import exclude_paths

from envkit._version import __version__
from envkit.container._engine import ENV_LABEL, MANIFEST_SHA_LABEL
from envkit.envdir import EnvDir
from envkit.envdir.constants import MANIFEST_NAME

#: Warn when the build context (after .dockerignore) is larger than this many bytes.
LARGE_CONTEXT_BYTES = 100 * 1000 * 1000

# docker/distribution reference grammar (reference/regexp.go), tags only (no digests).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?$"
)


@dataclass
class ContextScan:
    """The build context after ``.dockerignore``.

    Attributes:
        total_bytes: bytes of every file sent.
        files: number of files.
        biggest: ``(path, bytes)`` of the largest top-level entries (directories summed),
            largest first, at most 5.
    """

    total_bytes: int
    files: int
    biggest: list[tuple[str, int]]


def valid_reference(tag: str) -> bool:
    """True when ``tag`` is a valid image reference ``[registry/]name[:tag]`` (docker's
    reference grammar: lower-case path components, tag of at most 128 ``[\\w.-]``)."""
    name = tag.rsplit(":", 1)[0] if ":" in tag.rsplit("/", 1)[-1] else tag
    return bool(_REFERENCE.match(tag)) and len(name) <= 255


def _reference_part(text: str, fallback: str) -> str:
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    out = re.sub(r"[._-]*[._-]", lambda m: "-" if len(m.group()) > 1 else m.group(), out)
    out = out.strip("._-")
    return out or fallback


def default_tag(name: str, version: str | None) -> str:
    """``<name>:<version>`` as a valid reference: lower-case, ``_`` -> ``-``; version
    characters outside ``[\\w.-]`` become ``-``; ``latest`` when the version is unknown."""
    repo = _reference_part(name.replace("_", "-"), "envkit-env")
    ver = re.sub(r"[^\w.-]", "-", version or "latest").lstrip(".-")[:128] or "latest"
    return f"{repo}:{ver}"


def scan_context(root: Path, dockerfile: str = "Dockerfile") -> ContextScan:
    """Size of the build context docker-py will send, with the same ``.dockerignore``
    semantics (``docker.utils.build.exclude_paths``, the function that makes the tar)."""
    patterns: list[str] = []
    ignore = root / ".dockerignore"
    if ignore.is_file():
        patterns = [
            ln.strip()
            for ln in ignore.read_text(encoding="utf-8", errors="replace").splitlines()
            if ln.strip() and not ln.strip().startswith("#")
        ]
    total = 0
    files = 0
    by_top: dict[str, int] = {}
    for rel in exclude_paths(str(root), patterns, dockerfile=dockerfile):
        full = root / rel
        try:
            st = full.lstat()
        except OSError:
            continue
        if not full.is_file() or full.is_symlink():
            continue
        total += st.st_size
        files += 1
        top = Path(rel).parts[0] + ("/" if len(Path(rel).parts) > 1 else "")
        by_top[top] = by_top.get(top, 0) + st.st_size
    biggest = sorted(by_top.items(), key=lambda kv: kv[1], reverse=True)[:5]
    return ContextScan(total_bytes=total, files=files, biggest=biggest)


def image_labels(
    root: Path, name: str, version: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """OCI image labels (``org.opencontainers.image.*``), ``envkit.manifest-sha256`` and
    ``envkit.env``, then ``extra`` (the caller's labels win)."""

    project = EnvDir(root).project_table
    labels = {
        "org.opencontainers.image.title": name,
        "org.opencontainers.image.created": _dt.datetime.now(_dt.UTC)
        .replace(microsecond=0)
        .isoformat()
        .replace("+00:00", "Z"),
        MANIFEST_SHA_LABEL: hashlib.sha256((root / MANIFEST_NAME).read_bytes()).hexdigest(),
        ENV_LABEL: name,
        "envkit.version": __version__,
    }
    if version:
        labels["org.opencontainers.image.version"] = version
    if isinstance(project.get("description"), str):
        labels["org.opencontainers.image.description"] = project["description"][:500]
    urls = project.get("urls") or {}
    if isinstance(urls, dict):
        lowered = {str(k).lower(): v for k, v in urls.items()}
        for key in ("source", "repository", "homepage"):
            if isinstance(lowered.get(key), str):
                labels["org.opencontainers.image.source"] = lowered[key]
                break
    labels.update(extra or {})
    return labels
