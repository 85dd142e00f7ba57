"""Work out how an OpenEnv environment is meant to start, without starting it.

An environment can be laid out to run in several ways, and envkit tries them in this order:

1. ``manifest``: the manifest's ``app`` (default ``server.app:app``) served from the
   environment folder -- what ``openenv init`` makes and what a Space runs.
2. ``package``: the same app as a package from the parent folder
   (``uvicorn NAME.server.app:app`` with the parent on ``PYTHONPATH``) -- what in-repo
   environments of huggingface/OpenEnv ``envs/`` need, since they import ``from ..models``.
3. ``script``: the ``[project.scripts] server`` entry of ``pyproject.toml``.
4. ``dockerfile``: the Dockerfile's ``CMD``/``ENTRYPOINT`` (and ``cd`` or ``WORKDIR``)
   translated to a local command.

:func:`launch_candidates` lists them (duplicates folded, first kept); it only reads files.
:func:`root_cause` picks the line that explains a failed start out of its log, so the
EK401 message can lead with it instead of burying it under a traceback.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.constants import APP_PATTERN, DEFAULT_APP
from envkit.envdir.dockerfile import parse as parse_dockerfile
from envkit.envdir.pysource import parse_python
from envkit.envdir.toml import PYPROJECT_NAME, read_pyproject
from envkit.errors import InternalError
from envkit.fsutil import read_text_bounded

#: Kinds of candidate, in the order they are tried.
KINDS = ("manifest", "package", "script", "dockerfile")

_IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")
_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/env sh"}
_SERVERS = {"uvicorn", "gunicorn", "hypercorn"}


@dataclass(frozen=True)
class LaunchCandidate:
    """One way to start the environment server locally.

    Attributes:
        kind: one of :data:`KINDS`.
        label: what a user reads, e.g. ``"package form from the parent folder"``.
        app: the ASGI app as ``module:attr``, served with ``python -m uvicorn`` -- or
            ``None`` when the candidate runs a ``main()`` function instead (see ``main``).
        cwd: working directory of the server process.
        pythonpath: folders to put in front of any inherited ``PYTHONPATH``.
        main: ``module:function`` run when ``app`` is ``None`` (a ``[project.scripts]``
            entry whose module defines no top-level ``app``).
        source: where the command came from, e.g. ``"server/Dockerfile line 81: CMD [...]"``.
    """

    kind: str
    label: str
    app: str | None
    cwd: Path
    pythonpath: tuple[Path, ...] = ()
    main: str | None = None
    source: str = ""

    def env(self) -> dict[str, str]:
        """Environment variables to add (``PYTHONPATH`` only, empty when none is needed).

        The value is meant to be prepended: see :meth:`merged_env`.
        """
        if not self.pythonpath:
            return {}
        return {"PYTHONPATH": os.pathsep.join(str(p) for p in self.pythonpath)}

    def merged_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` (e.g. ``os.environ``) with :meth:`env` applied, the new ``PYTHONPATH``
        entries in front of any inherited ones."""
        out = dict(base)
        extra = self.env().get("PYTHONPATH")
        if extra:
            inherited = out.get("PYTHONPATH")
            out["PYTHONPATH"] = extra + (os.pathsep + inherited if inherited else "")
        return out

    def argv(self, python: str, host: str = "127.0.0.1", port: int = 8000) -> list[str]:
        """The command line: ``python -m uvicorn APP --host H --port P``, or for a ``main()``
        candidate ``python -c ...`` calling it with ``--host``/``--port`` in ``sys.argv`` and
        ``HOST``/``PORT`` expected in the environment (see :meth:`run_env`).

        Args:
            python: interpreter path.
            host: bind address (loopback by default).
            port: TCP port.
        """
        if self.app is not None:
            return [python, "-m", "uvicorn", self.app, "--host", host, "--port", str(port)]
        if self.main is None:  # every candidate has an app or a main (launch_candidates)
            raise InternalError(f"Launch candidate {self.label!r} has neither an app nor a main.")
        module, func = self.main.split(":", 1)
        code = (
            f"import sys; sys.argv = ['server', '--host', {host!r}, '--port', '{port}']; "
            f"from {module} import {func} as _main; sys.exit(_main())"
        )
        return [python, "-c", code]

    def run_env(self, host: str = "127.0.0.1", port: int = 8000) -> dict[str, str]:
        """:meth:`env` plus ``HOST``/``PORT`` for a ``main()`` candidate (many ``main()``s read
        them); the same as :meth:`env` for an ``app`` candidate."""
        out = self.env()
        if self.app is None:
            out.update({"HOST": host, "PORT": str(port)})
        return out

    def describe(self) -> str:
        """One line: label, then what runs where, e.g.
        ``package form from the parent folder: uvicorn echo_env.server.app:app in /x/envs``."""
        what = f"uvicorn {self.app}" if self.app else f"{self.main}()"
        pp = (
            f" with PYTHONPATH={os.pathsep.join(map(str, self.pythonpath))}"
            if self.pythonpath
            else ""
        )
        return f"{self.label}: {what} in {self.cwd}{pp}"

    def _key(self) -> tuple[Any, ...]:
        # `python -m` puts the working directory first on sys.path: PYTHONPATH=cwd adds nothing.
        cwd = self.cwd.resolve()
        extra = tuple(p.resolve() for p in self.pythonpath if p.resolve() != cwd)
        return (self.app, self.main, cwd, extra)


