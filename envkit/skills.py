"""Agent Skills bundled with envkit: list them, check them, install them for coding agents.

A skill is a folder ``skills/<name>/`` holding ``SKILL.md`` (YAML front matter + Markdown
instructions) and optional ``references/*.md`` that an agent reads on demand. Format: the Agent
Skills specification (https://agentskills.io/specification): ``name`` 1-64 characters of
lower-case letters, digits and single hyphens, equal to the folder name; ``description``
1-1024 characters saying what the skill does and when to use it; optional ``license``,
``compatibility`` (<= 500 characters), ``metadata`` (string -> string) and ``allowed-tools``;
a body under 500 lines.

Where agents look (the agents' own documentation):

=========  ==========================  ================================
agent      project (``--dir``)         global (``--global``, in HOME)
=========  ==========================  ================================
codex      ``.agents/skills``          ``~/.agents/skills``
claude     ``.claude/skills``          ``~/.claude/skills``
cursor     ``.cursor/skills``          ``~/.cursor/skills``
opencode   ``.opencode/skills``        ``~/.config/opencode/skills``
=========  ==========================  ================================

``.agents/skills`` is the canonical, agent-neutral copy and is always written; each chosen
agent gets a copy in its own folder (Codex reads the canonical one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.constants import DEBRIS_DIRS, is_debris
from envkit.errors import DestinationError, InternalError, UsageError
from envkit.fsutil import write_atomic
from envkit.resources import skills_dir

AGENTS: tuple[str, ...] = ("claude", "codex", "cursor", "opencode")
CANONICAL_DIR = ".agents/skills"
PROJECT_DIRS: dict[str, str] = {
    "codex": CANONICAL_DIR,
    "claude": ".claude/skills",
    "cursor": ".cursor/skills",
    "opencode": ".opencode/skills",
}
GLOBAL_DIRS: dict[str, str] = {
    "codex": CANONICAL_DIR,
    "claude": ".claude/skills",
    "cursor": ".cursor/skills",
    "opencode": ".config/opencode/skills",  # OpenCode's global config directory
}

# Agent Skills specification limits.
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
BODY_MAX_LINES = 500
NAME_RE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
ALLOWED_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
REQUIRED_KEYS = ("name", "description")

_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
_REF_MENTION_RE = re.compile(r"(?<![\w/.-])(references/[\w./-]+\.md)")


@dataclass(frozen=True)
class SkillInfo:
    """A skill (bundled or on disk).

    Attributes:
        name: the front matter's ``name`` (equal to the folder name for a valid skill).
        description: the front matter's ``description``.
        path: the skill's folder.
        files: every file of the skill, relative POSIX paths, sorted (``SKILL.md`` included).
        body_lines: lines of Markdown after the front matter.
        front_matter: the whole front matter mapping.
    """

    name: str
    description: str
    path: Path
    files: tuple[str, ...]
    body_lines: int
    front_matter: dict[str, Any] = field(default_factory=dict)

    @property
    def references(self) -> tuple[str, ...]:
        """Files under ``references/``, relative to the skill folder."""
        return tuple(f for f in self.files if f.startswith("references/"))

    @property
    def skill_md(self) -> Path:
        return self.path / "SKILL.md"


@dataclass(frozen=True)
class SkillProblem:
    """One way a skill breaks the Agent Skills specification (or envkit's stricter checks).

    Attributes:
        file: path relative to the skill folder (``SKILL.md``).
        message: expectation first, then the actual value.
        line: 1-based line in ``file`` when known.
    """

    file: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class FrontMatterError(ValueError):
    """``SKILL.md`` has no front matter or it is not a YAML mapping (``line`` is 1-based)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def parse_skill_md(text: str) -> tuple[dict[str, Any], str, int]:
    """Split ``SKILL.md`` into its front matter and body.

    Args:
        text: the file's content.

    Returns:
        ``(front_matter, body, body_start_line)``; ``body_start_line`` is 1-based.

    Raises:
        FrontMatterError: no ``---`` fenced front matter at the top, or it is not a YAML
            mapping (parsed with ruamel.yaml's safe loader).
    """
    # Imported here: installing skills (every `envkit init`) reads no front matter and must
    # not pay ruamel.yaml's ~20 ms import.
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("SKILL.md must start with `---` and YAML front matter", 1)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise FrontMatterError("the front matter has no closing `---`", 1)
    try:
        data = YAML(typ="safe", pure=True).load("".join(lines[1:end]))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise FrontMatterError(
            f"the front matter is not valid YAML: {exc.problem}", (mark.line + 2) if mark else None
        ) from None
    except YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML: {exc}", None) from None
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter must be a YAML mapping", 2)
    return data, "".join(lines[end + 1 :]), end + 2


def _skill_files(folder: Path) -> tuple[str, ...]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in DEBRIS_DIRS)
        for name in filenames:
            if is_debris(name):
                continue
            out.append((Path(dirpath) / name).relative_to(folder).as_posix())
    return tuple(sorted(out))


