"""What one environment looks like to a policy: its schemas, reward range, reset options,
manifest and digests, read from a directory, a git revision or a running server.

Schemas of a directory come from the environment's own app, imported in the environment's
interpreter and asked ``GET /schema`` through ASGI (``_schema_probe.py``): the same code
that answers on a running server, without binding a port, polling ``/health`` or stopping a
process group. It costs one interpreter start and the app's imports (the same imports a
server start pays), and it fails the same way a server would when the environment does not
import. Importing ``models.py`` alone would be faster but would have to guess which classes
``create_app`` serves; the app knows.
"""

from __future__ import annotations

import io
import posixpath
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.digest import Digests, env_digest, schema_digest
from envkit.envdir.manifest import to_plain
from envkit.errors import UsageError, WireError
from envkit.schemas import schemas_from_path
from envkit.wire import normalise_url


@dataclass
class EnvSnapshot:
    """One side of a diff, or the facts a digest is made of.

    Attributes:
        label: what the user named (``PATH``, ``REV:PATH``, ``URL``).
        kind: ``path``, ``git`` or ``url``.
        schemas: the body of ``GET /schema`` (``action``, ``observation``, ``state``, ...).
        reward_range: ``(lo, hi)`` of the manifest; ``None`` for a URL.
        reset_options: option -> declared values (:attr:`envkit.envdir.EnvDir.reset_options`); ``None`` for a
            URL (no source to read).
        manifest: the manifest as plain data; ``None`` for a URL or an unreadable one.
        metadata: the body of ``GET /metadata`` (URLs only, else ``None``).
        env_digest: ``sha256:<64 hex>``; ``None`` for a URL.
    """

    label: str
    kind: str
    schemas: dict[str, Any]
    reward_range: tuple[float, float] | None = None
    reset_options: dict[str, list[Any]] | None = None
    manifest: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    env_digest: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def schema_digest(self) -> str:
        """The schema digest of these facts (:func:`envkit.envdir.digest.schema_digest`)."""
        return schema_digest(self.schemas, self.reward_range, self.reset_options)

    @property
    def digests(self) -> Digests:
        return Digests(env=self.env_digest, schema=self.schema_digest)


def from_path(root: Path, python: str | None = None, *, label: str | None = None) -> EnvSnapshot:
    """The snapshot of the environment directory ``root``.

    Raises:
        UsageError: ``root`` is not a directory.
        WireError: its app cannot be imported (:func:`schemas_from_path`).
    """
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory.", hint="Pass an environment directory.")
    envdir = EnvDir(root)
    try:
        digest = env_digest(envdir.root)
    except OSError as exc:
        raise UsageError(
            f"Cannot compute the environment digest of {root}: {exc}.",
            hint="Leave large or unreadable files out of the upload set (.gitignore).",
        ) from None
    doc = envdir.manifest_doc
    return EnvSnapshot(
        label=label or str(root),
        kind="path",
        schemas=schemas_from_path(envdir.root, python, memo_key=digest),
        reward_range=tuple(envdir.spec.reward_range),  # type: ignore[arg-type]
        reset_options=envdir.reset_options,
        manifest=to_plain(doc.data) if doc is not None and isinstance(doc.data, dict) else None,
        env_digest=digest,
    )


def from_url(url: str, *, timeout_s: float = 10.0) -> EnvSnapshot:
    """The snapshot of a running server: ``GET /schema`` and ``GET /metadata``.

    Raises:
        WireError: ``/schema`` does not answer 200 with a JSON object.
    """
    import httpx

    base = normalise_url(url)
    bodies: dict[str, Any] = {}
    with httpx.Client(timeout=timeout_s, trust_env=False) as client:
        for path in ("/schema", "/metadata"):
            try:
                resp = client.get(base + path)
                bodies[path] = resp.json() if resp.status_code == 200 else None
            except (httpx.HTTPError, ValueError) as exc:
                if path == "/schema":
                    raise WireError(
                        f"GET {base}/schema failed: {type(exc).__name__}: {exc}.",
                        hint="Check the server is running and the URL is right.",
                    ) from None
                bodies[path] = None
    if not isinstance(bodies["/schema"], dict):
        raise WireError(
            f"GET {base}/schema did not answer 200 with a JSON object.",
            hint="Check the URL points at an OpenEnv server (its create_app serves /schema).",
        )
    meta = bodies.get("/metadata")
    return EnvSnapshot(
        label=url,
        kind="url",
        schemas=bodies["/schema"],
        metadata=meta if isinstance(meta, dict) else None,
    )


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)


def from_git(spec: str, python: str | None = None, *, cwd: Path | None = None) -> EnvSnapshot:
    """The snapshot of the environment at a git revision: ``REV`` (the current directory at
    ``REV``) or ``REV:PATH`` (``PATH`` relative to the current directory, as for any path
    argument).

    The revision's files are extracted with ``git archive`` into a temporary directory that
    is removed afterwards; the working tree is never touched. The interpreter is the one the
    working tree's copy would use (its ``.venv``, else the current one; ``python`` wins).

    Raises:
        UsageError: not inside a git repository, ``REV`` is not a commit, or ``PATH`` does
            not exist at ``REV``.
        WireError: the revision's app cannot be imported.
    """
    here = (cwd or Path.cwd()).resolve()
    rev, _, rel = spec.partition(":")
    top = _git(["rev-parse", "--show-toplevel"], here)
    if top.returncode != 0:
        raise UsageError(
            f"{spec!r} is not a directory or a URL, and {here} is not inside a git repository.",
            hint="Pass an environment directory, an http(s) URL, or REV[:PATH] inside a repository.",
        )
    if _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], here).returncode != 0:
        raise UsageError(
            f"{spec!r} is not a directory, a URL or a git revision.",
            hint="Pass an environment directory, an http(s) URL, or REV[:PATH] (e.g. HEAD~1:.).",
        )
    repo = Path(top.stdout.decode().strip()).resolve()
    inner = posixpath.normpath(((here / (rel or ".")).resolve()).relative_to(repo).as_posix())
    archive = _git(["archive", "--format=tar", rev, "--", inner], repo)
    if archive.returncode != 0:
        raise UsageError(
            f"{inner} does not exist at {rev}.",
            hint="Check the path with `git ls-tree " + rev + " -- " + inner + "`.",
        )
    worktree = repo / inner
    interpreter = python or (
        str(worktree / ".venv" / "bin" / "python")
        if (worktree / ".venv" / "bin" / "python").is_file()
        else None
    )
    with tempfile.TemporaryDirectory(prefix="envkit-diff-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        snap = from_path(Path(tmp) / inner, interpreter, label=spec)
    snap.kind = "git"
    return snap


def load(arg: str, python: str | None = None) -> EnvSnapshot:
    """The snapshot ``arg`` names: an ``http(s)://`` URL, an existing directory, else a git
    revision (``REV`` or ``REV:PATH``).

    Raises:
        UsageError: ``arg`` is none of the three.
        WireError: the schemas cannot be read.
    """
    if arg.startswith(("http://", "https://")):
        return from_url(arg)
    path = Path(arg).expanduser()
    if path.is_dir():
        return from_path(path, python, label=arg)
    return from_git(arg, python)
