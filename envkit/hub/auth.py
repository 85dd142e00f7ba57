"""Which Hub, which token, which repo id.

Token order: the ``token`` argument (``--token``), else ``HF_TOKEN``, else the token
saved by ``hf auth login`` (``huggingface_hub.get_token()``). envkit never prompts for a token:
a missing one is an error that names both ways to fix it. Tokens are never printed, logged or
put in an exception message.

The endpoint is ``HF_ENDPOINT`` read at call time (the client itself reads it once, at import),
so a test or a user can point envkit at another Hub per run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from envkit.errors import HubAuthError, UsageError
from envkit.names import normalise_name

DEFAULT_ENDPOINT = "https://huggingface.co"
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class Credentials:
    """A token and where it came from (``--token``, ``HF_TOKEN``, ``saved``). ``repr`` hides it."""

    token: str
    source: str

    def __repr__(self) -> str:
        return f"Credentials(token=<hidden>, source={self.source!r})"


def hub_endpoint() -> str:
    """``HF_ENDPOINT`` without a trailing slash, default ``https://huggingface.co``."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def resolve_token(token: str | None = None) -> Credentials:
    """The token to use.

    Raises:
        HubAuthError: no token anywhere ("Not logged in"), with both fixes in the hint.
    """
    if token:
        return Credentials(token.strip(), "--token")
    env = os.environ.get("HF_TOKEN", "").strip()
    if env:
        return Credentials(env, "HF_TOKEN")
    from huggingface_hub import get_token

    saved = get_token()
    if saved:
        return Credentials(saved, "saved")
    raise HubAuthError(
        "Not logged in to Hugging Face: no --token, no HF_TOKEN and no saved token.",
        hint="Run `hf auth login` (saves a token), or pass a write token with --token / the "
        "HF_TOKEN environment variable (https://huggingface.co/settings/tokens).",
    )


def check_repo_id(repo_id: str) -> str:
    """Validate ``NS/NAME`` before any network call (Hub rules: letters, digits, ``-``, ``_``,
    ``.``; no ``--`` or ``..``; at most 96 characters for the name).

    Raises:
        UsageError: the id is malformed.
    """
    parts = repo_id.strip().split("/")
    bad = len(parts) != 2 or not all(_NAME.fullmatch(p) for p in parts)
    if not bad:
        bad = any("--" in p or ".." in p for p in parts) or len(parts[1]) > 96
    if bad:
        raise UsageError(
            f"`{repo_id}` is not a valid Space id.",
            hint="Use NAMESPACE/NAME with letters, digits, `-`, `_` or `.` (no `--` or `..`), "
            "e.g. --repo-id alice/my-env.",
        )
    return "/".join(parts)


def space_name(manifest_name: str) -> str:
    """The manifest ``name`` in kebab-case, e.g. ``echo_env`` -> ``echo-env``."""
    try:
        return normalise_name(manifest_name).space
    except UsageError:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", manifest_name).strip("-").lower()
        return slug or "openenv-env"


def space_urls(repo_id: str, endpoint: str, host: str | None = None) -> tuple[str, str]:
    """``(space_url, app_url)`` of a Space.

    The app URL is the ``host`` the Hub reports for the Space (``GET /api/spaces/{id}``) when
    given; otherwise it is derived as on huggingface.co: ``https://<ns>-<name>.hf.space``,
    lower-case, ``_`` and ``.`` becoming ``-`` (docs/protocol.md). A Hub stand-in reports
    its own ``host`` so ``--wait`` can reach a local app.
    """
    sub = re.sub(r"[_.]", "-", repo_id.replace("/", "-").lower())
    return f"{endpoint}/spaces/{repo_id}", (host or f"https://{sub}.hf.space").rstrip("/")