def load_skill(folder: Path) -> SkillInfo:
    """Read the skill in ``folder``.

    Raises:
        FrontMatterError: ``SKILL.md`` is missing or its front matter is unusable.
    """
    md = folder / "SKILL.md"
    try:
        text = md.read_text(encoding="utf-8")
    except OSError as exc:
        raise FrontMatterError(f"cannot read {md}: {exc.strerror or exc}") from None
    data, body, _ = parse_skill_md(text)
    return SkillInfo(
        name=str(data.get("name", "")),
        description=" ".join(str(data.get("description", "")).split()),
        path=folder,
        files=_skill_files(folder),
        body_lines=len(body.splitlines()),
        front_matter=data,
    )


def check_skill(folder: Path) -> list[SkillProblem]:
    """Every way the skill in ``folder`` breaks the Agent Skills specification.

    Checks: ``SKILL.md`` exists with YAML front matter; only the specification's keys;
    ``name`` matches ``[a-z0-9]+(-[a-z0-9]+)*``, is at most 64 characters and equals the
    folder name; ``description`` is 1-1024 characters; ``compatibility`` at most 500;
    ``metadata`` maps strings to strings; the body is non-empty and under 500 lines. envkit
    is stricter in two ways: every relative link and every ``references/*.md`` mentioned must
    exist, and every file under ``references/`` must be mentioned in ``SKILL.md`` (an agent
    only opens what the skill points it to).

    Args:
        folder: the skill's directory.

    Returns:
        The problems, empty for a conforming skill. Never raises for a malformed skill.
    """
    md = folder / "SKILL.md"
    if not md.is_file():
        return [SkillProblem("SKILL.md", f"`SKILL.md` is missing in {folder}")]
    text = md.read_text(encoding="utf-8", errors="replace")
    try:
        data, body, body_line = parse_skill_md(text)
    except FrontMatterError as exc:
        return [SkillProblem("SKILL.md", str(exc), exc.line)]
    problems = [SkillProblem("SKILL.md", m) for m in _front_matter_problems(data, folder.name)]
    problems += _body_problems(body, body_line)
    link_problems, mentioned = _link_problems(folder, body.splitlines(), body_line)
    problems += link_problems
    for ref in _skill_files(folder):
        if ref.startswith("references/") and ref not in mentioned:
            problems.append(
                SkillProblem(
                    ref,
                    "is never mentioned in SKILL.md, so no agent "
                    "will open it; link it from the body",
                )
            )
    return problems