def launch_candidates(
    root: Path,
    manifest: Any | None = None,
    *,
    pyproject: Path | Mapping[str, Any] | None = None,
    dockerfile: Path | None = None,
) -> list[LaunchCandidate]:
    """Every way to start the environment at ``root`` that its files describe, in the order to
    try them; identical commands are folded (the first label is kept).

    Pure: reads files, starts nothing.

    Args:
        root: the environment folder.
        manifest: the parsed manifest (anything with an ``app`` attribute, e.g.
            :class:`envkit.envdir.manifest.Manifest`), or ``None`` when there is none (then the
            OpenEnv default ``server.app:app`` is assumed).
        pyproject: ``pyproject.toml`` as a path or an already-parsed mapping; ``None`` reads
            ``root/pyproject.toml`` when it exists.
        dockerfile: the Dockerfile to translate; ``None`` takes ``root/Dockerfile``, else
            ``root/server/Dockerfile`` (where ``openenv init`` and in-repo environments put it).

    Returns:
        Candidates, possibly empty (no manifest app file, no package, no script, no
        translatable Dockerfile). Unreadable or malformed pyproject/Dockerfile files are
        skipped, not raised: the static rules report them.
    """
    root = Path(root).resolve()
    found: list[LaunchCandidate] = []
    app = getattr(manifest, "app", None) or DEFAULT_APP
    module = app.split(":", 1)[0]
    source = (
        "openenv.yaml `app`"
        if manifest is not None
        else f"OpenEnv default `{DEFAULT_APP}` (no manifest)"
    )
    if manifest is not None or _module_file(root, module) is not None:
        found.append(
            LaunchCandidate(
                kind="manifest",
                label="manifest app from the environment folder",
                app=app,
                cwd=root,
                source=source,
            )
        )
    if _module_file(root, module) is None:
        # e.g. `app: envs.NAME.server.app:app`, written for the repository root.
        where = _locate_module(root, module, {})
        if where is not None:
            found.append(
                LaunchCandidate(
                    kind="manifest",
                    label="manifest app from an enclosing folder",
                    app=app,
                    cwd=where[0],
                    pythonpath=(where[0],),
                    source=source,
                )
            )
    package = _package_candidate(root, app)
    if package is not None:
        found.append(package)
    script = _script_candidate(root, _read_pyproject(root, pyproject))
    if script is not None:
        found.append(script)
    docker = _dockerfile_candidate(root, _find_dockerfile(root, dockerfile))
    if docker is not None:
        found.append(docker)
    out: list[LaunchCandidate] = []
    seen: set[tuple[Any, ...]] = set()
    for cand in found:
        if cand._key() not in seen:
            seen.add(cand._key())
            out.append(cand)
    return out


