"""After the commit: wait for the Space to run, then check the deployed app."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.hub.errors import call_hub
from envkit.hub.preflight import finding_line
from envkit.hub.results import AppCheck, Progress, PushResult
from envkit.validation import validate
from envkit.wire import get_health

if TYPE_CHECKING:
    from huggingface_hub import HfApi

ERROR_STAGES = frozenset(
    {"BUILD_ERROR", "RUNTIME_ERROR", "CONFIG_ERROR", "NO_APP_FILE", "DELETING", "STOPPED", "PAUSED"}
)


def wait_for_space(
    api: HfApi, result: PushResult, root: Path, endpoint: str, timeout_s: float, say: Progress
) -> None:
    """Poll the Space's runtime (every 1 s, growing to 10 s) until RUNNING, an error stage or
    ``timeout_s`` seconds, then, when RUNNING, check the app (:func:`check_app`).

    Sets ``result.runtime_stage`` (``TIMEOUT (STAGE after N s)`` on a timeout) and
    ``result.app_check``.

    Raises:
        HubAuthError, HubError: reading the runtime failed.
    """
    repo_id = result.repo_id
    start = time.monotonic()
    interval = 1.0
    stage = None
    while True:
        rt = call_hub(
            lambda: api.get_space_runtime(repo_id),
            action="read the Space's status",
            repo_id=repo_id,
            endpoint=endpoint,
        )
        stage = str(rt.stage)
        elapsed = time.monotonic() - start
        say(f"Space {stage.lower().replace('_', ' ')} ({elapsed:.0f} s)…")
        if stage == "RUNNING" or stage in ERROR_STAGES:
            break
        if elapsed >= timeout_s:
            stage = f"TIMEOUT ({stage} after {timeout_s:.0f} s)"
            break
        time.sleep(min(interval, max(0.0, timeout_s - elapsed)))
        interval = min(10.0, interval * 1.5)
    result.runtime_stage = stage
    if stage != "RUNNING":
        return
    say(f"Checking the app at {result.app_url}…")
    result.app_check = check_app(result.app_url, root)


def check_app(url: str, root: Path | None = None, *, timeout_s: float = 60.0) -> AppCheck:
    """Check a deployed app.

    First ``GET /health`` must answer ``{"status": "healthy"}`` (retried up to ``timeout_s``
    seconds: a Space can report RUNNING a moment before its router forwards requests); then,
    when ``envkit.validation`` is available, its runtime rules (EK4xx protocol, EK5xx reward)
    run against ``url`` with ``root``'s manifest (reward range, max_steps, oracle).
    """
    health = _check_health(url, timeout_s)
    if not health.ok:
        return health
    # An exception here propagates: never a silent fall back to the health check.
    report = validate(root, url=url, select=["EK4", "EK5"])
    errors = [f for f in report.findings if f.severity.value == "error"]
    detail = "runtime validate: " + (
        "no errors"
        if not errors
        else f"{len(errors)} error(s): " + "; ".join(finding_line(f) for f in errors[:5])
    )
    return AppCheck(ok=not errors, method="validate", detail=detail, report=report)


def _check_health(url: str, timeout_s: float) -> AppCheck:
    deadline = time.monotonic() + timeout_s
    while True:
        health = get_health(url, timeout_s=10.0)  # the one definition of healthy
        if health.healthy:
            return AppCheck(ok=True, method="health", detail=f"GET {url}/health -> healthy")
        last = f"GET {url}/health -> {health.describe()}"
        if time.monotonic() >= deadline:
            return AppCheck(ok=False, method="health", detail=last)
        time.sleep(1.0)
