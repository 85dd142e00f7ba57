"""What a push and a fork return (:class:`PushResult`, :class:`ForkResult`, the post-deploy
:class:`AppCheck`) and the progress callback they take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.envdir.upload_set import LeftOut, UploadFile

if TYPE_CHECKING:
    from envkit.validation.report import ValidationReport

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
    report: ValidationReport | None = None


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
        left_out: what of the environment directory is not uploaded, and why.
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
    left_out: list[LeftOut] = field(default_factory=list)
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
            "left_out": [{"path": f.path, "reason": f.reason} for f in self.left_out],
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
        """JSON shape (``envkit fork --format json``): the attributes by name."""
        return dict(self.__dict__)


def no_progress(_: str) -> None:
    """The :data:`Progress` callback of a caller that passed none: says nothing."""