# ---------------------------------------------------------------------------------------------
# The four forms


def _package_candidate(root: Path, app: str) -> LaunchCandidate | None:
    """``NAME.<app>`` from the parent folder, when the folder is an importable package."""
    name = root.name
    if not _IDENT_RE.match(name) or not (root / "__init__.py").is_file():
        return None
    module, attr = app.split(":", 1)
    pkg_app = f"{name}.{module}:{attr}"
    if _module_file(root.parent, f"{name}.{module}") is None:
        return None
    return LaunchCandidate(
        kind="package",
        label="package form from the parent folder",
        app=pkg_app,
        cwd=root.parent,
        pythonpath=(root.parent,),
        source=f"`{name}/__init__.py` makes `{name}` a package",
    )


def _script_candidate(root: Path, pyproject: Mapping[str, Any] | None) -> LaunchCandidate | None:
    """``[project.scripts] server = "pkg.server.app:main"``: serve the module's ``app`` when it
    defines one at top level (so host and port stay envkit's), else call ``main()``."""
    if not pyproject:
        return None
    scripts = (pyproject.get("project") or {}).get("scripts") or {}
    target = scripts.get("server") if isinstance(scripts, Mapping) else None
    if not isinstance(target, str) or not APP_PATTERN.fullmatch(target.strip()):
        return None
    module, func = target.strip().split(":", 1)
    where = _locate_module(root, module, _package_dirs(pyproject))
    if where is None:
        return None
    cwd, path = where
    source = f'pyproject.toml [project.scripts] server = "{target.strip()}"'
    label = "[project.scripts] server"
    if "app" in _top_level_names(path):
        return LaunchCandidate(
            kind="script",
            label=label,
            app=f"{module}:app",
            cwd=cwd,
            pythonpath=(cwd,),
            source=source,
        )
    return LaunchCandidate(
        kind="script",
        label=label,
        app=None,
        main=f"{module}:{func}",
        cwd=cwd,
        pythonpath=(cwd,),
        source=source,
    )


def _dockerfile_candidate(root: Path, path: Path | None) -> LaunchCandidate | None:
    """The final stage's ``ENTRYPOINT`` + ``CMD`` when it runs an ASGI server on an app, run
    from the local folder in which that app's module resolves."""
    if path is None:
        return None
    parsed = _final_stage(path)
    if parsed is None:
        return None
    argv, workdir, line, text = parsed
    app, cd = _asgi_app(argv)
    if app is None:
        app, cd = _asgi_app(_start_script(root, argv))
    if app is None:
        return None
    where = _locate_module(root, app.split(":", 1)[0], {})
    if where is None:
        return None
    cwd, _ = where
    rel = _rel(path, root)
    in_dir = cd or workdir or "/"
    return LaunchCandidate(
        kind="dockerfile",
        label="Dockerfile CMD in WORKDIR",
        app=app,
        cwd=cwd,
        pythonpath=(cwd,),
        source=f"{rel} line {line}: {text} (runs in {in_dir})",
    )


# ---------------------------------------------------------------------------------------------
# Reading pyproject and Dockerfile


