"""``envkit init``: render a template into a new environment directory.

Templates live in ``templates/<name>/`` with a ``template.toml`` (description, validation
defaults, extra dependencies, options). Files every template shares live once in
``templates/_common/``; a template overrides one by shipping the same path. Jinja partials and
macros live in ``templates/_partials/``. Files ending in ``.jinja`` are rendered (sandboxed,
``StrictUndefined``) and lose the suffix; path segments may use ``{{ package }}``; everything
else is copied byte for byte. Build debris (``__pycache__``, ``*.pyc`` ...) is never copied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit._version import __version__
from envkit.catalog import DEFAULT_TEMPLATE, TemplateInfo, get_template
from envkit.cookie import BUILTIN_ORIGIN, TemplateSource, is_external, render_external
from envkit.envdir.constants import (
    DEBRIS_DIRS,
    DEFAULT_PORT,
    OPENENV_REQUIREMENT,
    PROBE_PLAN_PATH,
    is_debris,
)
from envkit.envdir.template_record import TEMPLATE_RECORD_TAG, source_fingerprint
from envkit.envdir.toml import TomlError, parse_toml
from envkit.envdir.uv import uv_binary
from envkit.errors import DestinationError, EnvkitError, TemplateError, UsageError
from envkit.fsutil import cache_dir
from envkit.names import EnvNames, normalise_name
from envkit.probe_plan import dumps, plan_document
from envkit.resources import templates_dir
from envkit.skills import install_skills

if TYPE_CHECKING:
    from envkit.validation.report import ValidationReport

# Never copied out of a template: debris, plus the template's own metadata and egg-info.
_TEMPLATE_ONLY_FILES = {"template.toml"}


@dataclass
class LockResult:
    """Outcome of ``uv lock``.

    Attributes:
        status: ``written``, ``skipped`` (``--no-lock``), ``unavailable`` (no uv) or ``failed``.
        message: one line for the user ('' when written/skipped).
        command: the command to retry by hand.
        seconds: wall time of ``uv lock``.
    """

    status: str
    message: str = ""
    command: str = ""
    seconds: float = 0.0


@dataclass
class InitResult:
    """What ``init_project`` created.

    Attributes:
        path: the environment directory (absolute).
        names: every spelling of the name.
        template: template name.
        files: created or overwritten files, relative to ``path``, sorted.
        lock: the ``uv lock`` outcome.
        notes: things the user must do that init could not (one sentence each).
        source: where the template came from (also recorded as ``[tool.envkit.template]``
            in the environment's pyproject.toml).
        report: for an external template, the ``envkit validate --static`` report of the new
            environment (:class:`envkit.validation.ValidationReport`); ``None`` for a
            built-in one (the template tests validate those).
    """

    path: Path
    names: EnvNames
    template: str
    files: list[Path]
    lock: LockResult
    notes: list[str] = field(default_factory=list)
    source: TemplateSource | None = None
    report: ValidationReport | None = None


def write_project(
    names: EnvNames,
    rendered: dict[Path, bytes],
    *,
    output_dir: str | os.PathLike[str],
    source: TemplateSource,
    lock: bool = True,
    skills: bool = True,
) -> InitResult:
    """Write already rendered files as a new environment, as ``envkit init`` does: the
    source recorded in pyproject.toml, the skills, an atomic write (nothing is left behind
    on failure), then ``uv lock`` and ``envkit validate --static`` on the result.

    Args:
        names: the environment's name forms; the directory is ``output_dir/names.raw``.
        rendered: relative path -> content (:func:`render_template`).
        output_dir: parent directory; created when missing.
        source: recorded as ``[tool.envkit.template]``.
        lock: run ``uv lock`` (a failure is reported in the result, not raised).
        skills: install envkit's Agent Skills.

    Raises:
        DestinationError: the destination exists (even empty: an import never writes into an
            existing directory) or cannot be written.
    """
    parent = Path(output_dir).expanduser()
    dest = (parent / names.raw).absolute()
    if dest.exists() or dest.is_symlink():
        raise DestinationError(
            f"{dest} already exists.", hint="Choose another name or --output-dir."
        )
    _record_source(rendered, source)
    _create_parent(parent)
    files = sorted(rendered) + _write_new(dest, rendered, skills=skills)
    lock_result = lock_environment(dest) if lock else LockResult("skipped")
    notes: list[str] = []
    return InitResult(
        path=dest,
        names=names,
        template=source.name,
        files=sorted(files),
        lock=lock_result,
        notes=notes,
        source=source,
        report=_static_report(dest, notes),
    )


def _create_parent(parent: Path) -> None:
    """Create ``--output-dir`` when missing.

    Raises:
        DestinationError: it cannot be created.
    """
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DestinationError(
            f"Cannot create {parent}: {exc.strerror}.", hint="Choose a writable --output-dir."
        ) from None


def _is_debris(rel: Path) -> bool:
    return (
        any(part in DEBRIS_DIRS for part in rel.parts)
        or is_debris(rel.name)
        or rel.name in _TEMPLATE_ONLY_FILES
        or rel.name.endswith(".egg-info")
    )


def _template_files(tpl: TemplateInfo) -> dict[str, Path]:
    """Relative source path (before rendering) -> file; the template's own files override
    ``_common``'s."""
    files: dict[str, Path] = {}
    for base in (templates_dir() / "_common", tpl.path):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base)
            if path.is_file() and not _is_debris(rel):
                files[rel.as_posix()] = path
    return files


