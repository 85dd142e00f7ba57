"""The two digests of an environment (docs/versions.md).

**Environment digest** (:func:`env_digest`): SHA-256 over every file of the upload set
(:func:`envkit.envdir.upload_set.upload_set`: what ``envkit push`` sends to a Space, ``.gitignore``,
``.dockerignore`` and the always-excluded paths such as ``.venv/`` and ``__pycache__/``
honoured), plus ``uv.lock`` and ``openenv.yaml`` even when an ignore file leaves them out.
Files are taken in the order of their relative POSIX paths; for each one the hash reads the
path, its size and its bytes. No mtime, owner or mode enters it, so two checkouts of the same
commit on two machines have the same digest.

**Schema digest** (:func:`schema_digest`): SHA-256 over the canonical JSON (keys sorted, no
whitespace, every ``required`` list sorted) of the ``action``, ``observation`` and ``state``
JSON Schemas that ``GET /schema`` serves, the manifest's reward range and the reset options
the environment declares. Sorting makes the digest independent of the order fields are
declared in (pydantic writes ``properties`` and ``required`` in declaration order; the order
carries no meaning on the wire, where actions and observations are JSON objects).
Descriptions and titles stay in: an LLM policy reads them in its prompt.

Both are shown as ``sha256:`` and the first 16 hex digits (:func:`short`); JSON outputs carry
the full 64.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.envdir.constants import MANIFEST_NAME
from envkit.envdir.reader import EnvDir
from envkit.envdir.upload_set import upload_set

PREFIX = "sha256:"
"""What every digest starts with (the algorithm, as OCI image digests write it)."""

SHORT_HEX = 16
"""Hex digits of the display form (64 bits: a collision between two versions of one
environment is out of reach)."""

LOCK_NAME = "uv.lock"
"""The lock file always hashed into the environment digest when present."""

SCHEMA_KEYS = ("action", "observation", "state")
"""The keys of ``GET /schema`` that enter the schema digest (0.10's ``reset_observation``
defaults to ``observation`` and is left out, so a 0.3.0 and a 0.10 server of the same
models agree)."""

_CHUNK = 1 << 20  # bytes read at a time

MAX_BYTES = 1 << 30
"""Bytes an environment digest reads at most (1 GiB): a hostile or careless tree (a 20 GB
sparse file) must not turn ``envkit validate --static`` into minutes of hashing. Above it
the digest is not computed and says why (Spaces want such files in LFS anyway)."""


class DigestLimitError(OSError):
    """The files of an environment digest hold more than :data:`MAX_BYTES`."""


def short(digest: str | None) -> str | None:
    """``sha256:`` and the first 16 hex digits of ``digest`` (``sha256:<64 hex>``) for
    display; ``None`` stays ``None``."""
    if digest is None:
        return None
    return PREFIX + digest.removeprefix(PREFIX)[:SHORT_HEX]


def digest_files(root: Path) -> list[str]:
    """The relative POSIX paths the environment digest of ``root`` reads, sorted: the upload
    set plus ``uv.lock`` and ``openenv.yaml`` when they are regular files."""
    paths = {f.path for f in upload_set(root)}
    for name in (LOCK_NAME, MANIFEST_NAME):
        try:
            if stat.S_ISREG(os.lstat(root / name).st_mode):
                paths.add(name)
        except OSError:
            continue
    return sorted(paths)


def env_digest(root: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> str:
    """The environment digest of the directory ``root``: ``sha256:<64 hex>``.

    For each path of :func:`digest_files` in order, the hash reads ``path``, a NUL byte, the
    size in bytes as decimal text, a NUL byte, then the file's bytes (the lengths make the
    framing unambiguous: a byte moved from one file to the next changes the digest).

    Raises:
        DigestLimitError: the files hold more than ``max_bytes`` bytes (nothing is read).
        OSError: a listed file cannot be read (it vanished or lost its permissions).
    """
    base = Path(root)
    files = [(rel, os.lstat(base / rel).st_size) for rel in digest_files(base)]
    total = sum(size for _, size in files)
    if total > max_bytes:
        raise DigestLimitError(
            f"its files hold {total / (1 << 30):.1f} GiB, more than the "
            f"{max_bytes / (1 << 30):g} GiB an environment digest reads"
        )
    h = hashlib.sha256()
    for rel, size in files:
        path = base / rel
        # os.fsencode: a name that is not UTF-8 (surrogate-escaped) hashes as its bytes
        h.update(os.fsencode(rel) + f"\0{size}\0".encode())
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    return PREFIX + h.hexdigest()


def _canonical(node: object) -> object:
    """``node`` with every ``required`` list of a JSON Schema sorted (recursively)."""
    if isinstance(node, dict):
        out = {k: _canonical(v) for k, v in node.items()}
        req = out.get("required")
        if isinstance(req, list) and all(isinstance(r, str) for r in req):
            out["required"] = sorted(req)
        return out
    if isinstance(node, list):
        return [_canonical(v) for v in node]
    return node


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON: keys sorted, ``required`` lists sorted, no whitespace,
    non-ASCII kept (UTF-8 when hashed)."""
    return json.dumps(
        _canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def schema_payload(
    schemas: Mapping[str, Any],
    reward_range: tuple[float, float] | list[float] | None,
    reset_options: Mapping[str, list[Any]] | None,
) -> dict[str, Any]:
    """What the schema digest hashes, as a dict (see :func:`schema_digest` for the inputs)."""
    options = {
        name: sorted(values, key=canonical_json) for name, values in (reset_options or {}).items()
    }
    return {
        **{key: schemas.get(key) for key in SCHEMA_KEYS},
        "reward_range": [float(x) for x in reward_range] if reward_range is not None else None,
        "reset_options": options,
    }


def schema_digest(
    schemas: Mapping[str, Any],
    reward_range: tuple[float, float] | list[float] | None,
    reset_options: Mapping[str, list[Any]] | None = None,
) -> str:
    """The schema digest: ``sha256:<64 hex>`` of :func:`canonical_json` of
    :func:`schema_payload`.

    Args:
        schemas: the body of ``GET /schema``: ``{"action": JSON Schema, "observation": ...,
            "state": ...}`` (other keys are ignored; a missing one hashes as ``null``).
        reward_range: ``(lo, hi)`` from the manifest (``envkit.envdir.manifest.EnvSpec``), ``None``
            when no manifest is known (a bare URL).
        reset_options: option name -> declared values (:attr:`envkit.envdir.EnvDir.reset_options`); values are
            sorted, so their order in the source does not matter. ``None`` or ``{}``: none.
    """
    text = canonical_json(schema_payload(schemas, reward_range, reset_options))
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Digests:
    """The two digests of one environment, as outputs carry them.

    Attributes:
        env: ``sha256:<64 hex>`` environment digest; ``None`` without a directory (a URL).
        schema: ``sha256:<64 hex>`` schema digest; ``None`` when ``/schema`` was not read.
        schema_note: why ``schema`` is ``None`` (``None`` when it is set or not tried).
        env_note: why ``env`` is ``None`` with a directory (too large, unreadable).
    """

    env: str | None = None
    schema: str | None = None
    schema_note: str | None = None
    env_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"env_digest", "env_digest_note", "schema_digest", "schema_digest_note"}``
        (full digests)."""
        return {
            "env_digest": self.env,
            "env_digest_note": self.env_note,
            "schema_digest": self.schema,
            "schema_digest_note": self.schema_note,
        }

    def trailers(self) -> list[str]:
        """``env-digest: sha256:<64 hex>`` and ``schema-digest: ...`` (full digests, git
        trailer form) for a Space commit's description; an unknown digest says why."""
        return [
            f"env-digest: {self.env or 'unknown (' + (self.env_note or 'no directory') + ')'}",
            f"schema-digest: {self.schema or 'unknown (' + (self.schema_note or '?') + ')'}",
        ]

    def lines(self) -> list[str]:
        """``env-digest: sha256:<16>`` and ``schema-digest: ...`` for text outputs (the
        same words a Space commit carries)."""
        return [
            f"env-digest: {short(self.env) or 'none (' + (self.env_note or 'no directory') + ')'}",
            f"schema-digest: {short(self.schema) or 'none (' + (self.schema_note or '?') + ')'}",
        ]


def digests_of(envdir: EnvDir | None, schemas: dict[str, Any] | None, why: str | None) -> Digests:
    """Both digests from what a run already has: the environment directory (``None`` for a
    bare URL) and the ``/schema`` body it read (``None``: not read, ``why`` says why). The
    reward range and reset options come from ``envdir`` (none without one). Never raises."""
    digest = env_note = None
    root = envdir.root if envdir is not None else None
    if root is not None:
        try:
            digest = env_digest(root)
        except OSError as exc:
            env_note = f"cannot read the environment: {exc}"
    if schemas is None:
        return Digests(digest, None, why or "GET /schema was not read", env_note)
    reward_range = envdir.spec.reward_range if envdir is not None else None
    reset = envdir.reset_options if envdir is not None else None
    return Digests(digest, schema_digest(schemas, reward_range, reset), None, env_note)
