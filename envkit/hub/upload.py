"""Applying a push plan (:func:`apply_push`): the Space, its settings, variables and secrets,
then one commit (or one pull request)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envkit._version import __version__
from envkit.errors import UsageError
from envkit.hub.auth import space_urls
from envkit.hub.errors import call_hub
from envkit.hub.plan import PushPlan
from envkit.hub.results import Progress, PushResult, no_progress
from envkit.hub.space import KEEP_REMOTE, hub_api, remote_state
from envkit.hub.verify import wait_for_space
from envkit.schemas import path_digests

if TYPE_CHECKING:
    from huggingface_hub import CommitOperation, HfApi


def apply_push(plan: PushPlan, progress: Progress | None = None) -> PushResult:
    """Carry out ``plan``: create the Space or apply its settings, set variables and secrets
    BEFORE the commit (so the build the commit triggers sees them), make one commit (or one
    pull request) when a file changed, then, with ``wait``, wait for the Space and check the
    app. Call it inside :func:`plan_push`'s ``with`` block (the staged files are read).

    Returns:
        The :class:`PushResult`.

    Raises:
        UsageError: the plan was made without a token (a dry run without one).
        HubAuthError, HubError: as :func:`push`.
    """
    say = progress or no_progress
    if plan.creds is None:
        raise UsageError(
            "This push plan was made without a Hub token; it cannot be applied.",
            hint="Pass --token or set HF_TOKEN, then push again.",
        )
    api = hub_api(plan.endpoint, plan.creds)
    result = plan.to_result()
    head = _ensure_space(api, plan, result, say)
    _set_variables_and_secrets(api, plan, result, say)
    if result.added + result.updated + result.deleted:
        _commit(api, plan, result, head, say)
    if plan.options.wait:
        wait_for_space(api, result, plan.root, plan.endpoint, plan.options.wait_timeout_s, say)
    return result


def _ensure_space(api: HfApi, plan: PushPlan, result: PushResult, say: Progress) -> str | None:
    """Create the Space (docker SDK), or apply the requested visibility and hardware to the
    existing one.

    Returns:
        The commit the push is based on (``parent_commit``); ``None`` when a just-created
        Space cannot be read back.
    """
    repo_id, endpoint, opts = plan.repo_id, plan.endpoint, plan.options
    if plan.remote is not None:
        space = plan.remote.info
        if opts.private is not None and bool(space.private) != opts.private:
            say("Applying visibility…")
            call_hub(
                lambda: api.update_repo_settings(repo_id, repo_type="space", private=opts.private),
                action="change the Space's visibility",
                repo_id=repo_id,
                endpoint=endpoint,
            )
        if any(s.startswith("hardware:") for s in plan.settings_changed):
            say(f"Requesting hardware {opts.hardware}…")
            call_hub(
                lambda: api.request_space_hardware(repo_id, opts.hardware),
                action="request hardware",
                repo_id=repo_id,
                endpoint=endpoint,
            )
        return space.sha
    say(f"Creating the Space {repo_id}…")
    call_hub(
        lambda: api.create_repo(
            repo_id,
            repo_type="space",
            space_sdk="docker",
            private=opts.private,
            space_hardware=opts.hardware,
            exist_ok=True,
        ),
        action="create the Space",
        repo_id=repo_id,
        endpoint=endpoint,
    )
    fresh = remote_state(api, repo_id, endpoint)
    if fresh is None:
        return None
    result.app_url = space_urls(repo_id, endpoint, getattr(fresh.info, "host", None))[1]
    # Files the Hub seeds a new Space with are replaced by the environment's.
    result.deleted = sorted(
        p for p in fresh.files if p not in KEEP_REMOTE and p not in plan.local_oids
    )
    return fresh.info.sha


def _set_variables_and_secrets(
    api: HfApi, plan: PushPlan, result: PushResult, say: Progress
) -> None:
    """Write the changed variables, then every secret (the Hub never returns their values,
    so they cannot be compared)."""
    repo_id, endpoint = plan.repo_id, plan.endpoint
    for key in result.variables_changed:
        say(f"Setting variable {key}…")
        call_hub(
            lambda k=key: api.add_space_variable(repo_id, k, plan.variables[k]),
            action=f"set the variable {key}",
            repo_id=repo_id,
            endpoint=endpoint,
        )
    for key, value in plan.secret_values.items():
        say(f"Setting secret {key}…")
        call_hub(
            lambda k=key, v=value: api.add_space_secret(repo_id, k, v),
            action=f"set the secret {key}",
            repo_id=repo_id,
            endpoint=endpoint,
        )


def _commit(
    api: HfApi, plan: PushPlan, result: PushResult, head: str | None, say: Progress
) -> None:
    """One commit of ``result``'s changes on ``head`` (or on a new pull request ref)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    repo_id, endpoint, folder = result.repo_id, plan.endpoint, plan.staged.path
    create_pr = plan.options.create_pr
    # which environment this commit holds (docs/versions.md): short in the default title,
    # full in the description; a --message of the user's is kept as written
    digests = path_digests(plan.root)
    message = plan.options.message or f"envkit push {__version__} ({', '.join(digests.lines())})"
    description = (
        f"Pushed with envkit {__version__}: {len(result.added)} added, "
        f"{len(result.updated)} updated, {len(result.deleted)} deleted.\n\n"
    ) + "\n".join(digests.trailers())
    revision = None
    if create_pr:
        say("Opening a pull request…")
        pr = call_hub(
            lambda: api.create_pull_request(
                repo_id, title=message, description=description, repo_type="space"
            ),
            action="open a pull request",
            repo_id=repo_id,
            endpoint=endpoint,
        )
        revision = pr.git_reference
        result.pr_url = pr.url

    def operations() -> list[CommitOperation]:  # fresh per attempt (the client mutates them)
        ops: list[CommitOperation] = [CommitOperationDelete(p) for p in result.deleted]
        ops += [CommitOperationAdd(p, str(folder / p)) for p in result.added + result.updated]
        return ops

    say(f"Uploading {len(result.added) + len(result.updated)} file(s) in one commit…")
    info = call_hub(
        lambda: api.create_commit(
            repo_id,
            operations(),
            commit_message=message,
            commit_description=description,
            repo_type="space",
            revision=revision,
            parent_commit=head if (head and not create_pr) else None,
        ),
        action="commit the files",
        repo_id=repo_id,
        endpoint=endpoint,
    )
    result.committed = True
    result.commit_oid = info.oid
    result.commit_url = info.commit_url