def _front_matter_problems(data: dict[str, Any], folder_name: str) -> list[str]:
    """What breaks the specification in the front matter ``data`` of the skill in folder
    ``folder_name``: one message per problem, in the order of the specification's fields."""
    out: list[str] = []
    for key in sorted(set(data) - ALLOWED_KEYS, key=str):
        out.append(
            f"front matter key `{key}` is not in the Agent Skills specification "
            f"(allowed: {', '.join(sorted(ALLOWED_KEYS))}); put extra data under `metadata`"
        )
    for key in REQUIRED_KEYS:
        if key not in data:
            out.append(f"front matter needs `{key}`")
    if "name" in data:
        out += _name_problems(data["name"], folder_name)
    desc = data.get("description")
    if "description" in data:
        if not isinstance(desc, str) or not desc.strip():
            out.append(f"`description` must be a non-empty string; got {desc!r}")
        elif len(desc) > DESCRIPTION_MAX:
            out.append(
                f"`description` must be at most {DESCRIPTION_MAX} characters; got {len(desc)}"
            )
    compat = data.get("compatibility")
    if "compatibility" in data and (
        not isinstance(compat, str) or not compat.strip() or len(compat) > COMPATIBILITY_MAX
    ):
        out.append(f"`compatibility` must be a string of 1-{COMPATIBILITY_MAX} characters")
    meta = data.get("metadata")
    if "metadata" in data and (
        not isinstance(meta, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())
    ):
        out.append("`metadata` must map strings to strings (quote numbers and versions)")
    for key in ("license", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            out.append(f"`{key}` must be a string; got {data[key]!r}")
    return out


def _name_problems(name: object, folder_name: str) -> list[str]:
    """What is wrong with the front matter's ``name`` (given, possibly not a string)."""
    if not isinstance(name, str) or not name:
        return [f"`name` must be a non-empty string; got {name!r}"]
    out: list[str] = []
    if len(name) > NAME_MAX:
        out.append(f"`name` must be at most {NAME_MAX} characters; got {len(name)}")
    if not NAME_RE.fullmatch(name):
        out.append(
            f"`name` must be lower-case letters, digits and single hyphens, not "
            f"starting or ending with a hyphen; got {name!r}"
        )
    if name != folder_name:
        out.append(f"`name` must equal the folder name {folder_name!r}; got {name!r}")
    return out


def _body_problems(body: str, body_line: int) -> list[SkillProblem]:
    """An empty body, or one of :data:`BODY_MAX_LINES` lines or more (``body_line``: the
    1-based line of ``SKILL.md`` the body starts on)."""
    out: list[SkillProblem] = []
    n_lines = len(body.splitlines())
    if not body.strip():
        out.append(SkillProblem("SKILL.md", "the body after the front matter is empty", body_line))
    if n_lines >= BODY_MAX_LINES:
        out.append(
            SkillProblem(
                "SKILL.md",
                f"the body must stay under {BODY_MAX_LINES} lines; got {n_lines} "
                "(move detail into references/)",
                body_line,
            )
        )
    return out


def _link_problems(
    folder: Path, body_lines: list[str], body_line: int
) -> tuple[list[SkillProblem], set[str]]:
    """Relative links and ``references/*.md`` mentions in the body that name no file of the
    skill.

    Returns:
        ``(problems, mentioned)``: ``mentioned`` holds every relative path the body points
        to (POSIX, without an ``#anchor``), existing or not.
    """
    problems: list[SkillProblem] = []
    mentioned: set[str] = set()
    for offset, line in enumerate(body_lines):
        targets = [m.group(1) for m in _LINK_RE.finditer(line)]
        targets += [m.group(1) for m in _REF_MENTION_RE.finditer(line)]
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # URL, mailto:, in-page anchor
            rel = target.split("#", 1)[0]
            if not rel:
                continue
            mentioned.add(Path(rel).as_posix())
            if not (folder / rel).exists():
                problems.append(
                    SkillProblem(
                        "SKILL.md",
                        f"links to `{rel}`, which does not exist in the skill",
                        body_line + offset,
                    )
                )
    return problems, mentioned


def list_skills() -> list[SkillInfo]:
    """Every skill bundled with envkit, sorted by name.

    Raises:
        InternalError: a bundled skill's ``SKILL.md`` is unreadable (a broken install).
    """
    root = skills_dir()
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and (p / "SKILL.md").is_file()):
        try:
            out.append(load_skill(folder))
        except FrontMatterError as exc:
            raise InternalError(
                f"The bundled skill {folder.name} is broken: {exc}. Reinstall rl-envkit."
            ) from None
    return out


