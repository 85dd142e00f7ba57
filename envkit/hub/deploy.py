"""``push`` and ``fork``: deploy an environment to a Hugging Face Docker Space, predictably.

Order of a push:

1. staging (see :mod:`envkit.hub.staging`);
2. preflight: static validate (EK1/2/3/6) of the staged copy; EK6xx errors and credentials
   found in the staged files ALWAYS stop the push, other errors stop it unless
   ``validate=False``;
3. auth and repo id (``<whoami>/<manifest name in kebab-case>`` by default);
4. diff against the Space's tree (git-blob sha1 per file): unchanged files are never sent,
   files gone from the upload set are deleted (``.gitattributes`` kept);
5. create the Space (docker SDK) or, for an existing one, apply the requested visibility and
   hardware explicitly; set variables (``openenv.yaml`` ``variables:`` + ``env``) and secrets
   BEFORE the commit, so the build that the commit triggers sees them;
6. ONE commit (``parent_commit`` = the tree diffed against, so a concurrent change is a
   conflict, never a silent overwrite), or one commit on a new pull request ref with
   ``create_pr``. Interrupting before the commit request completes leaves the Space at its
   previous commit. No change -> no commit, no PR.
7. ``wait``: poll the runtime until RUNNING or an error stage, then check the app.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit._version import __version__
from envkit.errors import HubError, UsageError
from envkit.hub.auth import (
    Credentials,
    check_repo_id,
    hub_endpoint,
    resolve_token,
    space_name,
    space_urls,
)
from envkit.hub.errors import PushBlockedError, call_hub
from envkit.hub.staging import SecretHit, scan_secrets, stage
from envkit.upload_set import UploadFile

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
            "created": self.created,
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


def _remote_state(api: Any, repo_id: str, endpoint: str) -> tuple[Any, dict[str, str]] | None:
    """``(space_info, {path: oid})`` or ``None`` when the Space does not exist."""
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
    files = {e.path: e.blob_id for e in tree if hasattr(e, "blob_id")}
    return space, files


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
    from envkit.names import normalise_name
    from envkit.project import EnvProject

    say = progress or _noop
    project = EnvProject.load(path)
    manifest = project.manifest
    if repo_id is not None:
        repo_id = check_repo_id(repo_id)
    _check_hardware(hardware)
    secret_values = _resolve_secrets(secrets)
    variables = {str(k): str(v) for k, v in manifest.variables.items()}
    variables.update({str(k): str(v) for k, v in (env or {}).items()})
    clash = sorted(set(variables) & set(secret_values))
    if clash:
        raise UsageError(
            f"{', '.join(clash)} is both a variable and a secret.",
            hint="Keep it in one place: secrets for credentials, variables otherwise.",
        )
    out_dir = Path(dry_run_dir).expanduser() if dry_run_dir is not None else None
    if out_dir is not None:
        if not dry_run:
            raise UsageError("A staging directory is only written with --dry-run.")
        if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
            raise UsageError(
                f"{out_dir} exists and is not an empty directory.",
                hint="Pass a new directory to --dry-run.",
            )
    endpoint = hub_endpoint()
    try:
        title = normalise_name(manifest.name).title
    except UsageError:
        title = manifest.name

    # token: needed for a real push, best effort for a dry run
    creds: Credentials | None
    try:
        creds = resolve_token(token)
    except Exception:
        if not dry_run:
            raise
        creds = None

    with tempfile.TemporaryDirectory(prefix="envkit-push-") as tmp:
        # 2. staging + secret scan of exactly what would be uploaded
        say("Staging the files to upload…")
        staged = stage(project.root, manifest, Path(tmp) / "space", title=title)
        # 1. preflight: static rules on the staged copy, i.e. on exactly what would be uploaded
        # (after the card repair and the Dockerfile move, which must not count against it).
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

        # 3. who and where
        api = _api(endpoint, creds)
        if creds is not None:
            say("Checking the token…")
            me = call_hub(
                lambda: api.whoami(), action="check the token", repo_id=repo_id, endpoint=endpoint
            )
            if repo_id is None:
                repo_id = check_repo_id(f"{me['name']}/{space_name(manifest.name)}")
        elif repo_id is None:
            repo_id = f"<your-namespace>/{space_name(manifest.name)}"
        space_url, app_url = space_urls(repo_id, endpoint)
        result = PushResult(
            repo_id=repo_id,
            space_url=space_url,
            app_url=app_url,
            dry_run=dry_run,
            files=staged.files,
            readme_changes=staged.readme_changes,
            notes=staged.notes,
            variables=variables,
            secret_names=sorted(secret_values),
            hardware=hardware,
            private=private,
            warnings=warnings,
            preflight=preflight,
        )

        # 4. diff against the Space
        remote = None
        if creds is not None:
            say(f"Reading {repo_id}…")
            remote = _remote_state(api, repo_id, endpoint)
        remote_files = remote[1] if remote else {}
        local = _git_oids(staged.path, staged.files)
        result.created = remote is None
        result.added = sorted(p for p in local if p not in remote_files)
        result.updated = sorted(
            p for p in local if p in remote_files and remote_files[p] != local[p]
        )
        result.deleted = sorted(p for p in remote_files if p not in local and p not in KEEP_REMOTE)
        sizes = {f.path: f.size for f in staged.files}
        result.bytes_uploaded = sum(sizes[p] for p in result.added + result.updated)
        current_vars: dict[str, str] = {}
        if remote is not None:
            space = remote[0]
            result.app_url = space_urls(repo_id, endpoint, getattr(space, "host", None))[1]
            if private is not None and bool(space.private) != private:
                result.settings_changed.append(
                    f"visibility: {'private' if space.private else 'public'} -> "
                    f"{'private' if private else 'public'}"
                )
            rt = getattr(space, "runtime", None)
            current_hw = (
                (getattr(rt, "requested_hardware", None) or getattr(rt, "hardware", None))
                if rt
                else None
            )
            if hardware is not None and current_hw != hardware:
                result.settings_changed.append(f"hardware: {current_hw} -> {hardware}")
            if variables:
                current_vars = {
                    k: v.value
                    for k, v in call_hub(
                        lambda: api.get_space_variables(repo_id),
                        action="read variables",
                        repo_id=repo_id,
                        endpoint=endpoint,
                    ).items()
                }
        result.variables_changed = sorted(
            k for k, v in variables.items() if current_vars.get(k) != v
        )

        if dry_run:
            if out_dir is not None:
                shutil.copytree(staged.path, out_dir, dirs_exist_ok=True)
                result.staged_dir = out_dir.resolve()
            return result

        # 5. create or update settings; variables and secrets before the commit
        assert creds is not None
        head: str | None = None
        if remote is None:
            say(f"Creating the Space {repo_id}…")
            call_hub(
                lambda: api.create_repo(
                    repo_id,
                    repo_type="space",
                    space_sdk="docker",
                    private=private,
                    space_hardware=hardware,
                    exist_ok=True,
                ),
                action="create the Space",
                repo_id=repo_id,
                endpoint=endpoint,
            )
            fresh = _remote_state(api, repo_id, endpoint)
            if fresh is not None:
                head = fresh[0].sha
                result.app_url = space_urls(repo_id, endpoint, getattr(fresh[0], "host", None))[1]
                seeded = {p for p in fresh[1] if p not in KEEP_REMOTE and p not in local}
                result.deleted = sorted(seeded)
        else:
            head = remote[0].sha
            if private is not None and bool(remote[0].private) != private:
                say("Applying visibility…")
                call_hub(
                    lambda: api.update_repo_settings(repo_id, repo_type="space", private=private),
                    action="change the Space's visibility",
                    repo_id=repo_id,
                    endpoint=endpoint,
                )
            if any(s.startswith("hardware:") for s in result.settings_changed):
                say(f"Requesting hardware {hardware}…")
                call_hub(
                    lambda: api.request_space_hardware(repo_id, hardware),
                    action="request hardware",
                    repo_id=repo_id,
                    endpoint=endpoint,
                )
        for key in result.variables_changed:
            say(f"Setting variable {key}…")
            call_hub(
                lambda k=key: api.add_space_variable(repo_id, k, variables[k]),
                action=f"set the variable {key}",
                repo_id=repo_id,
                endpoint=endpoint,
            )
        for key, value in secret_values.items():
            say(f"Setting secret {key}…")
            call_hub(
                lambda k=key, v=value: api.add_space_secret(repo_id, k, v),
                action=f"set the secret {key}",
                repo_id=repo_id,
                endpoint=endpoint,
            )

        # 6. one commit (or one PR)
        changes = result.added + result.updated + result.deleted
        if changes:
            _commit(
                api,
                result,
                staged.path,
                head,
                create_pr,
                message or f"envkit push {__version__}",
                endpoint,
                say,
            )

    # 7. wait for the Space and check the app
    if wait:
        _wait(api, result, project.root, endpoint, wait_timeout_s, say)
    return result


def _commit(
    api: Any,
    result: PushResult,
    folder: Path,
    head: str | None,
    create_pr: bool,
    message: str,
    endpoint: str,
    say: Progress,
) -> None:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    repo_id = result.repo_id
    description = (
        f"Pushed with envkit {__version__}: {len(result.added)} added, "
        f"{len(result.updated)} updated, {len(result.deleted)} deleted."
    )
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
