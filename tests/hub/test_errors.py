"""`envkit.hub.errors`: each Hub status becomes its envkit error class, with a message that
names the status and a hint with the next step.

The failures are the real objects the client raises: ``huggingface_hub``'s
``hf_raise_for_status`` applied to real ``httpx2.Response`` objects (the HTTP stack of
huggingface_hub 2.x), and real ``httpx2`` connection errors.
"""

from __future__ import annotations

import httpx2
import pytest

from envkit.errors import EnvkitError, ExitCode, HubAuthError, HubError, PushBlockedError
from envkit.hub.errors import (
    TOKENS_URL,
    HubNetworkError,
    Retry,
    call_hub,
    is_network_error,
    map_hub_error,
)

ENDPOINT = "https://hub.test"
REPO = "alice/echo-env"


def hub_failure(status: int, message: str = "", headers: dict[str, str] | None = None):
    """What huggingface_hub raises for a response with ``status`` (and ``X-Error-Message``)."""
    from huggingface_hub.utils import hf_raise_for_status

    all_headers = dict(headers or {})
    if message:
        all_headers["X-Error-Message"] = message
    response = httpx2.Response(
        status,
        headers=all_headers,
        request=httpx2.Request("POST", f"{ENDPOINT}/api/repos/create"),
    )
    try:
        hf_raise_for_status(response)
    except Exception as exc:  # noqa: BLE001 - the client's own error is the point
        return exc
    raise AssertionError(f"hf_raise_for_status accepted {status}")


def mapped(exc: BaseException, attempts: int = 1) -> EnvkitError:
    return map_hub_error(
        exc, action="create the Space", repo_id=REPO, endpoint=ENDPOINT, attempts=attempts
    )


def test_401_is_an_auth_error_naming_the_token_page():
    err = mapped(hub_failure(401, "Invalid credentials in Authorization header"))
    assert type(err) is HubAuthError
    assert "401 Unauthorized" in err.message
    assert "create the Space" in err.message
    assert TOKENS_URL in err.hint
    assert "HF_TOKEN" in err.hint and "hf auth login" in err.hint
    assert err.exit_code == ExitCode.ERROR


def test_402_names_the_paid_plan_and_the_namespace():
    err = mapped(hub_failure(402, "Docker Spaces need a subscription"))
    assert type(err) is HubError
    assert "`alice`" in err.message and "402 Payment Required" in err.message
    # The Hub's own reason is kept, in parentheses.
    assert "(Docker Spaces need a subscription)" in err.message
    assert "--repo-id NS/NAME" in err.hint and "billing" in err.hint


def test_403_is_an_auth_error_about_write_access():
    err = mapped(
        hub_failure(403, "You don't have the rights to create a space under this namespace")
    )
    assert type(err) is HubAuthError
    assert "cannot write to `alice`" in err.message and "403 Forbidden" in err.message
    assert "write role" in err.hint and "--repo-id YOU/NAME" in err.hint


def test_404_names_the_space():
    exc = hub_failure(404, headers={"X-Error-Code": "RepoNotFound"})
    from huggingface_hub.errors import RepositoryNotFoundError

    assert isinstance(exc, RepositoryNotFoundError)  # the client's own subclass
    err = mapped(exc)
    assert type(err) is HubError
    assert f"Space `{REPO}` was not found (404)" in err.message
    assert "Check the repo id" in err.hint


@pytest.mark.parametrize("status", [409, 412])
def test_conflicts_say_nothing_was_half_written(status):
    err = mapped(hub_failure(status, "A commit has happened since"))
    assert type(err) is HubError
    assert f"conflict ({status})" in err.message
    assert "(A commit has happened since)" in err.message
    assert err.hint == "Nothing was half-written; re-run the command."


def test_429_reports_the_attempts_and_says_wait():
    err = mapped(hub_failure(429), attempts=4)
    assert type(err) is HubError
    assert "429 Too Many Requests" in err.message and "4 attempt(s)" in err.message
    assert "Wait a few minutes" in err.hint


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_points_at_the_status_page(status):
    err = mapped(hub_failure(status), attempts=3)
    assert type(err) is HubError
    assert f"failed with {status}" in err.message and "3 attempt(s)" in err.message
    assert "status.huggingface.co" in err.hint
    assert "previous version" in err.hint


