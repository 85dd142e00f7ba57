"""External templates: ``envkit init NAME --template PATH|GIT-URL|gh:owner/repo``.

Templates published in cookiecutter's format (a ``cookiecutter.json`` next to a
``{{ cookiecutter.<var> }}`` directory) are rendered by cookiecutter itself
(https://cookiecutter.readthedocs.io), so they behave as they do under the ``cookiecutter``
command. envkit only:

- passes the environment's name forms as the template's variables, where its
  ``cookiecutter.json`` declares them (:data:`NAME_VARIABLES`), and ``--set KEY=VALUE``;
- keeps cookiecutter out of the user's home and ``/tmp``: clones, replay files and the
  rendered copies of the hooks go to a temporary directory that is removed afterwards
  (``~/.cookiecutters`` and ``~/.cookiecutter_replay`` are neither read nor written, and
  neither is ``~/.cookiecutterrc``: a run does not depend on the machine);
- never prompts and never waits for git credentials (``GIT_TERMINAL_PROMPT=0``);
- turns cookiecutter's and git's failures into one-line :class:`~envkit.errors.TemplateError`
  messages, and refuses output that is not an OpenEnv environment (no manifest).

A template is code you run: its hooks (``hooks/pre_gen_project.py``, ...) and Jinja
extensions execute on this machine with your permissions. Hooks run by default, as under
the ``cookiecutter`` command, because published templates rely on them to finish the
project; ``accept_hooks=False`` (``envkit init --no-hooks``) skips them.

cookiecutter (and the requests/arrow stack it pulls in, ~0.35 s) is imported only here, and
this module only for external templates: the built-in templates do not pay for it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.constants import DEBRIS_DIRS, MANIFEST_NAME, is_debris
from envkit.errors import TemplateError, UsageError
from envkit.names import EnvNames

BUILTIN_ORIGIN = "built-in"

# cookiecutter's own abbreviations (cookiecutter.config.BUILTIN_ABBREVIATIONS, 2.x), copied so
# deciding what a --template value means never imports cookiecutter; a test keeps them equal.
ABBREVIATIONS: dict[str, str] = {
    "gh": "https://github.com/{0}.git",
    "gl": "https://gitlab.com/{0}.git",
    "bb": "https://bitbucket.org/{0}",
}

# envkit's name forms under the variable names cookiecutter templates commonly use. Only
# those the template's cookiecutter.json declares are passed (cookiecutter ignores the others
# anyway). ``project_slug`` is snake_case because that is what published templates use it
# for (a package directory, an import name); the kebab-case Space name is ``space_name``.
NAME_VARIABLES: dict[str, str] = {
    "project_name": "title",
    "project_title": "title",
    "title": "title",
    "name": "raw",
    "env_name": "raw",
    "project_slug": "package",
    "package_name": "package",
    "package": "package",
    "module_name": "package",
    "pkg_name": "package",
    "space_name": "space",
    "space": "space",
    "repo_name": "space",
    "dist_name": "space",
    "distribution_name": "space",
    "class_prefix": "class_prefix",
    "class_name": "class_prefix",
    "env_class": "env_class",
    "action_class": "action_class",
    "observation_class": "observation_class",
    "client_class": "client_class",
}

# Git must fail, not wait: no credential prompt, and a stalled transfer (< 1 KB/s for 30 s)
# is abandoned. Values the user already set win.
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
    "GIT_HTTP_LOW_SPEED_TIME": "30",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=15",
}


@dataclass(frozen=True)
class TemplateSource:
    """Where an environment's template came from (recorded in the environment's
    ``pyproject.toml`` as ``[tool.envkit.template]``).

    Attributes:
        name: the template: a built-in's name (``echo``) or the source as given, local paths
            absolute with the home directory written ``~`` (``gh:owner/repo``,
            ``~/templates/my-env``).
        origin: ``built-in``, ``directory``, ``git`` or ``zip``.
        url: the expanded location cookiecutter read (``https://github.com/owner/repo.git``);
            ``""`` for built-ins and local directories.
        commit: the git commit rendered (40 hex digits); ``""`` when not a git source.
    """

    name: str
    origin: str
    url: str = ""
    commit: str = ""

    def label(self) -> str:
        """One line for people: ``echo (built-in)``, ``gh:o/r (git, 1a2b3c4)``."""
        extra = ", ".join(x for x in (self.origin, self.commit[:7]) if x)
        return f"{self.name} ({extra})"

    def table(self) -> dict[str, str]:
        """The ``[tool.envkit.template]`` keys (empty values left out)."""
        return {k: v for k, v in vars(self).items() if v}


@dataclass
class ExternalRender:
    """A rendered external template, in memory.

    Attributes:
        files: relative path -> content.
        executables: the files cookiecutter wrote with an executable bit.
        source: where it came from.
    """

    files: dict[Path, bytes]
    source: TemplateSource
    executables: set[Path] = field(default_factory=set)


def is_external(template: str) -> bool:
    """Whether ``--template`` names an external template rather than a built-in one.

    Built-in names are plain words; anything with a path separator, a colon (``gh:``, URLs,
    ``git@host:``), a leading ``.``/``~`` or a ``.zip`` suffix is a cookiecutter source. A
    local directory named like a word is written ``./NAME``.
    """
    return (
        "/" in template
        or os.sep in template
        or ":" in template
        or template.startswith((".", "~"))
        or template.lower().endswith(".zip")
    )


def expand_source(template: str) -> str:
    """``gh:owner/repo`` -> ``https://github.com/owner/repo.git`` (also ``gl:``, ``bb:``):
    cookiecutter's abbreviations, applied as ``cookiecutter.repository.expand_abbreviations``
    does. Anything else comes back unchanged."""
    prefix, sep, rest = template.partition(":")
    if sep and prefix in ABBREVIATIONS:
        return ABBREVIATIONS[prefix].format(rest)
    return template


def _is_url(value: str) -> bool:
    from cookiecutter.repository import is_repo_url

    return is_repo_url(value)


def describe_source(template: str) -> TemplateSource:
    """The :class:`TemplateSource` of ``template`` before it is fetched (no commit yet)."""
    url = expand_source(template)
    if _is_url(url):
        origin = "zip" if url.lower().endswith(".zip") else "git"
        return TemplateSource(name=template, origin=origin, url=url)
    path = Path(template).expanduser().absolute()
    home = Path.home()
    shown = f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)
    origin = "zip" if template.lower().endswith(".zip") else "directory"
    return TemplateSource(name=shown, origin=origin)


@contextlib.contextmanager
def _git_env() -> Iterator[None]:
    """Set :data:`_GIT_ENV` for the clone (cookiecutter runs git with our environment),
    restoring the previous values afterwards."""
    saved = {k: os.environ.get(k) for k in _GIT_ENV}
    for key, value in _GIT_ENV.items():
        os.environ.setdefault(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _temporary_files_in(path: Path) -> Iterator[None]:
    """Point :mod:`tempfile`'s default directory at ``path`` (made here) while cookiecutter
    runs: it renders each hook to ``NamedTemporaryFile(delete=False)`` and never removes it
    (``cookiecutter.hooks.run_script_with_context``, 2.x), so every run with hooks would
    leave the rendered scripts, ``--set`` values included, in ``/tmp``. ``tempfile.tempdir``
    is the process's: another thread making a temporary file meanwhile makes it here too."""
    path.mkdir()
    saved = tempfile.tempdir
    tempfile.tempdir = str(path)
    try:
        yield
    finally:
        tempfile.tempdir = saved


def name_context(names: EnvNames) -> dict[str, str]:
    """Every value :data:`NAME_VARIABLES` can pass, by variable name."""
    c = names.class_prefix
    forms = {
        "raw": names.raw,
        "title": names.title,
        "package": names.package,
        "space": names.space,
        "class_prefix": c,
        "env_class": f"{c}Environment",
        "action_class": f"{c}Action",
        "observation_class": f"{c}Observation",
        "client_class": f"{c}Env",
    }
    return {var: forms[form] for var, form in NAME_VARIABLES.items()}


def declared_variables(repo_dir: Path) -> dict[str, Any]:
    """The variables ``repo_dir/cookiecutter.json`` declares (``_private`` ones left out).

    Raises:
        TemplateError: the file is not a JSON object.
    """
    path = repo_dir / "cookiecutter.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TemplateError(
            f"{path} cannot be read as JSON: {exc}.",
            hint="Fix the template's cookiecutter.json.",
        ) from None
    if not isinstance(data, dict):
        raise TemplateError(
            f"{path} must hold a JSON object of variables.",
            hint="Fix the template's cookiecutter.json.",
        )
    return {k: v for k, v in data.items() if not k.startswith("_")}


