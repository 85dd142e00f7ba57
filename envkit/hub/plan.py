"""The plan of a push (:func:`plan_push`): local checks, staging, preflight, who and where, and
the diff against the Space; read-only requests at most, a frozen :class:`PushPlan`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.envdir import EnvProject
from envkit.envdir.manifest import Manifest
from envkit.errors import UsageError
from envkit.hub.auth import (
    Credentials,
    check_repo_id,
    hub_endpoint,
    resolve_token,
    space_name,
    space_urls,
)
from envkit.hub.errors import HubNetworkError, call_hub
from envkit.hub.preflight import preflight_gate
from envkit.hub.results import Progress, PushResult, no_progress
from envkit.hub.space import (
    KEEP_REMOTE,
    RemoteSpace,
    check_hardware,
    git_oids,
    hub_api,
    hub_unreachable,
    remote_state,
)
from envkit.hub.staging import StagedFolder, stage
from envkit.names import normalise_name

if TYPE_CHECKING:
    from huggingface_hub import HfApi


def _resolve_secrets(secrets: Mapping[str, str | None] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (secrets or {}).items():
        if not key or not key.replace("_", "").isalnum():
            raise UsageError(
                f"--secret {key!r}: a secret name must be letters, digits and `_`.",
                hint="e.g. --secret OPENAI_API_KEY",
            )
        if value is None:
            value = os.environ.get(key)
            if value is None:
                raise UsageError(
                    f"--secret {key}: `{key}` is not set in the environment.",
                    hint=f"Export it first, or pass --secret {key}=VALUE.",
                )
        out[key] = value
    return out


@dataclass(frozen=True)
class PushOptions:
    """The options of :func:`push` besides ``path`` and ``progress`` (same meanings).

    ``secrets`` and ``token`` are left out of ``repr`` so a logged plan never shows them.
    """

    repo_id: str | None = None
    private: bool | None = None
    hardware: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str | None] = field(default_factory=dict, repr=False)
    create_pr: bool = False
    message: str | None = None
    dry_run: bool = False
    dry_run_dir: Path | None = None
    wait: bool = False
    wait_timeout_s: float = 900.0
    validate: bool = True
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class _Inputs:
    """The options checked locally, before any file is staged or any request is made."""

    repo_id: str | None
    variables: dict[str, str]
    secret_values: dict[str, str] = field(repr=False)
    out_dir: Path | None


@dataclass(frozen=True)
class _LocalPlan:
    """The part of a plan made without network: checked options, staged and scanned files."""

    root: Path
    endpoint: str
    creds: Credentials | None
    inputs: _Inputs
    staged: StagedFolder
    warnings: tuple[str, ...]
    preflight: str


@dataclass(frozen=True)
class PushPlan:
    """What a push will do, made by :func:`plan_push` with read-only requests at most.

    Rendering a plan (:meth:`to_result`) makes no request; :func:`apply_push` makes the
    writes. The staged folder lives only inside :func:`plan_push`'s ``with`` block.

    Attributes:
        root: the environment directory.
        options: the push's options.
        endpoint: the Hub URL.
        creds: the token in use; ``None`` only for a dry run without one.
        staged: the staged folder (exactly what would be uploaded).
        repo_id: ``ns/name`` (``<your-namespace>/...`` for a dry run without a token).
        app_url: where the app answers (the Hub's ``host`` for an existing Space).
        variables: variables the Space should have (``openenv.yaml`` ``variables:`` + ``env``).
        secret_values: ``KEY -> VALUE`` to set; never in ``repr`` nor in the result.
        preflight: ``validate`` or ``validate (EK6 only)``.
        warnings: non-blocking preflight findings, ``CODE location: message`` lines.
        remote: the Space before the push, ``None`` when it does not exist (or no token, or
            a dry run that could not reach the Hub).
        local_oids: ``{path: git blob oid}`` of the staged files.
        added, updated, deleted: paths the commit adds, changes, deletes.
        bytes_uploaded: bytes of ``added`` + ``updated``.
        settings_changed: lines such as ``visibility: public -> private``.
        variables_changed: variable keys whose value differs from the Space's.
        hub_unreachable: a dry run's reason for planning without the Hub, else ``None``.
    """

    root: Path
    options: PushOptions
    endpoint: str
    creds: Credentials | None
    staged: StagedFolder
    repo_id: str
    app_url: str
    variables: Mapping[str, str]
    secret_values: Mapping[str, str] = field(repr=False)
    preflight: str
    warnings: tuple[str, ...]
    remote: RemoteSpace | None
    local_oids: Mapping[str, str]
    added: tuple[str, ...]
    updated: tuple[str, ...]
    deleted: tuple[str, ...]
    bytes_uploaded: int
    settings_changed: tuple[str, ...]
    variables_changed: tuple[str, ...]
    hub_unreachable: str | None = None

    def to_result(self) -> PushResult:
        """The plan as a (not yet applied) :class:`PushResult`; no request is made."""
        opts = self.options
        return PushResult(
            repo_id=self.repo_id,
            space_url=space_urls(self.repo_id, self.endpoint)[0],
            app_url=self.app_url,
            dry_run=opts.dry_run,
            created=self.remote is None,
            files=list(self.staged.files),
            left_out=list(self.staged.left_out),
            added=list(self.added),
            updated=list(self.updated),
            deleted=list(self.deleted),
            bytes_uploaded=self.bytes_uploaded,
            readme_changes=list(self.staged.readme_changes),
            notes=list(self.staged.notes),
            variables=dict(self.variables),
            variables_changed=list(self.variables_changed),
            secret_names=sorted(self.secret_values),
            hardware=opts.hardware,
            private=opts.private,
            settings_changed=list(self.settings_changed),
            warnings=list(self.warnings),
            preflight=self.preflight,
            hub_unreachable=self.hub_unreachable,
        )


@contextmanager
def plan_push(
    path: str | os.PathLike[str], options: PushOptions, progress: Progress | None = None
) -> Iterator[PushPlan]:
    """Plan a push: check the options, stage the upload set, run the preflight and the secret
    scan, resolve the token and the repo id, and diff against the Space.

    Requests made: ``whoami``, then the Space's info, tree and (when there are variables)
    variables; all read-only, and none without a token (a dry run may have none). The staged
    folder is a temporary directory removed when the ``with`` block ends.

    Args:
        path: environment directory (holds ``openenv.yaml``).
        options: as for :func:`push`.
        progress: called with one-line progress messages.

    Yields:
        The :class:`PushPlan`.

    Raises:
        UsageError, SpecError, PushBlockedError, HubAuthError, HubError: as :func:`push`.
    """
    say = progress or no_progress
    project = EnvProject.load(path)
    inputs = _check_inputs(project.manifest, options)
    endpoint = hub_endpoint()
    title = _title(project.manifest.name)
    creds = _credentials(options)
    with tempfile.TemporaryDirectory(prefix="envkit-push-") as tmp:
        say("Staging the files to upload…")
        staged = stage(project.root, project.manifest, Path(tmp) / "space", title=title)
        warnings, preflight = preflight_gate(staged, options.validate, creds, say)
        local = _LocalPlan(
            project.root, endpoint, creds, inputs, staged, tuple(warnings), preflight
        )
        yield _plan_remote(local, options, project.manifest.name, say)


def _check_inputs(manifest: Manifest, options: PushOptions) -> _Inputs:
    """Check the options that need no file and no network: repo id, hardware flavour, secret
    names and values, variable/secret clashes, the dry-run directory.

    Raises:
        UsageError: the first problem found, in that order.
    """
    repo_id = check_repo_id(options.repo_id) if options.repo_id is not None else None
    check_hardware(options.hardware)
    secret_values = _resolve_secrets(options.secrets)
    variables = {str(k): str(v) for k, v in manifest.variables.items()}
    variables.update({str(k): str(v) for k, v in options.env.items()})
    clash = sorted(set(variables) & set(secret_values))
    if clash:
        raise UsageError(
            f"{', '.join(clash)} is both a variable and a secret.",
            hint="Keep it in one place: secrets for credentials, variables otherwise.",
        )
    out_dir = options.dry_run_dir
    if out_dir is not None:
        if not options.dry_run:
            raise UsageError("A staging directory is only written with --dry-run.")
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise UsageError(
                f"{out_dir} exists and is not an empty directory.",
                hint="Pass a new directory to --dry-run.",
            )
    return _Inputs(repo_id, variables, secret_values, out_dir)


def _title(manifest_name: str) -> str:
    """The Space title a repaired card gets when it has none."""
    try:
        return normalise_name(manifest_name).title
    except UsageError:
        return manifest_name


def _credentials(options: PushOptions) -> Credentials | None:
    """The token: required for a real push, best effort for a dry run (``None`` without)."""
    try:
        return resolve_token(options.token)
    except Exception:
        if not options.dry_run:
            raise
        return None


def _plan_remote(
    local: _LocalPlan, options: PushOptions, manifest_name: str, say: Progress
) -> PushPlan:
    """Who and where (repo id, app URL), then the diff of the staged files, the settings and
    the variables against the Space; read-only requests, none without a token."""
    endpoint, creds, inputs, staged = local.endpoint, local.creds, local.inputs, local.staged
    unreachable = None
    if creds is not None and options.dry_run:
        say("Checking that the Hub answers…")
        unreachable = hub_unreachable(endpoint)
    try:
        if unreachable is not None:
            raise HubNetworkError(unreachable)
        repo_id, remote, current_vars = _read_remote(local, manifest_name, say)
    except HubNetworkError as exc:
        if not options.dry_run:
            raise
        # A dry run plans offline: what needs the Hub (the namespace, whether the Space
        # exists, its files and settings) is unknown, the rest is the same plan.
        unreachable = exc.message
        repo_id = inputs.repo_id or f"<your-namespace>/{space_name(manifest_name)}"
        remote, current_vars = None, {}
    remote_files = remote.files if remote else {}
    oids = git_oids(staged.path, staged.files)
    added = sorted(p for p in oids if p not in remote_files)
    updated = sorted(p for p in oids if p in remote_files and remote_files[p] != oids[p])
    sizes = {f.path: f.size for f in staged.files}
    host = getattr(remote.info, "host", None) if remote is not None else None
    return PushPlan(
        root=local.root,
        options=options,
        endpoint=endpoint,
        creds=creds,
        staged=staged,
        repo_id=repo_id,
        app_url=space_urls(repo_id, endpoint, host)[1],
        variables=inputs.variables,
        secret_values=inputs.secret_values,
        preflight=local.preflight,
        warnings=local.warnings,
        remote=remote,
        local_oids=oids,
        added=tuple(added),
        updated=tuple(updated),
        deleted=tuple(sorted(p for p in remote_files if p not in oids and p not in KEEP_REMOTE)),
        bytes_uploaded=sum(sizes[p] for p in added + updated),
        settings_changed=tuple(_settings_changes(remote, options.private, options.hardware)),
        variables_changed=tuple(
            sorted(k for k, v in inputs.variables.items() if current_vars.get(k) != v)
        ),
        hub_unreachable=unreachable,
    )


def _read_remote(
    local: _LocalPlan, manifest_name: str, say: Progress
) -> tuple[str, RemoteSpace | None, dict[str, str]]:
    """The repo id, the Space (``None``: none, or no token) and its current variables
    (only when the plan sets some); read-only requests, none without a token.

    Raises:
        HubNetworkError: the Hub cannot be reached. HubError, HubAuthError: as :func:`push`.
    """
    endpoint, creds, inputs = local.endpoint, local.creds, local.inputs
    api = hub_api(endpoint, creds)
    repo_id = _resolve_repo_id(api, creds, inputs.repo_id, manifest_name, endpoint, say)
    remote = None
    if creds is not None:
        say(f"Reading {repo_id}…")
        remote = remote_state(api, repo_id, endpoint)
    current_vars: dict[str, str] = {}
    if remote is not None and inputs.variables:
        current_vars = {
            k: v.value
            for k, v in call_hub(
                lambda: api.get_space_variables(repo_id),
                action="read variables",
                repo_id=repo_id,
                endpoint=endpoint,
            ).items()
        }
    return repo_id, remote, current_vars


def _resolve_repo_id(
    api: HfApi,
    creds: Credentials | None,
    repo_id: str | None,
    manifest_name: str,
    endpoint: str,
    say: Progress,
) -> str:
    """Check the token (``whoami``) and default the repo id to ``<whoami>/<space name>``;
    without a token (a dry run) the namespace is the placeholder ``<your-namespace>``."""
    if creds is not None:
        say("Checking the token…")
        me = call_hub(
            lambda: api.whoami(), action="check the token", repo_id=repo_id, endpoint=endpoint
        )
        if repo_id is None:
            repo_id = check_repo_id(f"{me['name']}/{space_name(manifest_name)}")
    elif repo_id is None:
        repo_id = f"<your-namespace>/{space_name(manifest_name)}"
    return repo_id


def _settings_changes(
    remote: RemoteSpace | None, private: bool | None, hardware: str | None
) -> list[str]:
    """Visibility and hardware lines (``old -> new``) that an existing Space needs."""
    if remote is None:
        return []
    space = remote.info
    changes = []
    if private is not None and bool(space.private) != private:
        changes.append(
            f"visibility: {'private' if space.private else 'public'} -> "
            f"{'private' if private else 'public'}"
        )
    rt = getattr(space, "runtime", None)
    current_hw = (
        (getattr(rt, "requested_hardware", None) or getattr(rt, "hardware", None)) if rt else None
    )
    if hardware is not None and current_hw != hardware:
        changes.append(f"hardware: {current_hw} -> {hardware}")
    return changes
