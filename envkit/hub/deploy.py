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
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit._version import __version__
from envkit.envdir.manifest import Manifest
from envkit.envdir.upload_set import UploadFile
from envkit.errors import HubError, PushBlockedError, UsageError
from envkit.hub.auth import (
    Credentials,
    check_repo_id,
    hub_endpoint,
    resolve_token,
    space_name,
    space_urls,
)
from envkit.hub.errors import HubNetworkError, call_hub, is_network_error
from envkit.hub.staging import SecretHit, StagedFolder, scan_secrets, stage

ERROR_STAGES = frozenset(
    {"BUILD_ERROR", "RUNTIME_ERROR", "CONFIG_ERROR", "NO_APP_FILE", "DELETING", "STOPPED", "PAUSED"}
)
KEEP_REMOTE = frozenset({".gitattributes"})  # created by the Hub, not part of an environment
PREFLIGHT_SELECT = ["EK1", "EK2", "EK3", "EK6"]

Progress = Callable[[str], None]


@dataclass
class AppCheck:
    """How the deployed app was checked after ``wait``.

    Attributes:
        ok: the check passed.
        method: ``validate`` (runtime ``envkit.validation.validate(url=...)``) or ``health``
            (``GET /health`` only, when runtime validate is not available).
        detail: one line for humans.
        report: the ValidationReport when ``method == "validate"``.
    """

    ok: bool
    method: str
    detail: str
    report: Any = None