def extra_context(
    names: EnvNames, declared: Mapping[str, Any], options: Mapping[str, str] | None
) -> dict[str, str]:
    """What envkit passes as cookiecutter's ``extra_context``: the name forms the template
    declares, then ``options`` (``--set``), which win.

    Raises:
        UsageError: an option the template does not declare.
    """
    context = {k: v for k, v in name_context(names).items() if k in declared}
    for key, value in (options or {}).items():
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise UsageError(
                f"The template has no variable `{key}`.",
                hint=f"Its cookiecutter.json declares: {known}.",
            )
        context[key] = value
    return context


def _quiet_cookiecutter_logs() -> None:
    """cookiecutter logs a traceback (``logger.exception``) before raising a failed clone;
    without a handler of its own Python's last-resort handler prints it on stderr. The error
    envkit raises says it in one line instead; an application that configures logging still
    sees cookiecutter's records."""
    log = logging.getLogger("cookiecutter")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())


def _one_line(exc: BaseException) -> str:
    """cookiecutter's or git's message, flattened to one line."""
    stderr = getattr(exc, "stderr", None) or getattr(exc, "output", None)
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    last = stderr.strip().splitlines()[-1] if isinstance(stderr, str) and stderr.strip() else ""
    if isinstance(exc, subprocess.CalledProcessError):
        cmd = exc.cmd if isinstance(exc.cmd, list | tuple) else str(exc.cmd).split()
        text = f"`{' '.join(map(str, cmd[:2]))}` exited with {exc.returncode}"
    else:
        text = str(exc)
        inner = getattr(exc, "error", None)  # UndefinedVariableInTemplate: Jinja's error
        if inner is not None and getattr(inner, "message", None):
            text = f"{getattr(exc, 'message', text)}: {inner.message}"
    if last:
        text = f"{text.rstrip('.')}: {last}"
    return " ".join(text.split()).rstrip(".")