def _read_pyproject(
    root: Path, pyproject: Path | Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    if isinstance(pyproject, Mapping):
        return pyproject
    path = Path(pyproject) if pyproject is not None else root / PYPROJECT_NAME
    data, _error = read_pyproject(path.parent)
    return data


def _package_dirs(pyproject: Mapping[str, Any]) -> dict[str, str]:
    """setuptools ``package-dir`` (``{"echo_env": "."}``): package name -> folder."""
    tool = pyproject.get("tool") or {}
    setuptools = tool.get("setuptools") if isinstance(tool, Mapping) else None
    dirs = setuptools.get("package-dir") if isinstance(setuptools, Mapping) else None
    return {str(k): str(v) for k, v in dirs.items()} if isinstance(dirs, Mapping) else {}


def _find_dockerfile(root: Path, dockerfile: Path | None) -> Path | None:
    if dockerfile is not None:
        return Path(dockerfile) if Path(dockerfile).is_file() else None
    for cand in (root / "Dockerfile", root / "server" / "Dockerfile"):
        if cand.is_file():
            return cand
    return None


def _final_stage(path: Path) -> tuple[list[str], str | None, int, str] | None:
    """``(argv, workdir, line, text)`` of the final stage, asked of the one Dockerfile parser
    (:func:`envkit.envdir.dockerfile.parse`): ``ENTRYPOINT`` + ``CMD`` as one argv (shell
    form becomes ``sh -c``), the last ``WORKDIR`` (relative ones joined), the 1-based line and
    text of the instruction that supplied the command. ``None`` when the file is unreadable,
    does not parse or runs nothing (the static rules report those)."""
    try:  # bounded: a FIFO or a link to /dev/zero named Dockerfile must not hang
        text = read_text_bounded(path, root=path.parent)
    except (OSError, UnicodeDecodeError):
        return None
    parsed = parse_dockerfile(text)
    final = parsed.final
    if parsed.error is not None or not final.argv or final.command is None:
        return None
    return list(final.argv), final.workdir, final.command.line, final.command.content.strip()


def _asgi_app(argv: list[str]) -> tuple[str | None, str | None]:
    """``(app, cd)`` of a command that runs uvicorn/gunicorn/hypercorn: the ``module:attr``
    positional and the folder a leading ``cd DIR &&`` moved to."""
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] == "-c":
        try:
            words = shlex.split(argv[2])
        except ValueError:
            return None, None
    else:
        words = list(argv)
    cd: str | None = None
    for segment in _split_on(words, {"&&", ";", "||"}):
        if len(segment) >= 2 and segment[0] == "cd":
            cd = segment[1]
            continue
        if segment and segment[0] == "exec":
            segment = segment[1:]
        names = [os.path.basename(w) for w in segment]
        for i, word in enumerate(names):
            runs_server = word in _SERVERS or (
                word == "-m" and i + 1 < len(names) and names[i + 1] in _SERVERS
            )
            if not runs_server:
                continue
            for arg in segment[i + 1 :]:
                if APP_PATTERN.fullmatch(arg):
                    return arg, cd
    return None, None


def _start_script(root: Path, argv: list[str]) -> list[str]:
    """A ``CMD ["/app/env/server/start.sh"]``'s own ``uvicorn ...`` line, when the script is
    found in the environment folder (by its path below the folder, or by name in ``server/``
    or the root); ``[]`` otherwise."""
    if not argv or not argv[0].endswith(".sh"):
        return []
    name = Path(argv[0]).name
    for cand in (root / "server" / name, root / name):
        try:
            lines = cand.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in reversed(lines):
            if any(s in line for s in _SERVERS) and not line.lstrip().startswith("#"):
                return ["sh", "-c", line.strip()]
    return []


