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

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.versions.digest import Digests, env_digest, reset_options_of, schema_digest

PROBE_SOURCE = Path(__file__).with_name("_schema_probe.py")
"""The script run in the environment's interpreter (standard library only)."""

DEFAULT_IMPORT_TIMEOUT_S = 60.0
"""Seconds the app gets to import when the manifest declares no ``startup_timeout_s``."""

_MEMO: dict[tuple[Any, ...], dict[str, Any]] = {}  # (env digest, python, app) -> /schema body


@dataclass
class EnvSnapshot:
    """One side of a diff, or the facts a digest is made of.

    Attributes:
        label: what the user named (``PATH``, ``REV:PATH``, ``URL``).
        kind: ``path``, ``git`` or ``url``.
        schemas: the body of ``GET /schema`` (``action``, ``observation``, ``state``, ...).
        reward_range: ``(lo, hi)`` of the manifest; ``None`` for a URL.
        reset_options: option -> declared values (:func:`reset_options_of`); ``None`` for a
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
        """The schema digest of these facts (:func:`envkit.versions.digest.schema_digest`)."""
        return schema_digest(self.schemas, self.reward_range, self.reset_options)

    @property
    def digests(self) -> Digests:
        return Digests(env=self.env_digest, schema=self.schema_digest)


def _probe_once(candidate: Any, python: str, timeout_s: float) -> tuple[dict | None, str]:
    """Run the probe for one launch candidate: ``(answers, "")`` or ``(None, why)``."""
    env = candidate.merged_env(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no __pycache__ in the user's tree
    try:
        proc = subprocess.run(
            [python, "-c", PROBE_SOURCE.read_text(), candidate.app, "/schema"],
            cwd=candidate.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return None, f"importing {candidate.app} took more than {timeout_s:g} s"
    except OSError as exc:
        return None, f"cannot run {python}: {exc.strerror or exc}"
    if proc.returncode != 0:
        tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return None, f"importing {candidate.app} failed: {tail[-1] if tail else proc.returncode}"
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, f"{candidate.app} gave no answer the probe could read"


def schemas_from_path(root: Path, python: str | None = None, *, memo_key: Any = None) -> dict:
    """``GET /schema`` of the environment at ``root``, asked of its app in-process.

    Tries the ways the server would start (:meth:`envkit.envdir.EnvDir.launch_candidates`,
    the ones that name an app) in order; the first that answers 200 wins.

    Args:
        root: the environment directory.
        python: its interpreter (default :func:`envkit.project.resolve_python`).
        memo_key: a key (e.g. the environment digest) under which the answer is remembered
            for this process: the same files in the same interpreter give the same schemas.

    Raises:
        WireError: no way of importing the app answered (the last reason in the message).
    """
    from envkit.envdir import EnvDir
    from envkit.errors import WireError
    from envkit.project import resolve_python

    envdir = EnvDir(root)
    interpreter = resolve_python(envdir.root, python)
    candidates = [c for c in envdir.launch_candidates() if c.app]
    # the files (memo_key: their digest) decide the candidates; their folder does not
    key = (memo_key, interpreter, tuple((c.kind, c.app) for c in candidates))
    if memo_key is not None and key in _MEMO:
        return _MEMO[key]
    spec = envdir.spec
    timeout_s = spec.startup_timeout_s or DEFAULT_IMPORT_TIMEOUT_S
    why = "no app to import (no manifest app, no server/app.py)"
    for cand in candidates:
        answers, why = _probe_once(cand, interpreter, timeout_s)
        got = (answers or {}).get("/schema") or {}
        if got.get("status") == 200:
            try:
                body = json.loads(got["body"])
            except ValueError:
                why = f"{cand.app}'s /schema is not JSON"
                continue
            if isinstance(body, dict):
                if memo_key is not None:
                    _MEMO[key] = body
                return body
        elif answers is not None:
            why = f"{cand.app} answered GET /schema with {got.get('status')}"
    raise WireError(
        f"Cannot read the schemas of {root}: {why}.",
        hint=f"Check that `{interpreter}` can import the environment (install it with "
        f"`uv pip install --python {interpreter} -e {root}`), or pass --python.",
    )


def from_path(root: Path, python: str | None = None, *, label: str | None = None) -> EnvSnapshot:
    """The snapshot of the environment directory ``root``.

    Raises:
        UsageError: ``root`` is not a directory.
        WireError: its app cannot be imported (:func:`schemas_from_path`).
    """
    from envkit.envdir import EnvDir
    from envkit.errors import UsageError
    from envkit.manifest import to_plain

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
        reset_options=reset_options_of(envdir.root),
        manifest=to_plain(doc.data) if doc is not None and isinstance(doc.data, dict) else None,
        env_digest=digest,
    )


def from_url(url: str, *, timeout_s: float = 10.0) -> EnvSnapshot:
    """The snapshot of a running server: ``GET /schema`` and ``GET /metadata``.

    Raises:
        WireError: ``/schema`` does not answer 200 with a JSON object.
    """
    import httpx

    from envkit.errors import WireError
    from envkit.wire import normalise_url

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


def schemas_from_url(url: str, *, timeout_s: float = 10.0) -> dict[str, Any] | None:
    """The body of ``GET URL/schema`` when it is a JSON object, else ``None`` (never raises:
    a server that does not answer is the runtime findings' business)."""
    import httpx

    from envkit.wire import normalise_url

    try:
        with httpx.Client(timeout=timeout_s, trust_env=False) as client:
            resp = client.get(normalise_url(url) + "/schema")
        body = resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def digests_of(root: Path | None, schemas: dict[str, Any] | None, why: str | None) -> Digests:
    """Both digests from what a run already has: the environment directory (``None`` for a
    bare URL) and the ``/schema`` body it read (``None``: not read, ``why`` says why). The
    reward range and reset options come from ``root`` (none without one). Never raises."""
    from envkit.envdir import EnvDir

    digest = env_note = None
    if root is not None:
        try:
            digest = env_digest(root)
        except OSError as exc:
            env_note = f"cannot read the environment: {exc}"
    if schemas is None:
        return Digests(digest, None, why or "GET /schema was not read", env_note)
    reward_range = EnvDir(root).spec.reward_range if root is not None else None
    reset = reset_options_of(root) if root is not None else None
    return Digests(digest, schema_digest(schemas, reward_range, reset), None, env_note)


def path_digests(root: Path, python: str | None = None) -> Digests:
    """Both digests of the directory ``root`` for outputs that stamp them (eval, label,
    push): never raises; a schema that cannot be read leaves ``schema`` ``None`` with a note.
    The schemas are remembered per environment digest for the process."""
    from envkit.envdir import EnvDir
    from envkit.errors import EnvkitError

    envdir = EnvDir(root)
    try:
        digest = env_digest(envdir.root)
    except OSError as exc:
        note = f"cannot read the environment: {exc}"
        return Digests(env_note=note, schema_note=note)
    try:
        schemas = schemas_from_path(envdir.root, python, memo_key=digest)
        value = schema_digest(schemas, envdir.spec.reward_range, reset_options_of(envdir.root))
    except EnvkitError as exc:
        return Digests(env=digest, schema_note=exc.message)
    return Digests(env=digest, schema=value)


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
    import io
    import posixpath
    import tarfile
    import tempfile

    from envkit.errors import UsageError

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