def _git_commit(repo_dir: Path) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo_dir), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def render_external(
    template: str,
    names: EnvNames,
    options: Mapping[str, str] | None = None,
    *,
    accept_hooks: bool = True,
) -> ExternalRender:
    """Fetch and render a cookiecutter template in a temporary directory, into memory.

    Args:
        template: a directory, a ``.zip``, a git URL (``https://...``, ``git@host:o/r.git``,
            ``file:///srv/tpl.git``) or an abbreviation (``gh:owner/repo``).
        names: the environment's name forms (see :data:`NAME_VARIABLES`).
        options: ``--set`` values, passed as cookiecutter variables.
        accept_hooks: run the template's hooks (arbitrary code, see the module docstring).

    Returns:
        :class:`ExternalRender`; the temporary directory is gone.

    Raises:
        TemplateError: the template cannot be fetched or rendered (no cookiecutter.json, an
            undefined variable, a failing hook, git failing), or renders something that is not
            an OpenEnv environment (no manifest, or not exactly one top-level directory).
        UsageError: an option the template does not declare.
    """
    source = describe_source(template)
    work = Path(tempfile.mkdtemp(prefix="envkit-cookiecutter-"))
    try:
        repo_dir, commit = _fetch(template, source, work)
        if commit:
            source = TemplateSource(source.name, source.origin, source.url, commit)
        context = extra_context(names, declared_variables(repo_dir), options)
        project = _generate(repo_dir, context, work, template, accept_hooks)
        files, executables = _read_tree(project)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if Path(MANIFEST_NAME) not in files:
        raise TemplateError(
            f"Template {template} did not produce an OpenEnv environment: no {MANIFEST_NAME} "
            "in its output; nothing was written.",
            hint="Use a template made for OpenEnv, or a built-in one (see `envkit templates`).",
        )
    return ExternalRender(files=files, source=source, executables=executables)


