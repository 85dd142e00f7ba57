"""``push_dataset``: upload a folder's preference data as a Hugging Face Hub dataset.

Same token rules as ``envkit push`` (``envkit.hub.auth``): ``token`` argument, else
``HF_TOKEN``, else the token saved by ``hf auth login``; never printed. The endpoint is
``HF_ENDPOINT`` read at call time. One commit holds ``data/train.<parquet|jsonl>`` and a
``README.md`` dataset card whose ``configs`` make ``load_dataset("NS/NAME")`` find the data.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit._version import __version__
from envkit.errors import UsageError
from envkit.hub.auth import check_repo_id, hub_endpoint, resolve_token
from envkit.hub.errors import call_hub
from envkit.label.dataset import ExportResult, export
from envkit.label.folder import EvalFolder
from envkit.label.store import LabelStore


@dataclass
class DatasetPushResult:
    """What :func:`push_dataset` did.

    Attributes:
        repo_id: ``NS/NAME`` of the dataset.
        url: the dataset page (``<endpoint>/datasets/NS/NAME``).
        commit_oid: the commit made, ``None`` when nothing changed.
        export: the rows, ties and drops of the upload (:class:`ExportResult`).
        files: paths in the repository uploaded.
    """

    repo_id: str
    url: str
    commit_oid: str | None
    export: ExportResult
    files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "url": self.url,
            "commit_oid": self.commit_oid,
            "files": self.files,
            **{k: v for k, v in self.export.to_dict().items() if k != "path"},
        }


def _card(folder: EvalFolder, data_path: str, result: ExportResult, repo_id: str) -> str:
    s = folder.summary
    env = (s.get("environment") or {}).get("name") or folder.path.name
    model = s.get("model") or s.get("policy") or "unknown policy"
    return f"""---
tags:
- trl
- preference
- rlhf
- envkit
- openenv
configs:
- config_name: default
  data_files:
  - split: train
    path: {data_path}
---
# Human preferences over `{env}` rollouts

Pairs of rollouts of the same seed from the OpenEnv environment `{env}` ({model}), labeled by
people with `envkit label` (envkit {__version__}). TRL's conversational preference format:
`prompt`, `chosen`, `rejected` (lists of chat messages), plus `seed`, `chosen_return`,
`rejected_return` (the environment's returns), `labeler` and `agreement` (share of labels
agreeing with the majority).

- {result.rows} preference pairs; {result.ties} ties and {result.cant_tell} "can't tell"
  excluded; {result.contested} contested pairs excluded.

```python
from datasets import load_dataset
from trl import DPOConfig, DPOTrainer

dataset = load_dataset("{repo_id}", split="train")
```
"""


def _dataset_id(repo_id: str) -> str:
    """``repo_id`` checked as a dataset id (the Hub's rules for any repo id).

    Raises:
        UsageError: malformed, with a dataset example in the hint.
    """
    try:
        return check_repo_id(repo_id)
    except UsageError:
        raise UsageError(
            f"`{repo_id}` is not a valid dataset id.",
            hint="Use NAMESPACE/NAME with letters, digits, `-`, `_` or `.`, e.g. "
            "--repo-id alice/echo-preferences.",
        ) from None


def _default_format() -> str:
    """``parquet`` when pyarrow is installed, else ``jsonl``."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return "jsonl"
    return "parquet"


def push_dataset(
    folder: EvalFolder,
    store: LabelStore,
    repo_id: str,
    *,
    private: bool | None = None,
    token: str | None = None,
    min_agreement: float = 0.0,
    format: str | None = None,
    message: str | None = None,
) -> DatasetPushResult:
    """Export the folder's preferences and upload them to the dataset ``repo_id``.

    Args:
        folder, store: the eval folder and its labels.
        repo_id: ``NS/NAME`` (created when missing).
        private: visibility of a new dataset (``None``: the Hub's default, public).
        token: Hub token (see the module docstring).
        min_agreement: see :func:`envkit.label.dataset.preference_rows`.
        format: ``parquet`` or ``jsonl``; default parquet when pyarrow is installed.
        message: commit message; default ``envkit label push <version>``.

    Returns:
        A :class:`DatasetPushResult`.

    Raises:
        UsageError: malformed ``repo_id``; no preference rows to upload.
        HubAuthError: no token, 401, 403.
        HubError: other Hub failures after bounded retries (429/5xx).
    """
    repo_id = _dataset_id(repo_id)
    if format is None:
        format = _default_format()
    creds = resolve_token(token)
    endpoint = hub_endpoint()
    with tempfile.TemporaryDirectory(prefix="envkit-label-push-") as tmp:
        staged = Path(tmp)
        data_path = f"data/train.{format}"
        result = export(
            folder, store, staged / data_path, format=format, min_agreement=min_agreement
        )
        if result.rows == 0:
            raise UsageError(
                f"No preference pairs to upload from {folder.path} ({result.ties} "
                f"tie(s), {result.cant_tell} can't tell, {result.contested} "
                f"contested, {result.unlabeled} unlabeled).",
                hint=f"Label some pairs first: `envkit label {folder.path}`.",
            )
        (staged / "README.md").write_text(
            _card(folder, data_path, result, repo_id), encoding="utf-8"
        )
        from huggingface_hub import HfApi

        api = HfApi(
            endpoint=endpoint, token=creds.token, library_name="envkit", library_version=__version__
        )
        call_hub(
            lambda: api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True),
            action="create the dataset",
            repo_id=repo_id,
            endpoint=endpoint,
        )
        info = call_hub(
            lambda: api.upload_folder(
                repo_id=repo_id,
                repo_type="dataset",
                folder_path=str(staged),
                commit_message=message or f"envkit label push {__version__}",
            ),
            action="upload the dataset",
            repo_id=repo_id,
            endpoint=endpoint,
        )
    result.path = None
    return DatasetPushResult(
        repo_id=repo_id,
        url=f"{endpoint}/datasets/{repo_id}",
        commit_oid=getattr(info, "oid", None),
        export=result,
        files=["README.md", data_path],
    )
