"""``openenv.yaml`` to RFC 008's layout plus envkit's ``envkit:`` mapping, through ruamel's
round-trip mode (comments, key order and unknown keys survive)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, MarkedYAMLError, YAMLError
from ruamel.yaml.tokens import CommentToken

from envkit.envdir import EnvDir
from envkit.envdir.constants import DOCKERFILE_NAME, LEGACY_KEYS, MANIFEST_NAME, PROBE_PLAN_PATH
from envkit.errors import MigrationRefused
from envkit.migrate.changes import FileChange

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
_LEGACY_COMMENT_MARK = "envkit's extension of the manifest"
_NEW_VALIDATION_COMMENT = (
    "RFC 008 manifest, owned by OpenEnv (`openenv validate` reads it; envkit checks it too)."
)
_ENVKIT_COMMENT = "envkit's own facts (OpenEnv ignores this key): what `envkit validate` plays."


@dataclass(frozen=True)
class DirFacts:
    """What the rest of the directory says about the manifest's ``validation.execution``.

    Attributes:
        has_root_dockerfile: a root Dockerfile exists or this migration moves one there.
        plan_exists: ``validation/runtime.json`` exists.
        plan_possible: migrate may make the plan by playing the oracle (``--probe-plan``).
    """

    has_root_dockerfile: bool
    plan_exists: bool
    plan_possible: bool


@dataclass
class ManifestChange:
    """The manifest's change, as :func:`migrate_manifest` made it.

    Attributes:
        change: the new ``openenv.yaml`` (``None``: already current).
        plan_needed: ``change`` adds ``validation.execution`` and the probe plan it points at
            must still be made.
    """

    change: FileChange | None
    plan_needed: bool
    _without_execution: FileChange | None = None

    def without_execution(self) -> ManifestChange:
        """The same change without ``validation.execution`` (when the plan cannot be made)."""
        return ManifestChange(self._without_execution, False)


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _dump(y: YAML, data: CommentedMap) -> str:
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def _flow(value: object) -> object:
    """Short lists in flow style (``[0.0, 1.0]``), as people write them in manifests."""
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


def _inline_map(value: dict[str, Any]) -> CommentedMap:
    m = CommentedMap(value)
    m.fa.set_flow_style()
    return m


def _comment_token(mapping: object, key: object) -> CommentToken | None:
    items = getattr(getattr(mapping, "ca", None), "items", None)
    entry = items.get(key) if items else None
    return entry[2] if entry and len(entry) > 2 else None


def _split_comment(value: str) -> tuple[str | None, str]:
    """A key's comment token holds its end-of-line comment (if any) up to the first newline,
    then the blank and comment lines that follow the value: ``(eol, following)``."""
    first, _, rest = value.partition("\n")
    eol = first.strip() if first.strip().startswith("#") else None
    return eol, rest


def _move_comment(src: CommentedMap, key: str, dst: CommentedMap, new_key: str) -> None:
    """Carry an end-of-line comment of ``src[key]`` over to ``dst[new_key]``."""
    tok = _comment_token(src, key)
    if tok is not None:
        eol, _ = _split_comment(tok.value)
        if eol:
            dst.yaml_add_eol_comment(eol, new_key, column=tok.column)


def _last_leaf(mapping: CommentedMap) -> tuple[CommentedMap, object] | None:
    """The mapping and key whose comment token holds what follows ``mapping`` in the file."""
    while isinstance(mapping, CommentedMap) and len(mapping):
        key = list(mapping.keys())[-1]
        value = mapping[key]
        if isinstance(value, CommentedMap) and len(value) and not value.fa.flow_style():
            mapping = value
            continue
        return mapping, key
    return None


def _take_following(mapping: CommentedMap) -> str:
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


def _put_following(mapping: CommentedMap, following: str) -> None:
    """Re-attach lines detached by :func:`_take_following` after ``mapping``'s last value."""
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


def migrate_manifest(
    env: EnvDir, facts: DirFacts, notes: list[str]
) -> tuple[ManifestChange | None, str | None]:
    """Migrate ``openenv.yaml`` in memory, step by step (each step appends to ``summary``).

    Args:
        env: the environment directory.
        facts: what the rest of the directory says (see :class:`DirFacts`).
        notes: what migrate could not do is appended here.

    Returns:
        ``(change, oracle)``: ``change`` is ``None`` when the manifest is already current;
        ``oracle`` is ``envkit.oracle`` (``module:attr``) or ``None``.

    Raises:
        MigrationRefused: the manifest, ``validation:`` or ``envkit:`` is not a mapping, or
            the file is not YAML.
    """
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


def _load_manifest(y: YAML, text: str) -> CommentedMap:
    """``openenv.yaml``'s text as a round-trip ``CommentedMap``.

    Raises:
        MigrationRefused: not YAML (located when the parser gives a position), or not a
            mapping.
    """
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


def _add_version(data: CommentedMap, env: EnvDir, summary: list[str]) -> None:
    """``version`` next to ``name`` (RFC 008 reads it there): pyproject's, else ``0.1.0``."""
    if "version" in data:
        return
    version = _pyproject_version(env) or "0.1.0"
    pos = list(data.keys()).index("name") + 1 if "name" in data else 0
    data.insert(pos, "version", version)
    summary.append(f"added version: {version}")


def _sections(data: CommentedMap) -> tuple[CommentedMap, CommentedMap | None]:
    """``(validation, envkit)``: ``validation:`` (added empty when missing) and ``envkit:``
    (``None`` when missing).

    Raises:
        MigrationRefused: either is present but not a mapping.
    """
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
    validation: CommentedMap,
    envkit_section: CommentedMap | None,
    legacy: list[str],
    summary: list[str],
) -> CommentedMap | None:
    """Move envkit's pre-0.10 keys out of ``validation:``: to ``validation.reward`` or to
    ``envkit:``. A key already present at its destination wins; the old one is dropped.

    Returns:
        The ``envkit:`` mapping (made when a key goes there and there was none), or ``None``.
    """
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


def _add_required_blocks(data: CommentedMap, validation: CommentedMap, summary: list[str]) -> None:
    """The RFC 008 blocks OpenEnv requires (``reward``, ``resources``, ``capabilities``,
    ``types``), with OpenEnv's defaults, each in that order; missing ``reward`` fields too."""
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
    validation: CommentedMap,
    oracle: str | None,
    facts: DirFacts,
    summary: list[str],
    notes: list[str],
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
    y: YAML, data: CommentedMap, text: str, summary: list[str], plan_needed: bool
) -> ManifestChange:
    """The manifest's :class:`FileChange`; when the probe plan must still be made, also the
    change without ``validation.execution`` (used if making the plan fails)."""
    change = FileChange(MANIFEST_NAME, text, _dump(y, data), summary)
    alt = None
    if plan_needed:
        del data["validation"]["execution"]
        alt_summary = [s for s in summary if not s.startswith("added validation.execution")]
        alt_text = _dump(y, data)
        alt = FileChange(MANIFEST_NAME, text, alt_text, alt_summary) if alt_text != text else None
    return ManifestChange(change, plan_needed, alt)


def _set_before_comment(data: CommentedMap, key: str, comment: str) -> None:
    data.yaml_set_comment_before_after_key(key, before="\n" + comment, indent=0)


def _replace_legacy_comment(data: CommentedMap) -> None:
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
