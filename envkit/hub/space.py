"""The Space as the Hub reports it: the client, the hardware flavours, the tree (git blob ids)
and whether the Hub answers at all. ``huggingface_hub`` is imported inside the functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envkit._version import __version__
from envkit.envdir.upload_set import UploadFile
from envkit.errors import UsageError
from envkit.hub.auth import Credentials
from envkit.hub.errors import call_hub, is_network_error

if TYPE_CHECKING:
    from huggingface_hub import HfApi, SpaceInfo

KEEP_REMOTE = frozenset({".gitattributes"})  # created by the Hub, not part of an environment


def hub_api(endpoint: str, creds: Credentials | None) -> HfApi:
    """The Hub client for ``endpoint``: with ``creds``' token, else with none (``token=False``
    stops the client from falling back on a saved token)."""
    from huggingface_hub import HfApi

    return HfApi(
        endpoint=endpoint,
        token=creds.token if creds else False,
        library_name="envkit",
        library_version=__version__,
    )


def check_hardware(hardware: str | None) -> None:
    """Check a Space hardware flavour name (``None``: nothing asked).

    Raises:
        UsageError: not one of huggingface_hub's ``SpaceHardware`` values.
    """
    if hardware is None:
        return
    from huggingface_hub import SpaceHardware

    flavours = [h.value for h in SpaceHardware]
    if hardware not in flavours:
        raise UsageError(
            f"--hardware {hardware}: unknown Space hardware flavour.",
            hint=f"Use one of: {', '.join(flavours)}.",
        )


def git_oids(folder: Path, files: list[UploadFile]) -> dict[str, str]:
    """``{path: git blob sha1}`` of ``files`` under ``folder``, as the Hub's tree lists them."""
    from huggingface_hub.utils.sha import git_hash

    return {f.path: git_hash((folder / f.path).read_bytes()) for f in files}


@dataclass(frozen=True)
class RemoteSpace:
    """A Space as the Hub reports it before the push.

    Attributes:
        info: huggingface_hub's ``SpaceInfo`` (``sha``, ``private``, ``runtime``, ``host``).
        files: ``{path: git blob oid}`` of the Space's tree at ``info.sha``.
    """

    info: SpaceInfo
    files: Mapping[str, str]


def remote_state(api: HfApi, repo_id: str, endpoint: str) -> RemoteSpace | None:
    """The Space's info and tree, or ``None`` when the Space does not exist."""
    from huggingface_hub.errors import RepositoryNotFoundError

    def info() -> SpaceInfo | None:
        try:
            return api.space_info(repo_id)
        except RepositoryNotFoundError:
            return None

    space = call_hub(info, action="read the Space", repo_id=repo_id, endpoint=endpoint)
    if space is None:
        return None
    tree = call_hub(
        lambda: list(
            api.list_repo_tree(repo_id, repo_type="space", recursive=True, revision=space.sha)
        ),
        action="list the Space's files",
        repo_id=repo_id,
        endpoint=endpoint,
    )
    return RemoteSpace(space, {e.path: e.blob_id for e in tree if hasattr(e, "blob_id")})


# A dry run with a token first checks that the Hub answers at all, within this many seconds:
# the Hub client itself has no timeout (huggingface_hub's default client: timeout=None).
HUB_PROBE_TIMEOUT_S = 3.0


def hub_unreachable(endpoint: str, timeout_s: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """Whether the Hub at ``endpoint`` answers one HTTP request within ``timeout_s``.

    One ``HEAD {endpoint}/api/whoami-v2`` through huggingface_hub's own HTTP session (its
    proxy and certificate settings); any HTTP status counts as an answer.

    Args:
        endpoint: the Hub URL, e.g. ``https://huggingface.co``.
        timeout_s: seconds for the connection and for the answer.

    Returns:
        ``None`` when it answered, else one line saying why not (the client's error type).
    """
    from huggingface_hub.utils import get_session

    try:
        get_session().head(
            endpoint.rstrip("/") + "/api/whoami-v2", timeout=timeout_s, follow_redirects=False
        )
    except Exception as exc:  # noqa: BLE001 - only network errors count; others: reachable
        if is_network_error(exc):
            return (
                f"Cannot reach the Hugging Face Hub at {endpoint} within {timeout_s:g} s: "
                f"{type(exc).__name__}."
            )
    return None
