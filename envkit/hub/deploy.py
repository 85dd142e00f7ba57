"""``push`` and ``fork``: deploy an environment to a Hugging Face Docker Space, predictably.

A push is a plan (:func:`plan_push`: reads only, a frozen :class:`PushPlan`) then, unless
``dry_run``, its application (:func:`apply_push`: the writes).

Plan:

1. local checks of the options (repo id, hardware, secret names, variable/secret clashes);
2. staging (see :mod:`envkit.hub.staging`);
3. preflight: static validate (EK1/2/3/6) of the staged copy; EK6xx errors and credentials
   found in the staged files ALWAYS stop the push, other errors stop it unless
   ``validate=False``;
4. auth and repo id (``<whoami>/<manifest name in kebab-case>`` by default);
5. diff against the Space's tree (git-blob sha1 per file): unchanged files are never sent,
   files gone from the upload set are deleted (``.gitattributes`` kept); the settings and
   variables that differ.

Apply:

1. create the Space (docker SDK) or, for an existing one, apply the requested visibility and
   hardware explicitly; set variables (``openenv.yaml`` ``variables:`` + ``env``) and secrets
   BEFORE the commit, so the build that the commit triggers sees them;
2. ONE commit (``parent_commit`` = the tree diffed against, so a concurrent change is a
   conflict, never a silent overwrite), or one commit on a new pull request ref with
   ``create_pr``. Interrupting before the commit request completes leaves the Space at its
   previous commit. No change -> no commit, no PR.
3. ``wait``: poll the runtime until RUNNING or an error stage, then check the app.

Where each part lives: :mod:`envkit.hub.plan` (the plan), :mod:`envkit.hub.preflight` (step 3),
:mod:`envkit.hub.space` (what the Hub reports), :mod:`envkit.hub.upload` (apply),
:mod:`envkit.hub.verify` (``wait``), :mod:`envkit.hub.results` (what is returned).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from envkit.errors import HubError
from envkit.hub.auth import check_repo_id, hub_endpoint, resolve_token, space_urls
from envkit.hub.errors import call_hub
from envkit.hub.plan import PushOptions, plan_push
from envkit.hub.results import ForkResult, Progress, PushResult
from envkit.hub.space import check_hardware, hub_api
from envkit.hub.upload import apply_push


def push(
    path: str | os.PathLike[str] = ".",
    *,
    repo_id: str | None = None,
    private: bool | None = None,
    hardware: str | None = None,
    env: Mapping[str, str] | None = None,
    secrets: Mapping[str, str | None] | None = None,
    create_pr: bool = False,
    message: str | None = None,
    dry_run: bool = False,
    dry_run_dir: str | os.PathLike[str] | None = None,
    wait: bool = False,
    wait_timeout_s: float = 900.0,
    validate: bool = True,
    token: str | None = None,
    progress: Progress | None = None,
) -> PushResult:
    """Deploy the environment at ``path`` to a Hugging Face Docker Space.

    :func:`plan_push` then, unless ``dry_run``, :func:`apply_push`.

    Args:
        path: environment directory (holds ``openenv.yaml``).
        repo_id: ``NS/NAME``; default ``<whoami name>/<manifest name in kebab-case>``.
        private: ``True``/``False`` sets the visibility (also of an existing Space); ``None``
            keeps it (new Spaces: the Hub's default, public).
        hardware: a flavour such as ``cpu-basic`` or ``t4-small``; applied to existing Spaces too.
        env: variables ``KEY -> VALUE``, on top of ``openenv.yaml``'s ``variables:``.
        secrets: ``KEY -> VALUE``; a ``None`` value is read from the environment variable KEY.
            Values are never printed, logged or returned.
        create_pr: commit to a new pull request instead of ``main``.
        message: commit message; default ``envkit push <version>``.
        dry_run: make no write request; return the plan.
        dry_run_dir: with ``dry_run``, also write the staged folder there (must not exist or be
            empty).
        wait: poll the Space until RUNNING or an error stage, then check the app (runtime
            validate against the app URL, or ``GET /health`` when runtime validate is absent).
        wait_timeout_s: seconds, > 0.
        validate: run the static validate preflight (EK6xx secrets are checked regardless).
        token: Hub token; default ``HF_TOKEN``, else the saved token.
        progress: called with one-line progress messages (for a CLI spinner).

    Returns:
        A :class:`PushResult`; check :attr:`PushResult.ok` after ``wait``.

    Raises:
        UsageError: bad repo id, hardware flavour, secret name, dry-run directory.
        SpecError: no manifest, no Dockerfile, unreadable README front matter.
        PushBlockedError: secrets in the upload set, or static validate errors (exit 1).
        HubAuthError: not logged in, 401, 403.
        HubError: 402, 404, 409, 429/5xx after retries; HubNetworkError when unreachable.
    """
    options = PushOptions(
        repo_id=repo_id,
        private=private,
        hardware=hardware,
        env=dict(env or {}),
        secrets=dict(secrets or {}),
        create_pr=create_pr,
        message=message,
        dry_run=dry_run,
        dry_run_dir=Path(dry_run_dir).expanduser() if dry_run_dir is not None else None,
        wait=wait,
        wait_timeout_s=wait_timeout_s,
        validate=validate,
        token=token,
    )
    with plan_push(path, options, progress) as plan:
        if not dry_run:
            return apply_push(plan, progress)
        result = plan.to_result()
        if options.dry_run_dir is not None:
            shutil.copytree(plan.staged.path, options.dry_run_dir, dirs_exist_ok=True)
            result.staged_dir = options.dry_run_dir.resolve()
        return result


def fork(
    source: str,
    destination: str | None = None,
    *,
    private: bool | None = None,
    hardware: str | None = None,
    token: str | None = None,
) -> ForkResult:
    """Duplicate the Space ``source`` (huggingface_hub's ``duplicate_repo``).

    Args:
        source: ``NS/NAME`` of the Space to copy.
        destination: ``NS/NAME`` or ``NAME`` (your namespace); default your namespace and the
            source's name.
        private: visibility of the copy; ``None`` = the Hub's default (same as the source).
        hardware: hardware flavour of the copy.
        token: Hub token; default ``HF_TOKEN``, else the saved token.

    Raises:
        UsageError: malformed ids or hardware.
        HubAuthError, HubError: as for :func:`push` (409 when the destination exists).
    """
    source = check_repo_id(source)
    check_hardware(hardware)
    creds = resolve_token(token)
    endpoint = hub_endpoint()
    api = hub_api(endpoint, creds)
    if destination is None or "/" not in destination:
        me = call_hub(
            lambda: api.whoami(), action="check the token", repo_id=None, endpoint=endpoint
        )
        destination = f"{me['name']}/{destination or source.split('/')[1]}"
    destination = check_repo_id(destination)
    url = call_hub(
        lambda: api.duplicate_repo(
            source, destination, repo_type="space", private=private, space_hardware=hardware
        ),
        action=f"duplicate {source}",
        repo_id=destination,
        endpoint=endpoint,
        overrides={
            409: HubError(
                f"`{destination}` already exists (409 Conflict).",
                hint=f"Pick another destination: envkit fork {source} NS/NEW-NAME.",
            ),
            404: HubError(
                f"Space `{source}` was not found (404).",
                hint="Check the source id; private Spaces look missing to other accounts.",
            ),
        },
    )
    space_url, app_url = space_urls(destination, endpoint)
    return ForkResult(
        source=source,
        repo_id=destination,
        space_url=space_url,
        app_url=app_url,
        files_copy_pending=bool(getattr(url, "files_copy_pending", False)),
    )
