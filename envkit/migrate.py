"""``envkit migrate``: move an existing environment forward to OpenEnv 0.10.

.. code-block:: python

    from envkit.migrate import migrate

    result = migrate("envs/my-env", dry_run=True)
    print(result.diff())          # unified diff of every file it would change
    result = migrate("envs/my-env")
    for change in result.changes:
        print(change.path, change.summary)

What it does, file by file (each step only when it applies, so a second run changes nothing):

* ``pyproject.toml``, ``requirements*.txt`` (root and ``server/``) and Dockerfile ``RUN`` lines:
  the superseded ``openenv-core`` distribution (and ``openenv[core]``, an extra 0.10 no longer
  has) becomes :data:`~envkit.envdir.constants.OPENENV_REQUIREMENT`; a project that declared both keeps one ``openenv``.
* ``openenv.yaml``: envkit's pre-0.10 keys directly under ``validation:`` move to RFC 008's
  fields (``reward_range`` -> ``validation.reward.range``, ``floor_margin`` ->
  ``validation.reward.floor_margin``) or to envkit's own top-level ``envkit:`` mapping
  (``oracle``, ``max_steps``, ``seeds``, ``step_timeout_s``, ``startup_timeout_s``); the
  blocks RFC 008 requires (``reward``, ``resources``, ``capabilities``, ``types``) are added
  with OpenEnv's defaults when missing; ``version`` is added from ``pyproject.toml``; when a
  root Dockerfile and a probe plan exist, ``validation.execution`` (manifest schema 2) points
  at them.
* ``server/Dockerfile`` moves to the root ``Dockerfile`` when there is no root one (a Docker
  Space and RFC 008's ``execution.dockerfile`` default both want it there).
* ``validation/runtime.json``: OpenEnv's runtime probe plan, made by playing the oracle
  (:func:`envkit.probe_plan.make_probe_plan`) when ``envkit.oracle`` is declared and no plan
  exists. A plan that ``validation.execution`` already declares is re-recorded the same way
  when it is missing, breaks OpenEnv's plan schema, or is stale: the served environment
  refuses one of its actions (the plan was recorded before the action changed), which is
  what EK431 reports.

Round trips keep user content: YAML through ruamel's round-trip mode and TOML through tomlkit
keep comments, key order and unknown keys. Nothing is written until every file has been read
and parsed: a file that cannot be parsed stops the migration with its location and nothing
changes. Writes are atomic per file.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir import EnvDir
from envkit.envdir.constants import (
    DOCKERFILE_NAME,
    LEGACY_KEYS,
    MANIFEST_NAME,
    OPENENV_REQUIREMENT,
    PROBE_PLAN_PATH,
)
from envkit.envdir.toml import PYPROJECT_NAME
from envkit.errors import MigrationRefused, SpecError  # MigrationRefused: old home here

# envkit's pre-0.10 keys under `validation:` and where each goes now.
LEGACY_TO_ENVKIT = ("oracle", "max_steps", "seeds", "step_timeout_s", "startup_timeout_s")
LEGACY_TO_REWARD = {"reward_range": "range", "floor_margin": "floor_margin"}

# RFC 008 defaults for the required blocks (the values `openenv init` 0.10 writes, except
# memory, which envkit's templates keep at 512 MB).
DEFAULT_REWARD = {"range": [0.0, 1.0], "oracle_tolerance": 0.0, "floor_margin": 0.1}
DEFAULT_RESOURCES = {"cpu": 1, "memory_mb": 512, "disk_mb": 1024, "episode_timeout_s": 60}
DEFAULT_EXECUTION = {
    "kind": "openenv_ws",
    "probe_path": PROBE_PLAN_PATH,
    "dockerfile": DOCKERFILE_NAME,
    "context": ".",
}

MOVED_DOCKERFILE = (
    "moved from server/Dockerfile (a Docker Space and RFC 008's "
    "execution.dockerfile want it at the root)"
)
_LEGACY_COMMENT_MARK = "envkit's extension of the manifest"
_NEW_VALIDATION_COMMENT = (
    "RFC 008 manifest, owned by OpenEnv (`openenv validate` reads it; envkit checks it too)."
)
_ENVKIT_COMMENT = "envkit's own facts (OpenEnv ignores this key): what `envkit validate` plays."
# A requirement naming the superseded distribution, or `openenv` with the `core` extra.
_REQ_NAME = re.compile(r"^\s*(openenv[-_.]core|openenv)\s*(\[[^\]]*\])?", re.IGNORECASE)
# The same inside a Dockerfile RUN line (pip/uv install arguments), quoted or not.
_DOCKER_REQ = re.compile(
    r"""(?P<q>["']?)openenv[-_.]core(?:\[[^\]\s]*\])?(?:\s*[<>=!~][^"'\s]*)?(?P=q)""", re.IGNORECASE
)


@dataclass
class FileChange:
    """One file migrate writes, moves or creates.

    Attributes:
        path: POSIX path relative to the environment root.
        before: current text (``None``: the file is new).
        after: new text (``None``: the file is removed, e.g. moved elsewhere).
        summary: one line per change made in this file, for people.
    """

    path: str
    before: str | None
    after: str | None
    summary: list[str] = field(default_factory=list)

    def diff(self) -> str:
        """Unified diff (``a/PATH`` -> ``b/PATH``; ``/dev/null`` for a new or removed file)."""
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        a = f"a/{self.path}" if self.before is not None else "/dev/null"
        b = f"b/{self.path}" if self.after is not None else "/dev/null"
        text = "".join(difflib.unified_diff(old, new, a, b))
        return text if text.endswith("\n") or not text else text + "\n"


@dataclass
class MigrationResult:
    """What :func:`migrate` changed (or would change, with ``dry_run``).

    Attributes:
        root: the environment directory.
        changes: files written, created or removed, in a stable order.
        notes: what migrate could not do, each with the next step.
        dry_run: nothing was written.
    """

    root: Path
    changes: list[FileChange]
    notes: list[str]
    dry_run: bool

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def diff(self) -> str:
        """All changes as one unified diff."""
        return "".join(c.diff() for c in self.changes)


PlanMaker = Callable[[Path], dict[str, Any]]
# ``(root, plan) -> why the plan is stale`` (``None``: it still replays).
PlanChecker = Callable[[Path, dict[str, Any]], str | None]


def migrate(
    path: str | Path = ".",
    *,
    dry_run: bool = False,
    python: str | None = None,
    probe_plan: bool = True,
    plan_maker: PlanMaker | None = None,
    plan_checker: PlanChecker | None = None,
) -> MigrationResult:
    """Move the environment at ``path`` forward to OpenEnv 0.10 and envkit's manifest layout.

    Args:
        path: environment directory (holds ``openenv.yaml``).
        dry_run: compute the changes and return them; write nothing.
        python: interpreter that serves the environment, used to play the oracle for the
            probe plan (default: ``PATH/.venv/bin/python`` if present, else the current one).
        probe_plan: make ``validation/runtime.json`` by playing the oracle when it is
            missing, invalid or stale and an oracle is declared (checking a declared plan
            starts the server once to replay it). ``False``: never start anything.
        plan_maker: ``root -> plan`` (default: :func:`envkit.probe_plan.make_probe_plan`
            with ``python``); for callers that already have a server.
        plan_checker: ``(root, plan) -> reason or None`` telling whether a declared,
            schema-valid plan is stale (default: serve the environment with ``python`` and
            replay the plan; a refused action makes it stale).

    Returns:
        The :class:`MigrationResult`; ``changes`` is empty when the environment is already
        current (migrate is idempotent).

    Raises:
        SpecError: ``path`` is not an environment directory (no ``openenv.yaml``).
        MigrationRefused: a file migrate would change cannot be parsed (YAML, TOML); the
            message names the file and line; nothing was written.
        OSError: a file cannot be written (files written before it stay written; each
            write is atomic).
    """
    env = EnvDir(path)
    root = env.root
    if not env.has_manifest:
        raise SpecError(
            f"No {MANIFEST_NAME} in {root}: this is not an OpenEnv environment directory.",
            hint="Pass the environment's directory: `envkit migrate PATH`.",
        )
    notes: list[str] = []
    changes = _migrate_dependencies(env)
    dockerfile_changes, has_root_dockerfile = _migrate_dockerfiles(env)
    changes += dockerfile_changes
    facts = _DirFacts(
        has_root_dockerfile=has_root_dockerfile,
        plan_exists=(root / PROBE_PLAN_PATH).is_file(),
        plan_possible=probe_plan,
    )
    manifest_change, oracle = _migrate_manifest(env, facts, notes)
    maker = plan_maker or _default_plan_maker(python)
    if manifest_change is not None:
        changes += _manifest_and_plan(root, manifest_change, maker, oracle, notes)
    if not any(c.path == PROBE_PLAN_PATH for c in changes):
        checker = plan_checker or _default_plan_checker(python)
        changes += _refresh_plan(env, maker, checker if probe_plan else None, notes)
    if not dry_run:
        _apply(root, changes)
    return MigrationResult(root=root, changes=changes, notes=notes, dry_run=dry_run)


def _manifest_and_plan(
    root: Path,
    manifest_change: _ManifestChange,
    maker: PlanMaker,
    oracle: str | None,
    notes: list[str],
) -> list[FileChange]:
    """The manifest's change and, when it adds ``validation.execution``, the probe plan it
    points at. A plan that cannot be made drops ``validation.execution`` again (the reason is
    appended to ``notes``), so the manifest never names a missing file."""
    plan_change = None
    if manifest_change.plan_needed:
        plan_change = _make_plan(root, maker, oracle, notes)
        if plan_change is None:
            manifest_change = manifest_change.without_execution()
    return [c for c in (manifest_change.change, plan_change) if c is not None]


@dataclass(frozen=True)
class _DirFacts:
    """What the rest of the directory says about the manifest's ``validation.execution``.

    Attributes:
        has_root_dockerfile: a root Dockerfile exists or this migration moves one there.
        plan_exists: ``validation/runtime.json`` exists.
        plan_possible: migrate may make the plan by playing the oracle (``--probe-plan``).
    """

    has_root_dockerfile: bool
    plan_exists: bool
    plan_possible: bool


# --------------------------------------------------------------------------- dependencies


def _add(changes: list[FileChange], change: FileChange | None) -> None:
    if change is not None:
        changes.append(change)


def _rel(root: Path, p: Path) -> str:
    return p.relative_to(root).as_posix()


def _requirement_kind(req: str) -> str | None:
    """``"core"`` for an openenv-core requirement (or ``openenv[core]``), ``"openenv"`` for a
    plain openenv one, else ``None``."""
    m = _REQ_NAME.match(req)
    if not m:
        return None
    rest = req[m.end() :].lstrip()
    if rest and rest[0] not in "<>=!~;@,(" and not rest.startswith("["):
        return None  # e.g. `openenv-something`: another distribution
    name = m.group(1).lower().replace("_", "-").replace(".", "-")
    extras = (m.group(2) or "").lower()
    if name == "openenv-core" or "core" in re.split(r"[\[\],\s]+", extras):
        return "core"
    return "openenv"


def _new_requirement(old: str) -> str:
    """``openenv-core[x]>=0.3; python_version>='3.10'`` -> the OpenEnv requirement with the same marker
    (the environment marker is kept)."""
    marker = old.split(";", 1)[1].strip() if ";" in old else ""
    return f"{OPENENV_REQUIREMENT}; {marker}" if marker else OPENENV_REQUIREMENT


def _migrate_dependency_list(items: list[str]) -> tuple[list[str | None], list[str]]:
    """Per item: the new string, the same one, or ``None`` to drop; plus summary lines."""
    kinds = [_requirement_kind(s) for s in items]
    has_plain = "openenv" in kinds
    out: list[str | None] = []
    summary: list[str] = []
    replaced = False
    for item, kind in zip(items, kinds):
        if kind != "core":
            out.append(item)
        elif has_plain or replaced:
            out.append(None)
            summary.append(
                f"dropped {item!r} (openenv is already declared; the two "
                "distributions overwrite each other)"
            )
        else:
            new = _new_requirement(item)
            out.append(new)
            replaced = True
            summary.append(f"{item!r} -> {new!r}")
    return out, summary


def _migrate_pyproject(root: Path, path: Path) -> FileChange | None:
    import tomlkit
    from tomlkit.exceptions import ParseError

    text = path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise MigrationRefused(
            f"{_rel(root, path)}:{exc.line}:{exc.col}: cannot parse TOML ({exc}); migrate "
            "changed nothing.",
            hint="Fix the TOML syntax, then run `envkit migrate` again.",
        ) from None
    summary: list[str] = []
    project = doc.get("project")
    arrays: list[Any] = []
    if isinstance(project, dict):
        if isinstance(project.get("dependencies"), list):
            arrays.append(project["dependencies"])
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            arrays += [v for v in extras.values() if isinstance(v, list)]
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        arrays += [v for v in groups.values() if isinstance(v, list)]
    for arr in arrays:
        strings = [str(v) if isinstance(v, str) else "" for v in arr]
        new, lines = _migrate_dependency_list(strings)
        if not lines:
            continue
        summary += lines
        for i in reversed(range(len(new))):
            if new[i] is None:
                del arr[i]
            elif new[i] != strings[i]:
                arr[i] = new[i]
    if not summary:
        return None
    return FileChange(_rel(root, path), text, tomlkit.dumps(doc), summary)


def _migrate_requirements(root: Path, path: Path) -> FileChange | None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    bodies: list[str] = []
    for line in lines:
        body = line.split("#", 1)[0].strip()
        bodies.append("" if body.startswith("-") else body)
    new, summary = _migrate_dependency_list(bodies)
    if not summary:
        return None
    out: list[str] = []
    for line, body, repl in zip(lines, bodies, new):
        if repl is None:
            continue
        if body and repl != body:
            line = line.replace(body, repl, 1)
        out.append(line)
    return FileChange(_rel(root, path), text, "".join(out), summary)


def _migrate_dockerfile_text(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        return (
            f'"{OPENENV_REQUIREMENT}"'
            if not m.group("q")
            else f"{m.group('q')}{OPENENV_REQUIREMENT}{m.group('q')}"
        )

    out: list[str] = []
    in_run = False
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        starts_run = stripped[:4].upper() == "RUN " or stripped[:4].upper() == "RUN\t"
        if (in_run or starts_run) and not stripped.startswith("#"):
            line = _DOCKER_REQ.sub(repl, line)
        if starts_run or in_run:
            in_run = line.rstrip().endswith("\\")
        out.append(line)
    return "".join(out)


def _migrate_dockerfile(root: Path, path: Path) -> FileChange | None:
    text = path.read_text(encoding="utf-8")
    new = _migrate_dockerfile_text(text)
    if new == text:
        return None
    return FileChange(_rel(root, path), text, new, ["openenv-core -> openenv in RUN lines"])


def _migrate_dependencies(env: EnvDir) -> list[FileChange]:
    """pyproject.toml, then ``requirements*.txt`` at the root and in ``server/``, sorted.

    Raises:
        MigrationRefused: pyproject.toml cannot be parsed.
    """
    root = env.root
    changes: list[FileChange] = []
    pyproject = root / PYPROJECT_NAME
    if pyproject.is_file():
        _add(changes, _migrate_pyproject(root, pyproject))
    for req in sorted([*root.glob("requirements*.txt"), *root.glob("server/requirements*.txt")]):
        _add(changes, _migrate_requirements(root, req))
    return changes


def _migrate_dockerfiles(env: EnvDir) -> tuple[list[FileChange], bool]:
    """Move ``server/Dockerfile`` to the root when there is no root one, else migrate each
    Dockerfile's ``RUN`` lines in place.

    Returns:
        ``(changes, has_root_dockerfile)``: the second is true when a root Dockerfile exists
        or is about to (the move).
    """
    root = env.root
    root_df, server_df = env.dockerfile_path, root / "server" / DOCKERFILE_NAME
    if not root_df.is_file() and server_df.is_file():
        text = server_df.read_text(encoding="utf-8")
        new = _migrate_dockerfile_text(text)
        summary = [MOVED_DOCKERFILE] + (
            ["openenv-core -> openenv in RUN lines"] if new != text else []
        )
        return [
            FileChange(DOCKERFILE_NAME, None, new, summary),
            FileChange("server/Dockerfile", text, None, ["moved to Dockerfile"]),
        ], True
    changes: list[FileChange] = []
    for df in (root_df, server_df):
        if df.is_file():
            _add(changes, _migrate_dockerfile(root, df))
    return changes, root_df.is_file()


# --------------------------------------------------------------------------- manifest


@dataclass
class _ManifestChange:
    change: FileChange | None
    plan_needed: bool
    _without_execution: FileChange | None = None

    def without_execution(self) -> _ManifestChange:
        return _ManifestChange(self._without_execution, False)


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _dump(y: Any, data: Any) -> str:
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def _flow(value: Any) -> Any:
    """Short lists in flow style (``[0.0, 1.0]``), as people write them in manifests."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, list):
        seq = CommentedSeq(value)
        seq.fa.set_flow_style()
        return seq
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = _flow(v)
        return m
    return value


def _inline_map(value: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    m = CommentedMap(value)
    m.fa.set_flow_style()
    return m


def _comment_token(mapping: Any, key: Any) -> Any:
    items = getattr(getattr(mapping, "ca", None), "items", None)
    entry = items.get(key) if items else None
    return entry[2] if entry and len(entry) > 2 else None


def _split_comment(value: str) -> tuple[str | None, str]:
    """A key's comment token holds its end-of-line comment (if any) up to the first newline,
    then the blank and comment lines that follow the value: ``(eol, following)``."""
    first, _, rest = value.partition("\n")
    eol = first.strip() if first.strip().startswith("#") else None
    return eol, rest


def _move_comment(src: Any, key: str, dst: Any, new_key: str) -> None:
    """Carry an end-of-line comment of ``src[key]`` over to ``dst[new_key]``."""
    tok = _comment_token(src, key)
    if tok is not None:
        eol, _ = _split_comment(tok.value)
        if eol:
            dst.yaml_add_eol_comment(eol, new_key, column=tok.column)


def _last_leaf(mapping: Any) -> tuple[Any, Any] | None:
    """The mapping and key whose comment token holds what follows ``mapping`` in the file."""
    from ruamel.yaml.comments import CommentedMap

    while isinstance(mapping, CommentedMap) and len(mapping):
        key = list(mapping.keys())[-1]
        value = mapping[key]
        if isinstance(value, CommentedMap) and len(value) and not value.fa.flow_style():
            mapping = value
            continue
        return mapping, key
    return None


def _take_following(mapping: Any) -> str:
    """Detach the blank/comment lines that follow ``mapping`` (they introduce the next key);
    an end-of-line comment stays where it is."""
    leaf = _last_leaf(mapping)
    if leaf is None:
        return ""
    tok = _comment_token(*leaf)
    if tok is None:
        return ""
    eol, following = _split_comment(tok.value)
    if not following:
        return ""
    if eol:
        tok.value = eol + "\n"
    else:
        del leaf[0].ca.items[leaf[1]]
    return following


def _put_following(mapping: Any, following: str) -> None:
    """Re-attach lines detached by :func:`_take_following` after ``mapping``'s last value."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    leaf = _last_leaf(mapping)
    if not following or leaf is None:
        return
    m, key = leaf
    tok = _comment_token(m, key)
    if tok is not None:
        eol, _ = _split_comment(tok.value)
        tok.value = (eol or "") + "\n" + following
        return
    m.ca.items[key] = [None, None, CommentToken("\n" + following, CommentMark(0), None), None]


def _tag_from_name(name: str) -> str:
    tag = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    return tag or "environment"


def _migrate_manifest(
    env: EnvDir, facts: _DirFacts, notes: list[str]
) -> tuple[_ManifestChange | None, str | None]:
    """Migrate ``openenv.yaml`` in memory, step by step (each step appends to ``summary``).

    Args:
        env: the environment directory.
        facts: what the rest of the directory says (see :class:`_DirFacts`).
        notes: what migrate could not do is appended here.

    Returns:
        ``(change, oracle)``: ``change`` is ``None`` when the manifest is already current;
        ``oracle`` is ``envkit.oracle`` (``module:attr``) or ``None``.

    Raises:
        MigrationRefused: the manifest, ``validation:`` or ``envkit:`` is not a mapping, or
            the file is not YAML.
    """
    from ruamel.yaml.comments import CommentedMap

    text = env.manifest_path.read_text(encoding="utf-8")
    y = _yaml()
    data = _load_manifest(y, text)
    summary: list[str] = []
    _add_version(data, env, summary)
    validation, envkit_section = _sections(data)
    # Lines after the block (blank lines, comments introducing the next key) hang on its last
    # value: detach them before keys move, re-attach after the new last value.
    following = _take_following(validation)
    legacy = [k for k in list(validation.keys()) if k in LEGACY_KEYS]
    if legacy:
        envkit_section = _move_legacy_keys(validation, envkit_section, legacy, summary)
    _add_required_blocks(data, validation, summary)
    oracle = envkit_section.get("oracle") if isinstance(envkit_section, CommentedMap) else None
    plan_needed = _add_execution(validation, oracle, facts, summary, notes)
    if envkit_section is not None and "envkit" not in data:
        data.insert(list(data.keys()).index("validation") + 1, "envkit", envkit_section)
        _set_before_comment(data, "envkit", _ENVKIT_COMMENT)
    if legacy:
        _replace_legacy_comment(data)
    keys = list(data.keys())
    after_validation = keys[keys.index("validation") + 1 : keys.index("validation") + 2]
    _put_following(data["envkit"] if after_validation == ["envkit"] else validation, following)
    if not summary:
        return None, oracle
    return _manifest_change(y, data, text, summary, plan_needed), oracle


def _load_manifest(y: Any, text: str) -> Any:
    """``openenv.yaml``'s text as a round-trip ``CommentedMap``.

    Raises:
        MigrationRefused: not YAML (located when the parser gives a position), or not a
            mapping.
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = y.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{MANIFEST_NAME}:{mark.line + 1}:{mark.column + 1}" if mark else MANIFEST_NAME
        raise MigrationRefused(
            f"{where}: cannot parse YAML ({(exc.problem or exc.context or '').strip()}); "
            "migrate changed nothing.",
            hint="Fix the YAML syntax, then run `envkit migrate` again.",
        ) from None
    except YAMLError as exc:
        raise MigrationRefused(
            f"{MANIFEST_NAME}: cannot parse YAML ({exc}); migrate changed nothing.",
            hint="Fix the YAML syntax.",
        ) from None
    if not isinstance(data, CommentedMap):
        raise MigrationRefused(
            f"{MANIFEST_NAME}: the manifest must be a YAML mapping; migrate changed nothing.",
            hint="See `envkit validate --explain EK101`.",
        )
    return data


def _add_version(data: Any, env: EnvDir, summary: list[str]) -> None:
    """``version`` next to ``name`` (RFC 008 reads it there): pyproject's, else ``0.1.0``."""
    if "version" in data:
        return
    version = _pyproject_version(env) or "0.1.0"
    pos = list(data.keys()).index("name") + 1 if "name" in data else 0
    data.insert(pos, "version", version)
    summary.append(f"added version: {version}")


def _sections(data: Any) -> tuple[Any, Any]:
    """``(validation, envkit)``: ``validation:`` (added empty when missing) and ``envkit:``
    (``None`` when missing).

    Raises:
        MigrationRefused: either is present but not a mapping.
    """
    from ruamel.yaml.comments import CommentedMap

    validation = data.get("validation")
    if validation is None:
        validation = CommentedMap()
        data["validation"] = validation
    if not isinstance(validation, CommentedMap):
        raise MigrationRefused(
            f"{MANIFEST_NAME}: `validation:` must be a mapping; migrate changed nothing.",
            hint="Make `validation:` a mapping of keys.",
        )
    envkit_section = data.get("envkit")
    if envkit_section is not None and not isinstance(envkit_section, CommentedMap):
        raise MigrationRefused(
            f"{MANIFEST_NAME}: `envkit:` must be a mapping; migrate changed nothing.",
            hint="Make `envkit:` a mapping of keys.",
        )
    return validation, envkit_section


def _move_legacy_keys(
    validation: Any, envkit_section: Any, legacy: list[str], summary: list[str]
) -> Any:
    """Move envkit's pre-0.10 keys out of ``validation:``: to ``validation.reward`` or to
    ``envkit:``. A key already present at its destination wins; the old one is dropped.

    Returns:
        The ``envkit:`` mapping (made when a key goes there and there was none), or ``None``.
    """
    from ruamel.yaml.comments import CommentedMap

    if envkit_section is None and any(k in LEGACY_TO_ENVKIT for k in legacy):
        envkit_section = CommentedMap()
    reward = validation.get("reward")
    if reward is None:
        reward = CommentedMap()
    for key in legacy:
        value = validation[key]
        if key in LEGACY_TO_REWARD:
            new_key = LEGACY_TO_REWARD[key]
            if new_key not in reward:
                reward[new_key] = _flow(value) if isinstance(value, list) else value
                _move_comment(validation, key, reward, new_key)
            summary.append(f"validation.{key} -> validation.reward.{new_key}")
        else:
            if key not in envkit_section:
                envkit_section[key] = _flow(value) if isinstance(value, list) else value
                _move_comment(validation, key, envkit_section, key)
            summary.append(f"validation.{key} -> envkit.{key}")
        del validation[key]
    if reward and "reward" not in validation:
        validation.insert(0, "reward", reward)
    return envkit_section


def _add_required_blocks(data: Any, validation: Any, summary: list[str]) -> None:
    """The RFC 008 blocks OpenEnv requires (``reward``, ``resources``, ``capabilities``,
    ``types``), with OpenEnv's defaults, each in that order; missing ``reward`` fields too."""
    from ruamel.yaml.comments import CommentedMap

    order = ["reward", "resources", "capabilities", "types"]
    reward = validation.get("reward")
    if reward is None:
        validation.insert(0, "reward", _flow(DEFAULT_REWARD))
        summary.append("added validation.reward (range [0, 1], floor_margin 0.1)")
    elif isinstance(reward, CommentedMap):
        for k, v in DEFAULT_REWARD.items():
            if k not in reward:
                pos = list(DEFAULT_REWARD).index(k)
                reward.insert(min(pos, len(reward)), k, _flow(v))
                summary.append(f"added validation.reward.{k}: {v}")
    defaults = {
        "resources": _inline_map(dict(DEFAULT_RESOURCES)),
        "capabilities": _flow({"verifier": {"kind": "reward_channel"}}),
        "types": _flow({"tags": [_tag_from_name(data.get("name", ""))]}),
    }
    for key in order[1:]:
        if key not in validation:
            keys = list(validation.keys())
            prev = [k for k in order[: order.index(key)] if k in keys]
            pos = keys.index(prev[-1]) + 1 if prev else 0
            validation.insert(pos, key, defaults[key])
            summary.append(f"added validation.{key} (OpenEnv's required block; check the values)")


def _add_execution(
    validation: Any, oracle: str | None, facts: _DirFacts, summary: list[str], notes: list[str]
) -> bool:
    """``validation.execution`` (manifest schema 2) when a root Dockerfile and a probe plan
    exist or the plan can be made; otherwise a note saying why not.

    Returns:
        True when the plan it points at must still be made (by playing ``oracle``).
    """
    if "execution" in validation:
        return False
    if not facts.has_root_dockerfile:
        notes.append(
            "No root Dockerfile: `validation.execution` was not added. Add a "
            "Dockerfile at the root, then run `envkit migrate` again."
        )
        return False
    if facts.plan_exists or (facts.plan_possible and oracle):
        validation["execution"] = _flow(dict(DEFAULT_EXECUTION))
        summary.append(
            f"added validation.execution (manifest schema 2: the root Dockerfile and {PROBE_PLAN_PATH})"
        )
        return not facts.plan_exists
    if oracle:
        notes.append(
            f"No {PROBE_PLAN_PATH} (not made: --no-probe-plan): `validation.execution` "
            "was not added. Run `envkit migrate` without --no-probe-plan to make it "
            "by playing the oracle."
        )
    else:
        notes.append(
            f"No {PROBE_PLAN_PATH} and no oracle: `validation.execution` was not added, "
            "so `openenv validate --level runtime` will skip. Declare "
            "`envkit.oracle` and run `envkit migrate` again, or write the probe "
            "plan by hand."
        )
    return False


def _manifest_change(
    y: Any, data: Any, text: str, summary: list[str], plan_needed: bool
) -> _ManifestChange:
    """The manifest's :class:`FileChange`; when the probe plan must still be made, also the
    change without ``validation.execution`` (used if making the plan fails)."""
    change = FileChange(MANIFEST_NAME, text, _dump(y, data), summary)
    alt = None
    if plan_needed:
        del data["validation"]["execution"]
        alt_summary = [s for s in summary if not s.startswith("added validation.execution")]
        alt_text = _dump(y, data)
        alt = FileChange(MANIFEST_NAME, text, alt_text, alt_summary) if alt_text != text else None
    return _ManifestChange(change, plan_needed, alt)


def _set_before_comment(data: Any, key: str, comment: str) -> None:
    data.yaml_set_comment_before_after_key(key, before="\n" + comment, indent=0)


def _replace_legacy_comment(data: Any) -> None:
    """The comment envkit's templates wrote above ``validation:`` described the old layout:
    replace those lines (only those) with one that describes the new block."""
    for key in list(data.ca.items):
        tok = _comment_token(data, key)
        value = getattr(tok, "value", None)
        if not isinstance(value, str) or _LEGACY_COMMENT_MARK not in value:
            continue
        lines, inserted = [], False
        for ln in value.split("\n"):
            if ln.strip().startswith("#") and _is_legacy_line(ln):
                if not inserted:
                    lines.append("# " + _NEW_VALIDATION_COMMENT)
                    inserted = True
                continue
            lines.append(ln)
        tok.value = "\n".join(lines)


def _is_legacy_line(line: str) -> bool:
    s = line.strip().lstrip("#").strip()
    return (
        _LEGACY_COMMENT_MARK in s
        or s.startswith("checks when it plays the environment")
        or "The validation block" in s
    )


def _pyproject_version(env: EnvDir) -> str | None:
    """pyproject's ``[project] version``, ``None`` when missing or unreadable (a pyproject
    that cannot be parsed is reported by :func:`_migrate_pyproject`)."""
    version = env.project_table.get("version")
    return str(version) if isinstance(version, str) and version else None


# --------------------------------------------------------------------------- probe plan


def _default_plan_maker(python: str | None) -> PlanMaker:
    def make(root: Path) -> dict[str, Any]:
        from envkit.probe_plan import make_probe_plan

        return make_probe_plan(root, python=python)

    return make


def _make_plan(
    root: Path,
    maker: PlanMaker,
    oracle: str | None,
    notes: list[str],
    *,
    before: str | None = None,
    why: str | None = None,
) -> FileChange | None:
    """Play the oracle with ``maker`` and return the plan's :class:`FileChange`.

    Args:
        root: the environment directory.
        maker: ``root -> plan``.
        oracle: ``envkit.oracle`` (``module:attr``), for the messages.
        notes: a plan that cannot be made appends the reason here (and returns ``None``).
        before: the current plan's text when it is re-recorded (``None``: a new file).
        why: why an existing plan is re-recorded (``missing``, ``stale: ...``); ``None`` for
            a plan that ``validation.execution`` is about to declare.
    """
    import json

    from envkit.errors import EnvkitError

    try:
        plan = maker(root)
    except EnvkitError as exc:
        tail = (
            "the plan was not re-recorded"
            if why is not None
            else "`validation.execution` was not added"
        )
        notes.append(
            f"Could not make {PROBE_PLAN_PATH} by playing the oracle ({oracle}): "
            f"{exc.message} {tail}; fix the cause and run `envkit migrate` again."
        )
        return None
    text = json.dumps(plan, indent=2) + "\n"
    played = f"reset + {len(plan.get('actions', []))} action(s) played by the oracle ({oracle})"
    line = f"probe plan: {played}" if why is None else f"probe plan re-recorded ({why}): {played}"
    return FileChange(PROBE_PLAN_PATH, before, text, [line])


def _refresh_plan(
    env: EnvDir, maker: PlanMaker, checker: PlanChecker | None, notes: list[str]
) -> list[FileChange]:
    """Re-record the probe plan that ``validation.execution`` already declares when it is
    missing, breaks the plan schema, or is stale (``checker`` says why).

    Only the default ``probe_path`` (:data:`PROBE_PLAN_PATH`) is re-recorded: a plan kept
    elsewhere was placed by hand, and envkit does not overwrite hand-made files.

    Args:
        env: the environment directory (its manifest as it was before this migration:
            ``validation.execution`` is only ever added by migrate together with its plan).
        maker: ``root -> plan``.
        checker: ``(root, plan) -> reason or None``; ``None`` when ``--no-probe-plan`` forbids
            starting anything (then a missing or invalid plan only gets a note).
        notes: what could not be done is appended here.

    Returns:
        The plan's change, or nothing.
    """
    from envkit.errors import EnvkitError
    from envkit.probe_plan import PlanError, read_plan

    spec = env.spec
    if env.manifest is None or spec.probe_path != PROBE_PLAN_PATH:
        return []
    path = env.root / PROBE_PLAN_PATH
    before = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    why: str | None = None
    try:
        plan = read_plan(env.root, PROBE_PLAN_PATH)
    except PlanError as exc:
        why = "missing" if before is None else f"invalid: {exc.message}"
    if checker is None or not spec.oracle:
        if why is not None:
            how = (
                "run `envkit migrate` without --no-probe-plan to re-record it"
                if spec.oracle
                else "declare `envkit.oracle` and run `envkit migrate` again, or write it by hand"
            )
            notes.append(f"{PROBE_PLAN_PATH} is {why}; it was not re-recorded: {how}.")
        return []
    if why is None:
        try:
            why = checker(env.root, plan)
        except EnvkitError as exc:
            notes.append(
                f"Could not check whether {PROBE_PLAN_PATH} still replays: {exc.message} "
                "It was left as it is."
            )
            return []
    if why is None:
        return []
    change = _make_plan(env.root, maker, spec.oracle, notes, before=before, why=why)
    return [change] if change is not None else []


def _default_plan_checker(python: str | None) -> PlanChecker:
    """Serve the environment with ``python`` (one server start, 1-3 s) and replay the plan:
    the first refused action makes it stale (the check EK431 makes in ``envkit validate``)."""

    def check(root: Path, plan: dict[str, Any]) -> str | None:
        from envkit.envdir.manifest import read_manifest
        from envkit.envdir.project import resolve_python
        from envkit.server import start_server

        manifest = read_manifest(root)
        spec = manifest.spec
        server = start_server(root, manifest.app, python=resolve_python(root, python))
        try:
            server.wait_healthy(timeout_s=spec.startup_timeout_s)
            return _replay_refusal(server.url, plan, timeout_s=max(spec.step_timeout_s * 6, 30.0))
        finally:
            server.stop()

    return check


def _replay_refusal(base_url: str, plan: dict[str, Any], *, timeout_s: float) -> str | None:
    """Replay ``plan`` on one session at ``base_url``: why it is stale (its first refused
    action), or ``None`` when every action is accepted up to ``done``.

    Raises:
        WireError: the server cannot be reached or does not answer within ``timeout_s``
            seconds (that says nothing about the plan).
    """
    from envkit.wire import EnvErrorFrame, EnvSession

    reset, actions = plan["reset"], plan["actions"]
    with EnvSession(base_url, timeout_s=timeout_s) as session:
        result = session.reset(
            seed=reset["seed"], episode_id=reset["episode_id"], **(reset.get("options") or {})
        )
        for i, action in enumerate(actions):
            if result.done:
                break
            try:
                result = session.step(action)
            except EnvErrorFrame as exc:
                return f"stale: the environment refused its action {i + 1} of {len(actions)}: {exc.message}"
    return None


# --------------------------------------------------------------------------- writing


def _apply(root: Path, changes: list[FileChange]) -> None:
    from envkit.fsutil import write_atomic

    for c in changes:
        if c.after is not None:
            write_atomic(root / c.path, c.after)
    for c in changes:
        if c.after is None:
            (root / c.path).unlink(missing_ok=True)