def get_skill(name: str) -> SkillInfo:
    """The bundled skill called ``name``.

    Raises:
        UsageError: no bundled skill has that name (the message lists the available ones).
    """
    skills = list_skills()
    for skill in skills:
        if skill.name == name:
            return skill
    raise UsageError(
        f"Unknown skill {name!r}.",
        hint=f"Available: {', '.join(s.name for s in skills)} (see `envkit skills list`).",
    )


def normalise_agents(agents: Sequence[str]) -> tuple[str, ...]:
    """``["Claude", "all"]`` -> every agent in :data:`AGENTS` order, deduplicated.

    Items may be comma-separated (``"claude,cursor"``).

    Raises:
        UsageError: an unknown agent name, or none at all.
    """
    chosen: set[str] = set()
    for item in agents:
        for part in str(item).split(","):
            agent = part.strip().lower()
            if not agent:
                continue
            if agent == "all":
                chosen.update(AGENTS)
            elif agent in AGENTS:
                chosen.add(agent)
            else:
                raise UsageError(
                    f"Unknown agent {part.strip()!r}.",
                    hint=f"Use one of: {', '.join(AGENTS)}, all.",
                )
    if not chosen:
        raise UsageError("No agent chosen.", hint=f"Use one of: {', '.join(AGENTS)}, all.")
    return tuple(a for a in AGENTS if a in chosen)


def target_dirs(root: Path, agents: Sequence[str], *, global_: bool = False) -> list[Path]:
    """Skill folders to write under ``root``: the canonical ``.agents/skills`` first, then
    each agent's own folder (deduplicated; Codex shares the canonical one)."""
    layout = GLOBAL_DIRS if global_ else PROJECT_DIRS
    out = [root / CANONICAL_DIR]
    for agent in normalise_agents(agents):
        path = root / layout[agent]
        if path not in out:
            out.append(path)
    return out


@dataclass(frozen=True)
class InstalledFile:
    """One file ``install_skills`` looked at.

    Attributes:
        path: absolute destination path.
        skill: the skill it belongs to.
        status: ``created``, ``updated`` (replaced with ``force``) or ``unchanged``
            (already identical: nothing written).
    """

    path: Path
    skill: str
    status: str


@dataclass
class InstallResult:
    """What ``install_skills`` did.

    Attributes:
        root: the project directory, or HOME for a global install.
        scope: ``project`` or ``global``.
        skills: installed skill names.
        agents: the chosen agents.
        targets: skill folders written (canonical first).
        files: every destination file with its status.
    """

    root: Path
    scope: str
    skills: list[str]
    agents: list[str]
    targets: list[Path]
    files: list[InstalledFile] = field(default_factory=list)

    def _count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def created(self) -> int:
        return self._count("created")

    @property
    def updated(self) -> int:
        return self._count("updated")

    @property
    def unchanged(self) -> int:
        return self._count("unchanged")

    @property
    def changed(self) -> bool:
        """True when at least one file was written."""
        return self.created + self.updated > 0


def _display(path: Path, root: Path, global_: bool) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
    return f"~/{rel}" if global_ else rel


def _write_atomic(src: Path, dst: Path) -> None:
    write_atomic(dst, src.read_bytes(), mode=src.stat().st_mode & 0o777, fsync=False)


def _bundled_folders(names: Sequence[str] | None) -> dict[str, Path]:
    """The bundled skills to install, name -> folder: ``names`` in order, or all of them.

    A bundled skill's name is its folder's (tests/skills checks each one against the
    specification), so installing reads no front matter: ``envkit init`` installs skills
    on every run.

    Raises:
        UsageError: a name that no bundled skill has (the message lists the available ones).
    """
    root = skills_dir()
    folders = {
        p.name: p for p in sorted(root.iterdir()) if p.is_dir() and (p / "SKILL.md").is_file()
    }
    if not names:
        return folders
    chosen = {}
    for name in dict.fromkeys(names):
        if name not in folders:
            raise UsageError(
                f"Unknown skill {name!r}.",
                hint=f"Available: {', '.join(folders)} (see `envkit skills list`).",
            )
        chosen[name] = folders[name]
    return chosen


