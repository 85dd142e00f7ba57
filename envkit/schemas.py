"""The ``/schema`` answers of an environment: asked of a running server over HTTP, or of its
app imported in the environment's own interpreter (no server started), and the two digests
outputs stamp from them.

The app is imported by :mod:`envkit.programs.schema_probe`, run in the environment's
interpreter with the launch candidate's environment and working directory: the same
``create_app`` the server would serve answers, so the schemas are exactly what a client reads.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx

from envkit import programs
from envkit.envdir import EnvDir
from envkit.envdir.digest import Digests, env_digest, schema_digest
from envkit.envdir.launch import LaunchCandidate
from envkit.envdir.project import resolve_python
from envkit.errors import EnvkitError, WireError
from envkit.server import bytecode_env
from envkit.wire import normalise_url, tls

DEFAULT_IMPORT_TIMEOUT_S = 60.0
"""Seconds the app gets to import when the manifest declares no ``startup_timeout_s``."""


_MEMO: dict[tuple[Any, ...], dict[str, Any]] = {}  # (env digest, python, app) -> /schema body


def _probe_once(
    candidate: LaunchCandidate, python: str, timeout_s: float
) -> tuple[dict | None, str]:
    """Run the probe for one launch candidate: ``(answers, "")`` or ``(None, why)``."""
    env = candidate.merged_env(os.environ)
    env.update(bytecode_env(env))  # no __pycache__ in the user's tree, nor a compile each time
    try:
        proc = subprocess.run(
            [python, "-c", programs.source("schema_probe"), candidate.app, "/schema"],
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


def schemas_from_path(
    root: Path, python: str | None = None, *, memo_key: str | None = None
) -> dict[str, Any]:
    """``GET /schema`` of the environment at ``root``, asked of its app in-process.

    Tries the ways the server would start (:meth:`envkit.envdir.EnvDir.launch_candidates`,
    the ones that name an app) in order; the first that answers 200 wins.

    Args:
        root: the environment directory.
        python: its interpreter (default :func:`envkit.envdir.project.resolve_python`).
        memo_key: a key (e.g. the environment digest) under which the answer is remembered
            for this process: the same files in the same interpreter give the same schemas.

    Raises:
        WireError: no way of importing the app answered (the last reason in the message).
    """

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


def schemas_from_url(url: str, *, timeout_s: float = 10.0) -> dict[str, Any] | None:
    """The body of ``GET URL/schema`` when it is a JSON object, else ``None`` (never raises:
    a server that does not answer is the runtime findings' business)."""

    try:
        with httpx.Client(timeout=timeout_s, trust_env=False, verify=tls()) as client:
            resp = client.get(normalise_url(url) + "/schema")
        body = resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def path_digests(root: Path, python: str | None = None) -> Digests:
    """Both digests of the directory ``root`` for outputs that stamp them (eval, label,
    push): never raises; a schema that cannot be read leaves ``schema`` ``None`` with a note.
    The schemas are remembered per environment digest for the process."""

    envdir = EnvDir(root)
    try:
        digest = env_digest(envdir.root)
    except OSError as exc:
        note = f"cannot read the environment: {exc}"
        return Digests(env_note=note, schema_note=note)
    try:
        schemas = schemas_from_path(envdir.root, python, memo_key=digest)
        value = schema_digest(schemas, envdir.spec.reward_range, envdir.reset_options)
    except EnvkitError as exc:
        return Digests(env=digest, schema_note=exc.message)
    return Digests(env=digest, schema=value)