def resolve_options(tpl: TemplateInfo, given: Mapping[str, str] | None) -> dict[str, str]:
    """Fill defaults and check ``given`` against the template's options.

    Raises:
        UsageError: an unknown key or a value outside the option's choices.
    """
    opts = {k: o.default for k, o in tpl.options.items()}
    for key, value in (given or {}).items():
        norm = key.replace("-", "_")
        if norm not in tpl.options:
            known = ", ".join(tpl.options) or "none"
            raise UsageError(
                f"Template `{tpl.name}` has no option `{key}`.",
                hint=f"Its options: {known} (see `envkit templates`).",
            )
        choices = tpl.options[norm].choices
        if choices and value not in choices:
            raise UsageError(f"Option `{key}` must be one of {', '.join(choices)}; got `{value}`.")
        opts[norm] = value
    return opts


def render_context(
    names: EnvNames, tpl: TemplateInfo, options: Mapping[str, str]
) -> dict[str, Any]:
    """The variables every template file sees."""
    c = names.class_prefix
    return {
        "name": names.raw,
        "package": names.package,
        "space": names.space,
        "class_prefix": c,
        "title": names.title,
        "env_class": f"{c}Environment",
        "action_class": f"{c}Action",
        "observation_class": f"{c}Observation",
        "client_class": f"{c}Env",
        "template": tpl.name,
        "description": tpl.description,
        "port": DEFAULT_PORT,
        "envkit_version": __version__,
        "openenv_spec": OPENENV_REQUIREMENT,
        "dependencies": list(tpl.dependencies),
        "validation": tpl.validation,
        "options": dict(options),
        "vars": tpl.vars,
    }