@dataclass
class PushResult:
    """What a push did (or, with ``dry_run``, would do).

    Attributes:
        repo_id: ``ns/name``.
        space_url: ``<endpoint>/spaces/ns/name``.
        app_url: where the app answers (``https://ns-name.hf.space`` on huggingface.co).
        dry_run: nothing was written to the Hub.
        created: the Space did not exist before (or would be created).
        committed: a commit was made (False for an unchanged re-push and for dry runs).
        commit_oid, commit_url, pr_url: of the commit / pull request made, if any.
        files: the staged files (path, size in bytes).
        added, updated, deleted: paths the commit adds, changes, deletes.
        bytes_uploaded: bytes of file content sent (or to send), 0 for an unchanged re-push.
        readme_changes: what the card repair changed in the staged README.
        notes: other staging notes (e.g. Dockerfile moved).
        variables: the variables the Space should have (values are public).
        variables_changed: keys actually written.
        secret_names: names of the secrets set (values are never kept here).
        settings_changed: lines such as ``visibility: public -> private``.
        warnings: preflight findings that did not stop the push (``CODE message`` lines).
        preflight: ``validate``, ``validate (EK6 only)`` or ``secret scan only``.
        runtime_stage: last runtime stage seen with ``wait``.
        app_check: the post-deploy check with ``wait``.
        staged_dir: where the staged folder was written (``dry_run`` with a directory).
        hub_unreachable: why a dry run with a token made its plan without the Hub (e.g.
            ``Cannot reach the Hugging Face Hub at URL: ConnectError``); ``None`` when it
            reached the Hub or needed it not. See :attr:`remote_known`.
    """

    repo_id: str
    space_url: str
    app_url: str
    dry_run: bool = False
    created: bool = False
    committed: bool = False
    commit_oid: str | None = None
    commit_url: str | None = None
    pr_url: str | None = None
    files: list[UploadFile] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    bytes_uploaded: int = 0
    readme_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    variables_changed: list[str] = field(default_factory=list)
    secret_names: list[str] = field(default_factory=list)
    hardware: str | None = None
    private: bool | None = None
    settings_changed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    preflight: str = ""
    runtime_stage: str | None = None
    app_check: AppCheck | None = None
    staged_dir: Path | None = None
    hub_unreachable: str | None = None

    @property
    def remote_known(self) -> bool:
        """False for a dry run that could not reach the Hub: whether the Space exists, its
        files, settings and variables (so ``created``, ``updated``, ``deleted``,
        ``settings_changed``, ``variables_changed``) are unknown."""
        return self.hub_unreachable is None

    @property
    def ok(self) -> bool:
        """False when ``wait`` saw an error stage, timed out, or the app check failed."""
        if self.runtime_stage is not None and self.runtime_stage != "RUNNING":
            return False
        return self.app_check is None or self.app_check.ok

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (``envkit push --format json``); secret values never appear."""
        return {
            "repo_id": self.repo_id,
            "space_url": self.space_url,
            "app_url": self.app_url,
            "dry_run": self.dry_run,
            "created": self.created if self.remote_known else None,
            "hub_unreachable": self.hub_unreachable,
            "committed": self.committed,
            "commit_oid": self.commit_oid,
            "commit_url": self.commit_url,
            "pr_url": self.pr_url,
            "files": [{"path": f.path, "size": f.size} for f in self.files],
            "added": self.added,
            "updated": self.updated,
            "deleted": self.deleted,
            "bytes_uploaded": self.bytes_uploaded,
            "readme_changes": self.readme_changes,
            "notes": self.notes,
            "variables": self.variables,
            "variables_changed": self.variables_changed,
            "secret_names": self.secret_names,
            "hardware": self.hardware,
            "private": self.private,
            "settings_changed": self.settings_changed,
            "warnings": self.warnings,
            "preflight": self.preflight,
            "runtime_stage": self.runtime_stage,
            "app_check": None
            if self.app_check is None
            else {
                "ok": self.app_check.ok,
                "method": self.app_check.method,
                "detail": self.app_check.detail,
            },
            "staged_dir": str(self.staged_dir) if self.staged_dir else None,
            "ok": self.ok,
        }


@dataclass
class ForkResult:
    """A duplicated Space.

    Attributes:
        source: ``ns/name`` duplicated.
        repo_id: the new Space.
        space_url, app_url: of the new Space.
        files_copy_pending: the Hub is still copying files (large Spaces).
    """

    source: str
    repo_id: str
    space_url: str
    app_url: str
    files_copy_pending: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# ---------------------------------------------------------------------------------------------
def _noop(_: str) -> None:
    pass


def _api(endpoint: str, creds: Credentials | None):
    from huggingface_hub import HfApi

    return HfApi(
        endpoint=endpoint,
        token=creds.token if creds else False,
        library_name="envkit",
        library_version=__version__,
    )


def _check_hardware(hardware: str | None) -> None:
    if hardware is None:
        return
    from huggingface_hub import SpaceHardware

    flavours = [h.value for h in SpaceHardware]
    if hardware not in flavours:
        raise UsageError(
            f"--hardware {hardware}: unknown Space hardware flavour.",
            hint=f"Use one of: {', '.join(flavours)}.",
        )


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


def _preflight(root: Path, run_all: bool) -> tuple[list[Any], str]:
    """Static validate findings on ``root`` (all static rules, or the EK6xx ones only).

    Fails closed: an exception from a rule propagates (the CLI reports an internal
    error, exit 2); it never degrades the preflight to a bare secret scan.
    """
    from envkit.validation import validate

    select = PREFLIGHT_SELECT if run_all else ["EK6"]
    report = validate(root, static=True, select=select)
    return list(report.findings), "validate" if run_all else "validate (EK6 only)"


def _finding_line(f: Any) -> str:
    loc = f" {f.location}" if getattr(f, "location", None) else ""
    return f"{f.code}{loc}: {f.message}"


def _git_oids(folder: Path, files: list[UploadFile]) -> dict[str, str]:
    from huggingface_hub.utils.sha import git_hash

    return {f.path: git_hash((folder / f.path).read_bytes()) for f in files}


@dataclass(frozen=True)
class RemoteSpace:
    """A Space as the Hub reports it before the push.

    Attributes:
        info: huggingface_hub's ``SpaceInfo`` (``sha``, ``private``, ``runtime``, ``host``).
        files: ``{path: git blob oid}`` of the Space's tree at ``info.sha``.
    """

    info: Any
    files: Mapping[str, str]


def _remote_state(api: Any, repo_id: str, endpoint: str) -> RemoteSpace | None:
    """The Space's info and tree, or ``None`` when the Space does not exist."""
    from huggingface_hub.errors import RepositoryNotFoundError

    def info():
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


# --- plan: local checks, staging, preflight, who and where, diff (read-only requests) -------
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
    from envkit.envdir import EnvProject

    say = progress or _noop
    project = EnvProject.load(path)
    inputs = _check_inputs(project.manifest, options)
    endpoint = hub_endpoint()
    title = _title(project.manifest.name)
    creds = _credentials(options)
    with tempfile.TemporaryDirectory(prefix="envkit-push-") as tmp:
        say("Staging the files to upload…")
        staged = stage(project.root, project.manifest, Path(tmp) / "space", title=title)
        warnings, preflight = _preflight_gate(staged, options.validate, creds, say)
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
    _check_hardware(options.hardware)
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
    from envkit.names import normalise_name

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


