"""Dependency drift: is ``uv.lock`` in step with ``pyproject.toml``, and does
``pyproject.toml`` declare what the server imports?

Both questions decide whether a Space starts: its Dockerfile installs the lock
(``uv sync --frozen``), so a dependency added to ``pyproject.toml`` without ``uv lock`` is
not installed, and a module that is only in the local venv is not either. Both end in
``ModuleNotFoundError`` at start-up, after a build that succeeded.

* :func:`check_lock` asks uv itself (``uv lock --check --offline``, bounded in time) and,
  when uv cannot answer offline, compares the requirement names of ``pyproject.toml`` with
  the ones recorded in the lock.
* :func:`find_undeclared` runs deptry (a maintained checker that maps imports to
  distributions through installed metadata, e.g. ``yaml`` -> ``PyYAML``) under the
  environment's own interpreter (:mod:`envkit.programs.deptry_scan`), so the mapping is that
  of the venv the server runs in.

Both only read files and run subprocesses with timeouts; neither imports the environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from envkit import programs
from envkit.envdir.toml import TomlError, parse_toml
from envkit.envdir.uv import uv_binary
from envkit.fsutil import probe, read_text_bounded

LOCK_NAME = "uv.lock"
#: uv's words for a lock that no longer satisfies pyproject.toml (uv 0.5-0.9).
_STALE_MARK = "needs to be updated"
#: uv.lock files of real projects pass 1 MiB (a generated environment's is ~0.8 MiB).
_LOCK_LIMIT = 32 * 1024 * 1024
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def canonical(name: str) -> str:
    """PEP 503 normalised distribution name (``PyYAML`` -> ``pyyaml``, ``a_b.c`` -> ``a-b-c``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str | None:
    """The canonical name of a PEP 508 requirement string, ``None`` when it has none."""
    m = _NAME_RE.match(req) if isinstance(req, str) else None
    return canonical(m.group(1)) if m else None


def absent_requirements(
    python: str, requires: Iterable[str], *, timeout_s: float = 15.0
) -> list[str]:
    """The declared requirements that are not installed for ``python``.

    Only the distribution's presence is checked, not its version; a requirement with an
    environment marker (``; python_version < "3.12"``) is left out, since whether it applies
    is the interpreter's business.

    Args:
        python: interpreter to ask (an environment's venv, :meth:`envkit.envdir.EnvDir.python`).
        requires: PEP 508 requirement strings (``[project] dependencies``).
        timeout_s: bound on the subprocess, in seconds.

    Returns:
        Canonical names of the absent distributions, in the order given; ``[]`` also when the
        interpreter could not answer (nothing is known to be absent).
    """
    names = [n for r in requires if ";" not in str(r) and (n := requirement_name(r))]
    if not names:
        return []
    try:
        proc = subprocess.run(
            [python, "-I", str(programs.path("absent_dists")), json.dumps(names)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
        absent = json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return []
    return [str(n) for n in absent] if isinstance(absent, list) else []


@dataclass(frozen=True)
class LockCheck:
    """What :func:`check_lock` found.

    Attributes:
        state: ``"fresh"``, ``"stale"`` or ``"unknown"`` (neither way could tell).
        method: ``"uv"`` (``uv lock --check --offline`` answered) or ``"names"`` (the
            requirement names were compared because uv could not answer).
        detail: why uv could not answer (``method == "names"``), else ``""``.
        added: canonical names in ``pyproject.toml`` but not in the lock (``names`` only).
        removed: canonical names in the lock but no longer in ``pyproject.toml``.
    """

    state: str
    method: str
    detail: str = ""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def check_lock(
    root: Path, project: Mapping[str, Any], python: str | None = None, timeout_s: float = 20.0
) -> LockCheck:
    """Whether ``root/uv.lock`` still satisfies ``root/pyproject.toml``.

    Runs ``uv lock --check --offline`` (the binary the ``uv`` package ships, see
    :func:`envkit.envdir.uv.uv_binary`) with a ``timeout_s`` seconds bound; ``--offline`` keeps
    it from reaching an index: uv answers from the lock and its cache. When uv is missing,
    times out, or needs the network to decide (a new requirement not in its cache), the
    names of ``[project] dependencies`` and ``optional-dependencies`` are compared with the
    root package's ``requires-dist`` in the lock instead.

    Args:
        root: environment directory holding ``pyproject.toml`` and ``uv.lock``.
        project: the parsed ``[project]`` table.
        python: the environment's interpreter, handed to uv so it skips its own search (which
            dominates its run time behind slow shims such as pyenv's: ~0.3 s against ~0.05 s).
        timeout_s: bound on uv's run, in seconds.

    Returns:
        A :class:`LockCheck`; never raises.
    """
    uv = uv_binary()
    if uv is None:
        return _compare_names(root, project, "uv is not installed")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
    argv = [uv, "lock", "--check", "--offline", "--directory", str(root)]
    try:
        proc = subprocess.run(
            argv + (["--python", python] if python else []),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return _compare_names(root, project, f"`uv lock --check` took over {timeout_s:g} s")
    except OSError as exc:
        return _compare_names(root, project, f"`uv lock --check` could not run: {exc}")
    out = f"{proc.stderr}\n{proc.stdout}"
    if proc.returncode == 0:
        return LockCheck("fresh", "uv")
    if _STALE_MARK in out:
        return LockCheck("stale", "uv")
    errors = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("error:")]
    cause = errors[0] if errors else f"exit code {proc.returncode}"
    return _compare_names(root, project, f"`uv lock --check --offline` could not decide ({cause})")


def _declared_names(project: Mapping[str, Any]) -> set[str]:
    reqs: list[Any] = list(project.get("dependencies") or [])
    optional = project.get("optional-dependencies") or {}
    if isinstance(optional, dict):
        for group in optional.values():
            reqs += group if isinstance(group, list) else []
    return {n for n in map(requirement_name, reqs) if n}


def _compare_names(root: Path, project: Mapping[str, Any], why: str) -> LockCheck:
    """The fallback: requirement names of ``[project]`` against the lock's root package."""
    try:
        lock = parse_toml(read_text_bounded(root / LOCK_NAME, root=root, limit=_LOCK_LIMIT))
    except (OSError, UnicodeDecodeError, TomlError) as exc:
        return LockCheck("unknown", "names", f"{why}; uv.lock unreadable: {exc}")
    name = requirement_name(str(project.get("name", "")))
    packages = [p for p in lock.get("package") or [] if isinstance(p, dict)]
    mine = [p for p in packages if _is_root_package(p, name)]
    if not mine:
        return LockCheck("unknown", "names", f"{why}; uv.lock has no package `{name}`")
    recorded = (mine[0].get("metadata") or {}).get("requires-dist") or []
    locked = {requirement_name(str(r.get("name", ""))) for r in recorded if isinstance(r, dict)}
    declared = _declared_names(project)
    added, removed = sorted(declared - locked), sorted(n for n in locked - declared if n)
    state = "stale" if added or removed else "fresh"
    return LockCheck(state, "names", why, tuple(added), tuple(removed))


def _is_root_package(pkg: Mapping[str, Any], name: str | None) -> bool:
    source = pkg.get("source") or {}
    at_root = isinstance(source, dict) and "." in (source.get("editable"), source.get("virtual"))
    return at_root or (name is not None and requirement_name(str(pkg.get("name", ""))) == name)


# -- undeclared imports (deptry) -------------------------------------------------------------

#: deptry's rules kept: DEP001 (imported, not installed, not declared), DEP003 (installed only
#: as someone else's dependency or by hand), DEP004 (declared only for development).
_KEPT = ("DEP001", "DEP003", "DEP004")
#: deptry and the distributions it requires (0.25); tomli only below Python 3.15.
_DEPTRY_DISTS = ("deptry", "click", "packaging", "requirements-parser", "tomli")
_OPTIONAL_DISTS = ("tomli",)


@dataclass(frozen=True)
class UndeclaredImport:
    """One import the container will not be able to satisfy.

    Attributes:
        module: the top-level module imported, e.g. ``"yaml"``.
        file: path relative to the environment root (``/``-separated).
        line, column: 1-based position of the import statement.
        dev_only: declared, but only as a development dependency or optional extra.
    """

    module: str
    file: str
    line: int
    column: int
    dev_only: bool = False


@dataclass
class ImportScan:
    """What :func:`find_undeclared` found, or why it could not look.

    Attributes:
        undeclared: imports the declared dependencies do not provide, in file order.
        skipped: why the scan could not run (``""`` when it ran).
        absent: declared requirements not installed in the interpreter (their modules are
            unknown, so imports they would provide are not reported).
    """

    undeclared: list[UndeclaredImport] = field(default_factory=list)
    skipped: str = ""
    absent: tuple[str, ...] = ()


#: Ignore files deptry (its Rust file walker) reads whole in every directory it visits.
IGNORE_FILES = (".gitignore", ".ignore")
#: Directories the unsafe-ignore-file walk does not enter (deptry skips them too, and a
#: ``.venv`` can hold 50k files).
_SKIPPED_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".tox", ".nox"}


#: ``(dirpath, filenames)`` of every directory deptry visits (:func:`_walk`).
_Tree = list[tuple[str, list[str]]]


def _walk(root: Path) -> _Tree:
    """The folders under ``root`` deptry would visit, each with its file names (sorted)."""
    tree = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS)
        tree.append((dirpath, sorted(filenames)))
    return tree


def unsafe_ignore_file(root: Path, tree: _Tree | None = None) -> str:
    """Why deptry must not walk ``root``, or ``""``: an ignore file (``.gitignore``,
    ``.ignore``) anywhere under it that :func:`envkit.fsutil.probe` refuses (a link to
    ``/dev/zero``, a FIFO, a file over the text limit). deptry reads those whole, unbounded:
    a ``.gitignore`` linked to ``/dev/zero`` made it use 10 GB. ``tree``: ``root`` as
    :func:`_walk` lists it, when the caller has walked it already."""
    for dirpath, filenames in _walk(root) if tree is None else tree:
        for name in IGNORE_FILES:
            if name in filenames:
                problem = probe(Path(dirpath, name), root=root)
                if problem is not None:
                    rel = Path(dirpath, name).relative_to(root).as_posix()
                    reason = getattr(problem, "reason", None) or str(problem)
                    return f"`{rel}` is {reason}: deptry would read it whole"
    return ""


#: Scans of this process by what decides them (:func:`_scan_key`), newest last.
_SCANS: OrderedDict[tuple[object, ...], ImportScan] = OrderedDict()
_SCANS_KEPT = 64
_SCANS_LOCK = threading.Lock()  # a library caller may validate on several threads at once
#: Trees whose files deptry reads add up to more than this (bytes) are not remembered.
_KEY_BYTES_LIMIT = 8 * 1024 * 1024


def _site_fingerprint(python: str) -> tuple[object, ...] | None:
    """The modification times (ns) of the site-packages folders of ``python``'s venv: an
    install or removal adds or removes a ``*.dist-info`` folder there, which changes them.
    ``None`` (nothing remembered) for an interpreter outside a venv, or a venv that also
    sees the system's packages."""
    if not Path(python).is_absolute():
        return None
    venv = Path(python).parent.parent
    try:
        cfg = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
        if re.search(r"include-system-site-packages\s*=\s*true", cfg, re.IGNORECASE):
            return None
        sites = sorted(
            [*venv.glob("lib/python*/site-packages"), *venv.glob("lib64/python*/site-packages")]
        )
        return (str(venv.resolve()), cfg, *((str(d), d.stat().st_mtime_ns) for d in sites))
    except OSError:
        return None


def _read_by_deptry(name: str, *, top: bool) -> bool:
    """Whether deptry reads a file named ``name``: code (``.py``, notebooks), ignore files,
    and at the top its configuration and the requirements files it falls back to."""
    if name.endswith((".py", ".ipynb")) or name in (*IGNORE_FILES, "pyproject.toml"):
        return True
    return top and (name == "setup.cfg" or name.startswith("requirements"))


def _scan_key(
    root: Path,
    tree: _Tree,
    python: str,
    scope: set[str],
    requires: list[str],
    first_party: list[str],
) -> tuple[object, ...] | None:
    """What decides a scan of ``root``: the interpreter's packages
    (:func:`_site_fingerprint`), the names at the top of ``root`` (deptry counts a folder
    or module there as first-party), the bytes of every file deptry reads (its Python
    files, ``pyproject.toml``, the ignore files) and the arguments. ``None`` when it cannot
    be told cheaply (no venv, a file that cannot be read, more than
    :data:`_KEY_BYTES_LIMIT` bytes)."""
    site = _site_fingerprint(python)
    if site is None:
        return None
    h = hashlib.sha256()
    total = 0
    try:
        h.update("\0".join(sorted(os.listdir(root))).encode("utf-8", "surrogateescape"))
        for dirpath, filenames in tree:
            for name in filenames:
                if not _read_by_deptry(name, top=dirpath == str(root)):
                    continue
                path = Path(dirpath, name)
                if path.is_symlink() or not path.is_file():
                    return None
                total += path.stat().st_size
                if total > _KEY_BYTES_LIMIT:
                    return None  # before reading it: a huge file is not read whole
                data = path.read_bytes()
                rel = path.relative_to(root).as_posix()
                h.update(f"\0{rel}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
                h.update(data)
    except OSError:
        return None
    return (site, h.hexdigest(), tuple(sorted(scope)), tuple(requires), tuple(first_party))


def find_undeclared(
    root: Path,
    python: str,
    files: Iterable[str],
    *,
    requires: Iterable[str],
    first_party: Iterable[str],
    timeout_s: float = 30.0,
) -> ImportScan:
    """Imports in ``files`` that the requirements ``requires`` do not provide.

    deptry (its ``DEP001``/``DEP003``/``DEP004`` violations) lists third-party imports not
    declared as main dependencies; an import is then kept only when no distribution in the
    installed closure of ``requires`` provides it: a module that comes with a declared
    dependency (``pydantic`` with ``openenv``) is installed in the container too.

    Args:
        root: environment directory (its ``pyproject.toml`` is deptry's config).
        python: the environment's interpreter (:meth:`envkit.envdir.EnvDir.python`).
        files: paths relative to ``root`` whose imports count.
        requires: the ``[project] dependencies`` strings (PEP 508).
        first_party: top-level names of the environment's own package(s).
        timeout_s: bound on the subprocess, in seconds.

    Returns:
        An :class:`ImportScan`; never raises (``skipped`` says why it could not run). A
        scan that ran is remembered for this process under what decides it
        (:func:`_scan_key`): the same files, arguments and installed packages give it
        again without a subprocess (a library caller or a test suite validating one tree
        many times).
    """
    tree = _walk(root)
    unsafe = unsafe_ignore_file(root, tree)
    if unsafe:
        return ImportScan(skipped=unsafe)
    scope = {f.replace(os.sep, "/") for f in files}
    requires, first_party = list(requires), list(first_party)
    key = _scan_key(root, tree, python, scope, requires, first_party)
    if key is not None:
        with _SCANS_LOCK:
            kept = _SCANS.get(key)
            if kept is not None:
                _SCANS.move_to_end(key)
                return ImportScan(list(kept.undeclared))
    scan = _run_deptry(root, python, scope, requires, first_party, timeout_s)
    if key is not None and not scan.skipped:
        with _SCANS_LOCK:
            _SCANS[key] = ImportScan(list(scan.undeclared))
            while len(_SCANS) > _SCANS_KEPT:
                _SCANS.popitem(last=False)
    return scan


def _run_deptry(
    root: Path,
    python: str,
    scope: set[str],
    requires: list[str],
    first_party: list[str],
    timeout_s: float,
) -> ImportScan:
    """deptry and the closure walk under ``python`` (:mod:`envkit.programs.deptry_scan`)."""
    with tempfile.TemporaryDirectory(prefix="envkit-deptry-") as tmp:
        shim = str(Path(tmp, "shim"))
        missing = _link_deptry(Path(shim))
        if missing:
            return ImportScan(skipped=f"deptry is not installed ({missing} is missing)")
        out = str(Path(tmp, "deptry.json"))
        args = {
            "deptry": _deptry_args(out, first_party),
            "requires": list(requires),
            "scope": sorted(scope),
        }
        try:
            proc = subprocess.run(
                [python, "-I", str(programs.path("deptry_scan")), shim, out, json.dumps(args)],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return ImportScan(skipped=f"deptry did not finish within {timeout_s:g} s")
        except OSError as exc:
            return ImportScan(skipped=f"{python} could not run deptry: {exc}")
        try:
            violations = json.loads(Path(out).read_text())
            env = json.loads(Path(out + ".env.json").read_text())
        except (OSError, ValueError):
            last = (proc.stderr or proc.stdout).strip().splitlines()
            cause = last[-1] if last else f"exit code {proc.returncode}"
            return ImportScan(skipped=f"deptry failed under {python}: {cause}")
    if env.get("absent"):
        names = ", ".join(f"`{n}`" for n in env["absent"])
        return ImportScan(
            skipped=f"declared dependencies ({names}) are not installed for {python}, so "
            "imports cannot be mapped to distributions; create the environment's venv "
            "(`uv sync`) and validate again",
            absent=tuple(env["absent"]),
        )
    return _keep(violations, env, scope, set(first_party))


def _deptry_args(out: str, first_party: Iterable[str]) -> list[str]:
    args = [".", "--json-output", out, "--no-ansi", "--ignore", "DEP002,DEP005"]
    for name in first_party:
        args += ["--known-first-party", name]
    return args


def _keep(
    violations: list[dict[str, Any]], env: dict[str, Any], scope: set[str], first_party: set[str]
) -> ImportScan:
    provided: dict[str, list[str]] = env.get("provided") or {}
    found: list[UndeclaredImport] = []
    for v in violations:
        code = (v.get("error") or {}).get("code")
        module = str(v.get("module") or "").split(".")[0]
        loc = v.get("location") or {}
        rel = str(loc.get("file", "")).replace(os.sep, "/").removeprefix("./")
        if code not in _KEPT or rel not in scope or module in first_party:
            continue
        if module in ("openenv", "openenv_core"):  # EK203/EK214 speak for the runtime
            continue
        if provided.get(module):
            continue  # comes with a declared dependency: installed in the container too
        found.append(
            UndeclaredImport(
                module,
                rel,
                int(loc.get("line") or 1),
                int(loc.get("column") or 1),
                dev_only=code == "DEP004",
            )
        )
    found.sort(key=lambda u: (u.file, u.line, u.column))
    return ImportScan(found)


def _link_deptry(shim: Path) -> str | None:
    """Fill ``shim`` with links to the top-level files and folders of deptry and its
    requirements as installed for envkit (every one their ``RECORD`` lists: a compiled
    package such as tomli also ships a helper module beside its folder), and to
    :mod:`envkit.programs.absent_dists` (as ``_envkit_absent_dists``, a name no environment
    uses); the name of a required distribution that is not installed, else ``None``."""
    shim.mkdir()
    for name in _DEPTRY_DISTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in _OPTIONAL_DISTS:
                continue
            return name
        tops = {f.parts[0] for f in dist.files or () if f.parts}
        for top in sorted(tops):
            if top in ("..", "__pycache__") or top.endswith((".dist-info", ".data")):
                continue
            target = Path(str(dist.locate_file(top)))
            if target.exists() and not (shim / top).exists():
                os.symlink(target, shim / top)
    os.symlink(programs.path("absent_dists"), shim / "_envkit_absent_dists.py")
    return None