def render_template(tpl: TemplateInfo, context: Mapping[str, Any]) -> dict[Path, bytes]:
    """Render every file of ``tpl`` in memory.

    Returns:
        Relative output path -> content.

    Raises:
        TemplateError: a file uses an undefined variable or has a syntax error (a template bug).
    """
    from jinja2 import FileSystemBytecodeCache, FileSystemLoader, StrictUndefined
    from jinja2 import TemplateError as JinjaError
    from jinja2.sandbox import SandboxedEnvironment

    root = templates_dir()
    # Compiling the ~20 templates is a fifth of `envkit init`; jinja's bytecode cache keys
    # each entry by the template's name and a checksum of its source, so an edited or
    # upgraded template is compiled afresh.
    cache = cache_dir("jinja")
    env = SandboxedEnvironment(
        loader=FileSystemLoader([str(tpl.path), str(root / "_common"), str(root / "_partials")]),
        bytecode_cache=FileSystemBytecodeCache(str(cache)) if cache is not None else None,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["toml_str"] = lambda v: _toml_str(str(v))
    out: dict[Path, bytes] = {}
    for rel, src in _template_files(tpl).items():
        try:
            out_rel = env.from_string(rel).render(context) if "{{" in rel else rel
            if rel.endswith(".jinja"):
                text = env.get_template(rel).render(context)
                out[Path(out_rel[: -len(".jinja")])] = text.encode("utf-8")
            else:
                out[Path(out_rel)] = src.read_bytes()
        except JinjaError as exc:
            raise TemplateError(
                f"Template `{tpl.name}` failed to render {rel}: {exc}.",
                hint="This is a bug in the template; please report it.",
            ) from None
    return out


def _check_destination(dest: Path, force: bool) -> bool:
    """Returns True when ``dest`` already exists (and may be written into)."""
    if dest.exists() and not dest.is_dir():
        raise DestinationError(
            f"{dest} exists and is not a directory.", hint="Choose another name or --output-dir."
        )
    if dest.is_dir():
        entries = sorted(p.name for p in dest.iterdir())
        if entries and not force:
            shown = ", ".join(entries[:5]) + (" ..." if len(entries) > 5 else "")
            raise DestinationError(
                f"{dest} is not empty ({len(entries)} entries: {shown}).",
                hint="Choose another name or --output-dir, or pass --force to write the "
                "template's files into it (other files are kept).",
            )
        return True
    return False


def lock_environment(path: Path, timeout_s: float = 300.0) -> LockResult:
    """Run ``uv lock`` in ``path`` (needs PyPI). Never raises: failures come back as a
    :class:`LockResult` with the command to retry."""
    uv = uv_binary()
    retry = f"cd {path} && uv lock"
    if not uv:
        return LockResult(
            "unavailable",
            "uv is not installed, so uv.lock was not written "
            "(`openenv validate` and Hugging Face builds need it).",
            retry,
        )
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [uv, "lock", "--directory", str(path), "--quiet"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return LockResult(
            "failed",
            f"`uv lock` did not finish within {timeout_s:g} s.",
            retry,
            time.monotonic() - t0,
        )
    except OSError as exc:
        return LockResult("failed", f"`uv lock` could not run: {exc}.", retry)
    secs = time.monotonic() - t0
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        cause = last[-1] if last else f"exit code {proc.returncode}"
        return LockResult("failed", f"`uv lock` failed: {cause}", retry, secs)
    return LockResult("written", "", retry, secs)


def init_project(
    name: str,
    *,
    template: str = DEFAULT_TEMPLATE,
    output_dir: str | os.PathLike[str] = ".",
    force: bool = False,
    lock: bool = True,
    options: Mapping[str, str] | None = None,
    skills: bool = True,
    accept_hooks: bool = True,
) -> InitResult:
    """Create a new environment from a template.

    Args:
        name: environment name (``my-env`` or ``my_env``); the directory keeps it as given.
        template: a built-in template's name (``envkit templates`` lists them), or an external
            cookiecutter template: a directory (``./my-template``), a ``.zip``, a git URL or
            ``gh:owner/repo`` (see :mod:`envkit.cookie`; it is code that runs here).
        output_dir: parent directory; created when missing.
        force: write into a non-empty directory (the template's files are overwritten, other
            files are kept).
        lock: run ``uv lock`` afterwards (needs PyPI; a failure is reported, not raised).
        options: template options (``{"gym_id": "CartPole-v1"}``); for an external template,
            cookiecutter variables its cookiecutter.json declares.
        skills: install envkit's Agent Skills into the environment (``.agents/skills`` plus
            the Claude Code, Cursor and OpenCode folders; see :mod:`envkit.skills`), so coding
            agents working in it know the envkit workflow.
        accept_hooks: run an external template's cookiecutter hooks (arbitrary code).

    Returns:
        :class:`InitResult`.

    Raises:
        UsageError: invalid name or option.
        TemplateError: unknown template; an external one that cannot be fetched or rendered,
            or does not render an OpenEnv environment.
        DestinationError: the destination exists and is not empty (without ``force``), is a
            file, or cannot be written. Nothing is left behind on failure: a new directory is
            rendered next to its destination and renamed into place.
    """
    names = normalise_name(name)
    external = is_external(template)
    tpl = None if external else get_template(template)
    opts = resolve_options(tpl, options) if tpl is not None else dict(options or {})
    parent = Path(output_dir).expanduser()
    dest = (parent / names.raw).absolute()
    exists = _check_destination(dest, force)
    if tpl is None:
        rendered, executables, source, notes = _render_external(template, names, opts, accept_hooks)
    else:
        rendered, executables = render_template(tpl, render_context(names, tpl, opts)), set()
        source = TemplateSource(name=tpl.name, origin=BUILTIN_ORIGIN)
        notes = _add_probe_plan(rendered, tpl, opts)
        _add_template_record(rendered, tpl.name, names.package)
    _record_source(rendered, source)
    _create_parent(parent)
    files = sorted(rendered)
    if exists:
        _write_into_existing(dest, rendered)
        if skills:
            files += _install_skills(dest, force=force)
    else:
        files += _write_new(dest, rendered, skills=skills)
    for rel in executables:
        (dest / rel).chmod(0o755)
    lock_result = lock_environment(dest) if lock else LockResult("skipped")
    return InitResult(
        path=dest,
        names=names,
        template=source.name,
        files=sorted(files),
        lock=lock_result,
        notes=notes,
        source=source,
        report=_static_report(dest, notes) if external else None,
    )


def _render_external(
    template: str, names: EnvNames, options: Mapping[str, str], accept_hooks: bool
) -> tuple[dict[Path, bytes], set[Path], TemplateSource, list[str]]:
    """Render a cookiecutter template (:func:`envkit.cookie.render_external`); the files,
    the executable ones, the source and the notes for the user."""
    ext = render_external(template, names, options, accept_hooks=accept_hooks)
    notes = []
    if Path(PROBE_PLAN_PATH) not in ext.files:
        notes.append(
            f"{PROBE_PLAN_PATH} (the probe plan `openenv validate --level runtime` plays) "
            "is not in the template's output: run `envkit migrate` in the environment to "
            "record it from its oracle."
        )
    return ext.files, ext.executables, ext.source, notes


def _record_source(rendered: dict[Path, bytes], source: TemplateSource) -> None:
    """Record where the template came from as ``[tool.envkit.template]`` in the rendered
    pyproject.toml (envkit's own table; ``envkit templates --env DIR`` reads it). Left alone
    when there is no readable pyproject.toml (validate reports that) or the template
    already wrote the table."""
    key = Path("pyproject.toml")
    if key not in rendered:
        return
    text = rendered[key].decode("utf-8", "replace")
    try:
        data = parse_toml(text)
    except TomlError:
        return
    tool = data.get("tool")
    envkit_table = tool.get("envkit") if isinstance(tool, dict) else None
    if isinstance(envkit_table, dict) and "template" in envkit_table:
        return
    lines = [
        "",
        "# Where `envkit init` got this environment's template (`envkit templates --env .`).",
    ]
    lines.append("[tool.envkit.template]")
    lines += [f"{k} = {_toml_str(v)}" for k, v in source.table().items()]
    added = text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    try:
        parse_toml(added)  # a template's `tool.envkit` inline table cannot take a new table
    except TomlError:
        return
    rendered[key] = added.encode("utf-8")


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _static_report(dest: Path, notes: list[str]) -> ValidationReport | None:
    """``envkit validate --static`` on a new environment from an external template; ``None``
    (and a note) when validation itself refuses (e.g. a bad ``[tool.envkit.validate]``)."""
    try:
        # Imported here, not at the top: only an external template is validated, and the
        # validation package (pydantic models of every rule, httpx) would double the time of
        # every `envkit init` from a built-in template.
        from envkit.validation import validate

        return validate(dest, static=True)
    except EnvkitError as exc:
        notes.append(f"`envkit validate --static` could not run: {exc}")
        return None


def _add_probe_plan(
    rendered: dict[Path, bytes], tpl: TemplateInfo, options: Mapping[str, str]
) -> list[str]:
    """Add ``validation/runtime.json`` to ``rendered`` (see :func:`probe_plan_for`).

    Returns:
        The notes for the user: one when no plan could be added, else none.
    """
    plan = probe_plan_for(tpl, options)
    if plan is None:
        note = (
            "validation/runtime.json (the probe plan `openenv validate --level "
            "runtime` plays) was not written: the template's recorded oracle episode "
            "is for its default options. Adapt `server/oracle.py`, then run "
            "`envkit migrate` to record it."
        )
        return [note]
    rendered[Path(PROBE_PLAN_PATH)] = dumps(plan).encode("utf-8")
    return []


def _add_template_record(rendered: dict[Path, bytes], template: str, package: str) -> None:
    """Put a :class:`TemplateRecord` comment after the README's front matter: the template
    and the fingerprints of the action/observation models and the environment module it
    rendered. ``envkit validate`` (EK224) warns when these files changed while the README
    still carries the template's own text."""
    readme = Path("README.md")
    sources = (Path("models.py"), Path("server") / f"{package}_environment.py")
    if readme not in rendered:
        return
    pairs = [
        f"{rel.as_posix()}={source_fingerprint(rendered[rel].decode('utf-8'))}"
        for rel in sources
        if rel in rendered
    ]
    text = rendered[readme].decode("utf-8")
    end = text.find("\n---\n", 3) if text.startswith("---\n") else -1
    if not pairs or end < 0:
        return
    end += len("\n---\n")
    comment = (
        f"<!-- {TEMPLATE_RECORD_TAG} {template} {' '.join(pairs)}\n"
        "     `envkit validate` (EK224) warns when these files change while this README still\n"
        f"     describes the {template} template's task. Delete this comment once it describes\n"
        "     your environment. -->\n"
    )
    body = text[end:].lstrip("\n")
    rendered[readme] = (text[:end] + "\n" + comment + "\n" + body).encode("utf-8")


def _write_new(dest: Path, rendered: Mapping[Path, bytes], *, skills: bool) -> list[Path]:
    """Write ``rendered`` (and the skills) into a staging directory next to ``dest``, then
    rename it into place, so a failure leaves nothing behind.

    Returns:
        The skill files installed, relative to ``dest`` (``[]`` without ``skills``).

    Raises:
        DestinationError: a file cannot be written (permissions, free space).
    """
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.envkit-", dir=dest.parent))
    try:
        _write_files(staging, rendered)
        skill_files = _install_skills(staging, force=False) if skills else []
        os.replace(staging, dest)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise DestinationError(
                f"Cannot write {dest}: {exc.strerror or exc}.",
                hint="Check permissions and free space.",
            ) from None
        raise
    return skill_files


def probe_plan_for(tpl: TemplateInfo, options: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``validation/runtime.json`` plan for a new environment, without playing it.

    ``envkit init`` must stay fast and has no environment venv yet, so it renders the
    template's recorded oracle episode (seed 0, episode id ``envkit-probe``). ``None`` when
    the options differ from the defaults the episode was recorded with, or the template has
    none; ``envkit migrate`` then records one by playing the oracle.
    """
    defaults = {k: o.default for k, o in tpl.options.items()}
    if not tpl.probe_actions or dict(options) != defaults:
        return None
    return plan_document([dict(a) for a in tpl.probe_actions])


def _install_skills(root: Path, *, force: bool) -> list[Path]:
    """Install every bundled skill for every supported agent into ``root``; the files written
    (or already identical), relative to ``root``."""
    base = root.resolve()
    return [item.path.relative_to(base) for item in install_skills(base, force=force).files]


def _write_files(root: Path, files: Mapping[Path, bytes]) -> None:
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if rel.name in ("run", "entrypoint.sh") or rel.suffix == ".sh":
            target.chmod(0o755)


def _write_into_existing(dest: Path, files: Mapping[Path, bytes]) -> None:
    """--force: write file by file; on failure remove only the files and directories this
    call created (overwritten files cannot be restored and are reported)."""
    created: list[Path] = []
    try:
        for rel, data in files.items():
            target = dest / rel
            missing = []
            p = target.parent
            while not p.exists():
                missing.append(p)
                p = p.parent
            for d in reversed(missing):
                d.mkdir()
                created.append(d)
            is_new = not target.exists()
            target.write_bytes(data)
            if is_new:
                created.append(target)
    except OSError as exc:
        for p in reversed(created):
            try:
                p.rmdir() if p.is_dir() else p.unlink()
            except OSError:
                pass
        raise DestinationError(
            f"Cannot write {dest}: {exc.strerror or exc}.", hint="Check permissions and free space."
        ) from None