def test_other_status_is_a_generic_refusal():
    err = mapped(hub_failure(418, "teapot"))
    assert type(err) is HubError
    assert err.message == "The Hub refused to create the Space: 418 (teapot)."
    assert "ENVKIT_DEBUG=1" in err.hint


def test_json_error_body_is_the_reason_when_there_is_no_header():
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.utils import hf_raise_for_status

    response = httpx2.Response(
        409,
        json={"error": "Space is   being\nbuilt"},
        request=httpx2.Request("POST", f"{ENDPOINT}/api/spaces/{REPO}/commit/main"),
    )
    with pytest.raises(HfHubHTTPError) as info:
        hf_raise_for_status(response)
    err = mapped(info.value)
    # White space is collapsed to single spaces.
    assert "(Space is being built)" in err.message


def test_unreachable_hub_is_a_network_error():
    exc = httpx2.ConnectError("[Errno 111] Connection refused")
    assert is_network_error(exc)
    err = mapped(exc)
    assert type(err) is HubNetworkError and isinstance(err, HubError)
    assert f"Cannot reach the Hugging Face Hub at {ENDPOINT}" in err.message
    assert "ConnectError" in err.message
    assert "HF_ENDPOINT" in err.hint


def test_other_client_failure_asks_for_the_traceback():
    err = mapped(ValueError("unexpected shape"))
    assert type(err) is HubError and not isinstance(err, HubNetworkError)
    assert "ValueError: unexpected shape" in err.message
    assert "ENVKIT_DEBUG=1" in err.hint


def test_messages_never_contain_the_token():
    """The request that failed carried the token; no message or hint repeats it."""
    from huggingface_hub.utils import hf_raise_for_status

    token = "hf_" + "x" * 34
    for status in (401, 402, 403, 404, 409, 429, 500, 418):
        request = httpx2.Request(
            "POST", f"{ENDPOINT}/api/repos/create", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            hf_raise_for_status(httpx2.Response(status, request=request))
        except Exception as exc:  # noqa: BLE001 - the client's own error is the point
            err = mapped(exc)
        assert token not in err.message and token not in (err.hint or ""), status


def test_call_hub_retries_429_honouring_retry_after_then_succeeds():
    slept: list[float] = []
    failures = [hub_failure(429, headers={"Retry-After": "7"}), hub_failure(503)]

    def fn() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    out = call_hub(
        fn,
        action="commit",
        repo_id=REPO,
        endpoint=ENDPOINT,
        retry=Retry(sleep=slept.append, base_delay_s=1.0),
    )
    assert out == "ok"
    assert slept == [7.0, 2.0]  # Retry-After, then the doubled backoff


def test_call_hub_gives_up_after_the_attempts_and_maps_the_last_failure():
    slept: list[float] = []
    calls = 0

    def fn() -> None:
        nonlocal calls
        calls += 1
        raise hub_failure(502)

    with pytest.raises(HubError) as info:
        call_hub(
            fn,
            action="commit",
            repo_id=REPO,
            endpoint=ENDPOINT,
            retry=Retry(attempts=3, sleep=slept.append),
        )
    assert calls == 3
    assert slept == [1.0, 2.0]
    assert "3 attempt(s)" in info.value.message
    assert isinstance(info.value.__cause__, Exception)


def test_call_hub_does_not_retry_a_401_and_uses_overrides():
    calls = 0

    def fn() -> None:
        nonlocal calls
        calls += 1
        raise hub_failure(409)

    override = HubError("`alice/copy` already exists (409 Conflict).", hint="Pick another.")
    with pytest.raises(HubError) as info:
        call_hub(fn, action="fork", repo_id=REPO, endpoint=ENDPOINT, overrides={409: override})
    assert info.value is override
    assert calls == 1

    def unauthorized() -> None:
        raise hub_failure(401)

    with pytest.raises(HubAuthError):
        call_hub(
            unauthorized,
            action="x",
            repo_id=REPO,
            endpoint=ENDPOINT,
            retry=Retry(sleep=pytest.fail),
        )


def test_push_blocked_error_keeps_its_old_import_path_and_exits_1():
    from envkit.hub.errors import PushBlockedError as Old

    assert Old is PushBlockedError
    assert issubclass(PushBlockedError, HubError)
    assert PushBlockedError("x").exit_code == ExitCode.FINDINGS