def _fetch(template: str, source: TemplateSource, work: Path) -> tuple[Path, str]:
    """Clone/unzip/locate the template under ``work``; ``(its directory, git commit)``."""
    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.repository import determine_repo_dir

    location = source.url or str(Path(template).expanduser().absolute())
    _quiet_cookiecutter_logs()
    try:
        with _git_env():
            repo_dir, _cleanup = determine_repo_dir(
                template=location,
                abbreviations=ABBREVIATIONS,
                clone_to_dir=str(work / "clones"),
                checkout=None,
                no_input=True,
            )
    except (CookiecutterException, subprocess.CalledProcessError, OSError) as exc:
        raise TemplateError(
            f"Cannot fetch template {template}: {_one_line(exc)}.",
            hint="Check the path or URL (a template holds cookiecutter.json); git URLs need "
            "`git` and network access.",
        ) from None
    path = Path(repo_dir)
    return path, _git_commit(path) if source.origin == "git" else ""


def _generate(
    repo_dir: Path, context: dict[str, str], work: Path, template: str, accept_hooks: bool
) -> Path:
    """Run cookiecutter on the local ``repo_dir``; the generated project directory."""
    from cookiecutter.exceptions import CookiecutterException, FailedHookException
    from cookiecutter.main import cookiecutter
    from jinja2 import TemplateError as JinjaError

    out = work / "out"
    out.mkdir()
    config = {"cookiecutters_dir": str(work / "clones"), "replay_dir": str(work / "replay")}
    try:
        with _temporary_files_in(work / "tmp"):
            cookiecutter(
                str(repo_dir),
                no_input=True,
                extra_context=context,
                output_dir=str(out),
                default_config=config,
                accept_hooks=accept_hooks,
            )
    except FailedHookException as exc:
        raise TemplateError(
            f"Template {template}: a hook failed ({_one_line(exc)}); nothing was written.",
            hint="Read the hook's output above, or skip hooks with --no-hooks (the project "
            "may then be incomplete).",
        ) from None
    except (CookiecutterException, JinjaError, subprocess.CalledProcessError) as exc:
        raise TemplateError(
            f"Template {template} failed to render: {_one_line(exc)}; nothing was written.",
            hint="Fix the template, or pass its variables with --set KEY=VALUE.",
        ) from None
    entries = list(out.iterdir())
    if len(entries) != 1 or not entries[0].is_dir():
        raise TemplateError(
            f"Template {template} rendered {len(entries)} top-level entries instead of one "
            "project directory; nothing was written.",
            hint="A cookiecutter template holds one `{{ cookiecutter.<var> }}` directory.",
        )
    return entries[0]


def _read_tree(root: Path) -> tuple[dict[Path, bytes], set[Path]]:
    """Every file under ``root`` except build debris and VCS metadata, and the executable
    ones."""
    files: dict[Path, bytes] = {}
    executables: set[Path] = set()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or path.is_symlink():
            continue
        if any(p in DEBRIS_DIRS or p == ".git" for p in rel.parts) or is_debris(rel.name):
            continue
        files[rel] = path.read_bytes()
        if os.access(path, os.X_OK):
            executables.add(rel)
    return files, executables