def install_skills(
    dest: Path,
    names: Sequence[str] | None = None,
    agents: Sequence[str] = AGENTS,
    *,
    force: bool = False,
    global_: bool = False,
) -> InstallResult:
    """Install bundled skills for coding agents.

    Writes the canonical copy to ``<root>/.agents/skills/<name>/`` and a copy into each chosen
    agent's folder (see the module docstring for the layout). Safe to repeat: identical files
    are left alone, so adding an agent later needs no ``force``. Nothing is written when any
    destination file exists with different content and ``force`` is false.

    Args:
        dest: the project directory (created if missing). Ignored when ``global_`` is true:
            the home directory (``Path.home()``) is the root then.
        names: skill names; ``None`` or empty means every bundled skill.
        agents: any of ``claude``, ``codex``, ``cursor``, ``opencode`` or ``all``.
        force: replace destination files whose content differs from envkit's copy.
        global_: install for the user (in HOME) instead of the project.

    Returns:
        An :class:`InstallResult` listing every destination file and whether it was created,
        updated or left unchanged.

    Raises:
        UsageError: an unknown skill or agent name.
        DestinationError: a destination file differs and ``force`` is false (the message
            names the files), or a directory stands where a file must go, or ``dest`` is
            not a directory.
    """
    root = Path.home() if global_ else Path(dest).expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise DestinationError(
            f"{root} is not a directory.", hint="Pass the project directory with --dir."
        )
    chosen_agents = normalise_agents(agents)
    skills = _bundled_folders(names)
    targets = target_dirs(root, chosen_agents, global_=global_)
    plan = [
        (folder / rel, target / name / rel, name)
        for target in targets
        for name, folder in skills.items()
        for rel in _skill_files(folder)
    ]
    _refuse_conflicts(plan, root, force=force, global_=global_)
    result = InstallResult(
        root=root,
        scope="global" if global_ else "project",
        skills=list(skills),
        agents=list(chosen_agents),
        targets=targets,
    )
    for src, dst, skill in plan:
        data = src.read_bytes()
        if dst.is_file() and dst.read_bytes() == data:
            status = "unchanged"
        else:
            status = "updated" if dst.exists() else "created"
            _write_atomic(src, dst)
        result.files.append(InstalledFile(dst, skill, status))
    return result


def _refuse_conflicts(
    plan: list[tuple[Path, Path, str]], root: Path, *, force: bool, global_: bool
) -> None:
    """Check every ``(source, destination, skill)`` of ``plan`` before anything is written.

    Raises:
        DestinationError: a directory stands where a file must go (or a file where a folder
            must go), whatever ``force`` says; or, without ``force``, a destination file
            differs from envkit's copy. The message names the first path, ``details`` all.
    """
    conflicts: list[Path] = []
    blocked: list[Path] = []
    for src, dst, _skill in plan:
        if dst.is_dir():
            blocked.append(dst)
        elif dst.exists() and dst.read_bytes() != src.read_bytes():
            conflicts.append(dst)
        else:
            # a parent that exists as a file blocks the whole subtree
            for parent in dst.parents:
                if parent == root:
                    break
                if parent.exists() and not parent.is_dir():
                    blocked.append(parent)
                    break
    shown = lambda paths: "\n".join(_display(p, root, global_) for p in paths)  # noqa: E731
    if blocked:
        first = _display(blocked[0], root, global_)
        raise DestinationError(
            f"`{first}` is in the way of a skill file (a directory where a file must go, or "
            "a file where a folder must go); nothing was installed.",
            hint="Move it away, then re-run `envkit skills install`.",
            details=shown(dict.fromkeys(blocked)),
        )
    if conflicts and not force:
        first = _display(conflicts[0], root, global_)
        more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
        raise DestinationError(
            f"`{first}`{more} already exists and differs from envkit's copy; nothing was "
            "overwritten.",
            hint="Re-run with `--force` to replace it with envkit's version (local edits are "
            "lost), or move it away first.",
            details=shown(conflicts),
        )
