"""Storage of the Hub stand-in: Spaces, their commits and files, on disk.

Files are stored content-addressed by their git blob sha1 (what the real Hub reports as a
regular file's ``oid``) under ``<root>/objects/``; each Space's metadata, refs and commits live
in ``<root>/repos/<ns>/<name>/repo.json``. A commit is applied only after its whole request was
read and checked, under one lock: a client that disconnects mid-commit leaves the Space at its
previous commit, as on the real Hub.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of ``data`` (sha1 of ``b"blob <len>\\0" + data``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


@dataclass
class Space:
    """One Space repo (``ns/name``); datasets use the same record with ``kind="dataset"``."""

    id: str
    kind: str = "space"  # "space" | "dataset" (issue #15: `envkit label push`)
    sdk: str = "docker"
    private: bool = False
    hardware: str = "cpu-basic"
    variables: dict[str, dict[str, str]] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # kept so tests can assert values
    refs: dict[str, str] = field(default_factory=dict)  # "main", "refs/pr/1" -> commit oid
    commits: dict[str, dict[str, Any]] = field(default_factory=dict)
    discussions: list[dict[str, Any]] = field(default_factory=list)
    runtime_script: list[str] = field(default_factory=list)  # stages returned by GET runtime
    stage: str = "BUILDING"
    host: str | None = None  # app URL reported by GET /api/spaces/{id}
    created_at: str = field(default_factory=_now_iso)

    def tree(self, rev: str) -> dict[str, str] | None:
        oid = self.refs.get(rev) or (rev if rev in self.commits else None)
        return None if oid is None else self.commits[oid]["tree"]

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


class HubState:
    """Every Space of the stand-in, persisted under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        (self.root / "repos").mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.spaces: dict[str, Space] = {}
        self.datasets: dict[str, Space] = {}
        self.sequence = 0

    # -- blobs -------------------------------------------------------------------------------
    def put_blob(self, data: bytes) -> str:
        oid = git_blob_sha1(data)
        path = self.root / "objects" / oid
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return oid

    def blob(self, oid: str) -> bytes:
        return (self.root / "objects" / oid).read_bytes()

    # -- repos -------------------------------------------------------------------------------
    def save(self, space: Space) -> None:
        kind_dir = "repos" if space.kind == "space" else f"repos-{space.kind}"
        path = self.root / kind_dir / space.id / "repo.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(space.to_json(), indent=1, sort_keys=True))
        tmp.replace(path)

    def create(
        self,
        repo_id: str,
        *,
        sdk: str,
        private: bool,
        hardware: str | None,
        author: str,
        kind: str = "space",
    ) -> Space:
        with self.lock:
            space = Space(
                id=repo_id, sdk=sdk, private=private, hardware=hardware or "cpu-basic", kind=kind
            )
            (self.datasets if kind == "dataset" else self.spaces)[repo_id] = space
            # The Hub seeds every new repo with a .gitattributes in an initial commit.
            self.commit(
                space,
                "main",
                {".gitattributes": b"*.bin filter=lfs diff=lfs merge=lfs -text\n"},
                [],
                "initial commit",
                author,
            )
            return space

    def commit(
        self,
        space: Space,
        ref: str,
        adds: dict[str, bytes],
        deletes: list[str],
        summary: str,
        author: str,
    ) -> str:
        """Apply one commit to ``ref`` (all or nothing); returns the new commit oid."""
        with self.lock:
            parent = space.refs.get(ref)
            tree = dict(space.commits[parent]["tree"]) if parent else {}
            for path in deletes:
                if path.endswith("/"):
                    tree = {p: o for p, o in tree.items() if not p.startswith(path)}
                else:
                    tree.pop(path, None)
            for path, data in adds.items():
                tree[path] = self.put_blob(data)
            self.sequence += 1
            oid = hashlib.sha1(
                f"{space.id}{ref}{parent}{self.sequence}{summary}".encode()
            ).hexdigest()
            space.commits[oid] = {
                "tree": tree,
                "parent": parent,
                "summary": summary,
                "author": author,
                "date": _now_iso(),
            }
            space.refs[ref] = oid
            space.stage = "BUILDING"
            self.save(space)
            return oid
