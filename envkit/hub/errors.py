"""Hub failures as envkit errors: one-line cause, next step, exit code; bounded retries.

Statuses (docs/protocol.md): 401 bad token, 402 paid plan needed for Docker
Spaces, 403 no write access to the namespace, 404 missing Space, 409/412 conflict, 429 rate
limit (retried with backoff, ``Retry-After`` honoured), 5xx (retried, then fail), network
unreachable. Messages never contain a token: they are built from the status, the repo id and
the endpoint only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from envkit.errors import (
    EnvkitError,
    HubAuthError,
    HubError,
    PushBlockedError,  # noqa: F401 - its former import path
)

T = TypeVar("T")

TOKENS_URL = "https://huggingface.co/settings/tokens"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class HubNetworkError(HubError):
    """The Hub could not be reached (DNS, refused connection, TLS, timeout)."""


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _server_message(exc: BaseException) -> str:
    """The Hub's own short reason (``X-Error-Message`` or JSON ``error``), if any."""
    response = getattr(exc, "response", None)
    if response is None:
        return ""
    msg = response.headers.get("X-Error-Message", "")
    if not msg:
        try:
            body = response.json()
            msg = body.get("error", "") if isinstance(body, dict) else ""
        except Exception:  # noqa: BLE001 - not JSON
            msg = ""
    msg = " ".join(str(msg).split())
    return msg[:200]