def _split_on(words: list[str], seps: set[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for w in words:
        if w in seps:
            out.append([])
        else:
            out[-1].append(w)
    return [s for s in out if s]


# ---------------------------------------------------------------------------------------------
# Finding where a module lives


def _module_file(base: Path, module: str) -> Path | None:
    """The file ``module`` (dotted) resolves to under ``base``: ``a/b.py`` or
    ``a/b/__init__.py``; ``None`` when neither exists."""
    parts = module.split(".")
    if not all(_IDENT_RE.match(p) for p in parts):
        return None
    stem = base.joinpath(*parts)
    for cand in (stem.with_suffix(".py"), stem / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _locate_module(
    root: Path, module: str, package_dirs: Mapping[str, str], max_up: int = 3
) -> tuple[Path, Path] | None:
    """``(folder to run from, module file)`` for ``module``: the environment folder or the
    nearest ancestor (up to ``max_up`` levels, e.g. ``envs.NAME.server.app`` from a repository
    root) under which it resolves. A setuptools ``package-dir`` mapping a package to ``.``
    (in-repo environments) counts when the folder carries that package's name."""
    first = module.split(".", 1)[0]
    mapped = package_dirs.get(first)
    if mapped is not None and Path(mapped) == Path(".") and root.name != first:
        return None  # `pip install -e .` would make it importable; a plain folder cannot
    base = root
    for _ in range(max_up + 1):
        path = _module_file(base, module)
        if path is not None:
            return base, path
        if base.parent == base:
            break
        base = base.parent
    return None


def _top_level_names(path: Path) -> set[str]:
    """Names bound at a module's top level (assignments, imports, defs), read with ``ast``."""
    try:
        tree = parse_python(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Try, ast.If)):
            # `try: from .x import app / except ImportError: ...` binds at top level too.
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign):
                    names.update(t.id for t in sub.targets if isinstance(t, ast.Name))
                elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    return names


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------
# Root cause of a failed start

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
#: Exceptions raised by stopping a server, never the reason it failed.
_SHUTDOWN = {
    "KeyboardInterrupt",
    "CancelledError",
    "asyncio.exceptions.CancelledError",
    "asyncio.CancelledError",
    "SystemExit",
}
_UVICORN_ERROR = re.compile(r"^ERROR:\s+(?P<msg>.+)$")


@dataclass(frozen=True)
class RootCause:
    """The line that explains a failed start.

    Attributes:
        line: e.g. ``"ImportError: attempted relative import with no known parent package"``.
        exc_type: ``"ImportError"`` (``None`` for a non-traceback error line).
        message: the text after ``TYPE: ``.
    """

    line: str
    exc_type: str | None = None
    message: str = ""
    chain: tuple[str, ...] = field(default=(), compare=False)


def _message_below(rest: list[str]) -> str:
    """The first line of a message printed below an empty ``TYPE:`` line: NLTK's
    ``LookupError:`` is followed by a ``****`` rule and an indented ``Resource punkt not
    found.`` (textarena_env prints one). Only indented lines count, past blank and rule lines:
    ``""`` when an unindented line (a log line, the next traceback) comes first."""
    for ln in rest:
        text = ln.strip()
        if not text or not text.strip("*=-_~#"):
            continue
        return text if ln[0].isspace() else ""
    return ""


def root_cause(log: str) -> RootCause | None:
    """The root-cause line of a server log: the exception line (type and message) that ends
    the last Python traceback, ignoring shutdown noise (``KeyboardInterrupt``,
    ``CancelledError``, ``SystemExit``); else uvicorn's last ``ERROR:`` line (e.g. ``Error
    loading ASGI app. Could not import module "server.app".``); else ``None``.

    Args:
        log: the server's combined stdout/stderr (ANSI colours are stripped).

    Returns:
        A :class:`RootCause` whose ``chain`` lists every traceback's exception line in order
        (chained exceptions included), or ``None`` when the log shows no error.
    """
    lines = [_ANSI.sub("", raw).rstrip() for raw in log.splitlines()]
    found: list[tuple[str, str, str]] = []
    in_tb = False
    for i, ln in enumerate(lines):
        # A frame line also opens a traceback: a log tail may have cut off its header.
        if ln.startswith(("Traceback (most recent call last):", '  File "')):
            in_tb = True
            continue
        if not in_tb:
            continue
        if not ln or ln[0].isspace():
            continue  # frames, source lines, carets
        m = _EXC_LINE.match(ln)
        if m and not ln.startswith(("During handling", "The above exception")):
            typ, msg = m.group("type"), (m.group("msg") or "").strip()
            if not msg and m.group("msg") is not None:
                msg = _message_below(lines[i + 1 :])
                if msg:
                    ln = f"{typ}: {msg}"
            found.append((ln, typ, msg))
        in_tb = False
    chain = tuple(f[0] for f in found)
    for ln, typ, msg in reversed(found):
        if typ not in _SHUTDOWN and typ.rsplit(".", 1)[-1] not in _SHUTDOWN:
            return RootCause(line=ln, exc_type=typ, message=msg, chain=chain)
    for ln in reversed(lines):
        m = _UVICORN_ERROR.match(ln)
        if m and "Traceback" not in ln:
            return RootCause(line=m.group("msg").strip(), chain=chain)
    return None