def _preflight_gate(
    staged: StagedFolder, validate: bool, creds: Credentials | None, say: Progress
) -> tuple[list[str], str]:
    """Static rules and the secret scan on the staged copy, i.e. on exactly what would be
    uploaded (after the card repair and the Dockerfile move, which must not count against it).

    Returns:
        ``(warnings, preflight)``: the findings that do not stop the push, as lines, and
        which preflight ran.

    Raises:
        PushBlockedError: secrets (a scanner hit, the token in use, an EK6xx error) in any
            case; other static validate errors unless ``validate`` is False.
    """
    say("Checking the files to upload (static validate)…")
    findings, preflight = _preflight(staged.path, run_all=validate)
    blocking = [
        f
        for f in findings
        if f.severity.value == "error" and (validate or f.code.startswith("EK6"))
    ]
    warnings = [_finding_line(f) for f in findings if f not in blocking]
    hits: list[SecretHit] = scan_secrets(
        staged.path,
        [f.path for f in staged.files],
        extra_literals=(creds.token,) if creds else (),
    )
    ek6 = [f for f in blocking if f.code.startswith("EK6")]
    if hits or ek6:
        lines = [f"{h.file}:{h.line}: {h.kind}" for h in hits] + [_finding_line(f) for f in ek6]
        files = sorted(
            {h.file for h in hits} | {str(getattr(f.location, "file", "?")) for f in ek6}
        )
        raise PushBlockedError(
            f"Refusing to push: secrets would be uploaded ({', '.join(files)}).",
            hint="Remove them from the files (read them from the environment at run time and "
            "set them with --secret KEY), or exclude the files in .gitignore/.dockerignore. "
            "No option uploads secrets.",
            details="\n".join(lines),
        )
    if blocking:
        raise PushBlockedError(
            f"Refusing to push: static validate found {len(blocking)} error(s).",
            hint="Fix them (`envkit validate --static` explains each), or push anyway with "
            "--no-validate.",
            details="\n".join(_finding_line(f) for f in blocking),
        )
    return warnings, preflight


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
    oids = _git_oids(staged.path, staged.files)
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
    api = _api(endpoint, creds)
    repo_id = _resolve_repo_id(api, creds, inputs.repo_id, manifest_name, endpoint, say)
    remote = None
    if creds is not None:
        say(f"Reading {repo_id}…")
        remote = _remote_state(api, repo_id, endpoint)
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


def _resolve_repo_id(
    api: Any,
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


# --- apply: the Space, its settings, variables and secrets, one commit, the wait -------------
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
    say = progress or _noop
    if plan.creds is None:
        raise UsageError(
            "This push plan was made without a Hub token; it cannot be applied.",
            hint="Pass --token or set HF_TOKEN, then push again.",
        )
    api = _api(plan.endpoint, plan.creds)
    result = plan.to_result()
    head = _ensure_space(api, plan, result, say)
    _set_variables_and_secrets(api, plan, result, say)
    if result.added + result.updated + result.deleted:
        _commit(api, plan, result, head, say)
    if plan.options.wait:
        _wait(api, result, plan.root, plan.endpoint, plan.options.wait_timeout_s, say)
    return result


def _ensure_space(api: Any, plan: PushPlan, result: PushResult, say: Progress) -> str | None:
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
    fresh = _remote_state(api, repo_id, endpoint)
    if fresh is None:
        return None
    result.app_url = space_urls(repo_id, endpoint, getattr(fresh.info, "host", None))[1]
    # Files the Hub seeds a new Space with are replaced by the environment's.
    result.deleted = sorted(
        p for p in fresh.files if p not in KEEP_REMOTE and p not in plan.local_oids
    )
    return fresh.info.sha


def _set_variables_and_secrets(api: Any, plan: PushPlan, result: PushResult, say: Progress) -> None:
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


def _commit(api: Any, plan: PushPlan, result: PushResult, head: str | None, say: Progress) -> None:
    """One commit of ``result``'s changes on ``head`` (or on a new pull request ref)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    from envkit.schemas import path_digests

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

    def operations() -> list[Any]:  # fresh objects per attempt (the client mutates them)
        ops: list[Any] = [CommitOperationDelete(p) for p in result.deleted]
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


def _wait(
    api: Any, result: PushResult, root: Path, endpoint: str, timeout_s: float, say: Progress
) -> None:
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
    from envkit.validation import validate

    # An exception here propagates: never a silent fall back to the health check.
    report = validate(root, url=url, select=["EK4", "EK5"])
    errors = [f for f in report.findings if f.severity.value == "error"]
    detail = "runtime validate: " + (
        "no errors"
        if not errors
        else f"{len(errors)} error(s): " + "; ".join(_finding_line(f) for f in errors[:5])
    )
    return AppCheck(ok=not errors, method="validate", detail=detail, report=report)


def _check_health(url: str, timeout_s: float) -> AppCheck:
    from envkit.wire import get_health

    deadline = time.monotonic() + timeout_s
    while True:
        health = get_health(url, timeout_s=10.0)  # the one definition of healthy
        if health.healthy:
            return AppCheck(ok=True, method="health", detail=f"GET {url}/health -> healthy")
        last = f"GET {url}/health -> {health.describe()}"
        if time.monotonic() >= deadline:
            return AppCheck(ok=False, method="health", detail=last)
        time.sleep(1.0)


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
    _check_hardware(hardware)
    creds = resolve_token(token)
    endpoint = hub_endpoint()
    api = _api(endpoint, creds)
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