def is_network_error(exc: BaseException) -> bool:
    """True for connection-level failures of the client's HTTP stack (httpx2/httpx/OSError)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names
        & {
            "ConnectError",
            "ConnectTimeout",
            "NetworkError",
            "TimeoutException",
            "RemoteProtocolError",
            "ReadTimeout",
            "ReadError",
            "WriteError",
            "ConnectionError",
            "OfflineModeIsEnabled",
        }
    ) or isinstance(exc, OSError)


def map_hub_error(
    exc: BaseException, *, action: str, repo_id: str | None, endpoint: str, attempts: int = 1
) -> EnvkitError:
    """Turn an exception raised by ``huggingface_hub`` into an envkit error.

    Args:
        exc: what the client raised (``HfHubHTTPError`` subclasses, httpx2 errors, ...).
        action: what was being done, e.g. ``"create the Space"``.
        repo_id: ``ns/name`` concerned, if any.
        endpoint: the Hub URL (never contains a token).
        attempts: how many times the call was tried (for 429/5xx messages).

    Returns:
        A :class:`HubAuthError` (401), :class:`HubNetworkError` (unreachable) or
        :class:`HubError`; every one exits 2 and ends with the next step.
    """
    status = _status(exc)
    if status is None:
        if is_network_error(exc):
            return HubNetworkError(
                f"Cannot reach the Hugging Face Hub at {endpoint} to {action}: "
                f"{type(exc).__name__}.",
                hint="Check your network connection (and HF_ENDPOINT if you set it), then re-run.",
            )
        return HubError(
            f"The Hub client failed to {action}: {type(exc).__name__}: {exc}",
            hint="Re-run with ENVKIT_DEBUG=1 for the traceback and report it if it persists.",
        )
    reason = _server_message(exc)
    return _status_error(
        status,
        action=action,
        repo_id=repo_id,
        why=f" ({reason})" if reason else "",
        attempts=attempts,
    )


def _status_error(
    status: int, *, action: str, repo_id: str | None, why: str, attempts: int
) -> EnvkitError:
    """The error for an HTTP ``status`` (see :func:`map_hub_error`); ``why`` is the Hub's own
    reason as `` (reason)`` or ``""``."""
    ns = repo_id.split("/")[0] if repo_id else "the namespace"
    if status == 401:
        return HubAuthError(
            f"The Hub rejected the token (401 Unauthorized) when trying to {action}.",
            hint=f"Create a token with write access at {TOKENS_URL} and pass it with --token or "
            "HF_TOKEN, or run `hf auth login`.",
        )
    if status == 402:
        return HubError(
            f"Creating a Docker Space under `{ns}` needs a paid plan (402 Payment Required){why}.",
            hint="Subscribe to PRO (users) or Team/Enterprise (organisations), or add billing at "
            "https://huggingface.co/settings/billing; or push to a namespace that has one with "
            "--repo-id NS/NAME.",
        )
    if status == 403:
        return HubAuthError(
            f"Your token cannot write to `{ns}` (403 Forbidden) when trying to {action}{why}.",
            hint=f"Use a token with the write role (or a fine-grained token with write access to "
            f"`{ns}`) from {TOKENS_URL}, or push to your own namespace with --repo-id YOU/NAME.",
        )
    if status == 404:
        return HubError(
            f"Space `{repo_id}` was not found (404) when trying to {action}.",
            hint="Check the repo id (NS/NAME) and that your token can see it; private Spaces "
            "look missing to other accounts.",
        )
    if status in (409, 412):
        return HubError(
            f"The Hub reported a conflict ({status}) when trying to {action}{why}: the Space "
            "changed meanwhile or another operation is in progress.",
            hint="Nothing was half-written; re-run the command.",
        )
    if status == 429:
        return HubError(
            f"The Hub rate-limited envkit (429 Too Many Requests) when trying to {action}, "
            f"{attempts} attempt(s).",
            hint="Wait a few minutes, then re-run the command.",
        )
    if status >= 500:
        return HubError(
            f"The Hub failed with {status} when trying to {action}, {attempts} attempt(s).",
            hint="The Hub may be degraded (https://status.huggingface.co); re-run later. "
            "A push is one commit, so the Space is still at its previous version.",
        )
    return HubError(
        f"The Hub refused to {action}: {status}{why}.",
        hint="Re-run with ENVKIT_DEBUG=1 to see the full response.",
    )


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Retry:
    """How :func:`call_hub` retries 429 and 5xx.

    Attributes:
        attempts: total tries, >= 1.
        base_delay_s: first backoff, seconds; doubles after each try.
        max_delay_s: cap of one wait, seconds (``Retry-After`` included).
        sleep: called with the seconds to wait (tests pass a recorder).
    """

    attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    sleep: Callable[[float], None] = time.sleep


def call_hub(
    fn: Callable[[], T],
    *,
    action: str,
    repo_id: str | None,
    endpoint: str,
    retry: Retry = Retry(),
    overrides: Mapping[int, EnvkitError] | None = None,
) -> T:
    """Call ``fn`` (one Hub call), retrying 429 and 5xx with exponential backoff.

    ``Retry-After`` (seconds) is honoured, capped at ``max_delay_s``. Other failures are mapped
    at once with :func:`map_hub_error`.

    Args:
        fn: a no-argument callable making the request.
        action: for messages, e.g. ``"set variables"``.
        repo_id: ``ns/name`` concerned, if any (for messages).
        endpoint: the Hub URL (for messages).
        retry: attempts and backoff (default: 4 tries, 1 s doubling up to 30 s).
        overrides: status -> the error to raise instead of the generic mapping (e.g. 409 on
            fork means "the destination exists").

    Raises:
        EnvkitError: the mapped failure.
    """
    delay = retry.base_delay_s
    for attempt in range(1, retry.attempts + 1):
        try:
            return fn()
        except EnvkitError:
            raise
        except Exception as exc:  # noqa: BLE001 - mapped below
            status = _status(exc)
            if status in RETRY_STATUSES and attempt < retry.attempts:
                wait = _retry_after(exc)
                retry.sleep(min(retry.max_delay_s, delay if wait is None else wait))
                delay = min(retry.max_delay_s, delay * 2)
                continue
            if overrides and status in overrides:
                raise overrides[status] from exc
            raise map_hub_error(
                exc, action=action, repo_id=repo_id, endpoint=endpoint, attempts=attempt
            ) from exc
    raise AssertionError("unreachable")  # pragma: no cover
