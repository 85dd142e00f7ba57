"""The one reader of an environment directory: :class:`EnvDir`.

Each file is read and parsed once, on first use (``functools.cached_property``), and every
fact that several commands need (the manifest and its resolved spec, pyproject, the root
Dockerfile, the app and port to serve, the interpreter, the time limits) is asked of it
rather than re-derived. Parsing itself stays with the module that owns the format
(:mod:`envkit.envdir.manifest` for ``openenv.yaml``, :mod:`envkit.envdir.toml` for TOML,
:mod:`envkit.envdir.dockerfile` for the Dockerfile); this class decides *which* file and
caches the answer. An ``EnvDir`` is a snapshot: make a new one after writing to the directory.
"""

from __future__ import annotations

import ast
import os
from functools import cached_property
from pathlib import Path
from typing import Any

from envkit.envdir.app_source import AppCapacity, read_capacity
from envkit.envdir.constants import (
    APP_PATTERN,
    DEFAULT_APP,
    DEFAULT_PORT,
    DOCKERFILE_NAME,
    MANIFEST_NAME,
)
from envkit.envdir.dockerfile import ParsedDockerfile, parse
from envkit.envdir.launch import LaunchCandidate, launch_candidates
from envkit.envdir.manifest import (
    EnvSpec,
    Manifest,
    YamlDocument,
    manifest_of,
    parse_yaml,
    read_manifest,
)
from envkit.envdir.project import (
    Timeouts,
    env_spec,
    own_interpreter_note,
    resolve_python,
    resolve_timeouts,
)
from envkit.envdir.pysource import parse_python
from envkit.envdir.reset_options import declared_reset_options, server_modules
from envkit.envdir.toml import PYPROJECT_NAME, TomlError, parse_toml
from envkit.errors import SpecError, UsageError
from envkit.fsutil import FileTooLargeError, UnsafeFileError, read_text_bounded


def raw_app(data: object) -> str | None:
    """The ``app`` key of ``data`` (the manifest's YAML, even one that fails the schema) when
    it is a ``module:attr`` string, else ``None``."""
    app = data.get("app") if isinstance(data, dict) else None
    return app if isinstance(app, str) and APP_PATTERN.fullmatch(app) else None


def declared_app(manifest: Manifest | None, data: object) -> str:
    """The ASGI app to serve: the validated manifest's, else :func:`raw_app`, else OpenEnv's
    default ``server.app:app``."""
    if manifest is not None:
        return manifest.app
    return raw_app(data) or DEFAULT_APP


def declared_port(manifest: Manifest | None, data: object) -> int:
    """The port a manifest declares (1-65535), read like :func:`declared_app`; else 8000."""
    if manifest is not None:
        return manifest.port
    raw = data.get("port") if isinstance(data, dict) else None
    if isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 65535:
        return raw
    return DEFAULT_PORT


class EnvDir:
    """An environment directory, read once.

    Args:
        root: the directory that holds (or should hold) ``openenv.yaml``; made absolute.

    Attributes:
        root: the absolute directory.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().resolve()
        self._texts: dict[str, str | None] = {}
        self._asts: dict[str, ast.Module | None] = {}
        self._pythons: dict[str | None, str] = {}
        self.read_errors: dict[str, OSError] = {}
        """Relative path -> why the bounded reader refused it (too large, not a regular file,
        a link out of the directory): what EK220/EK221 report."""

    # -- files ---------------------------------------------------------------------------------
    def text(self, rel: str) -> str | None:
        """UTF-8 text of ``root/rel``; ``None`` when missing, refused or not UTF-8 (cached).

        Every read of the directory's files goes through here:
        :func:`envkit.fsutil.read_text_bounded` reads only regular files inside the root, at
        most 1 MiB, so a FIFO, a link to ``/dev/zero`` or a 10 GB file is refused (and
        recorded in :attr:`read_errors`) instead of hanging or filling memory.
        """
        if rel not in self._texts:
            try:
                self._texts[rel] = read_text_bounded(self.root / rel, root=self.root)
            except (FileTooLargeError, UnsafeFileError) as exc:
                self.read_errors[rel] = exc
                self._texts[rel] = None
            except (OSError, UnicodeDecodeError):
                self._texts[rel] = None
        return self._texts[rel]

    def python_ast(self, rel: str) -> ast.Module | None:
        """The syntax tree of the Python file ``root/rel``; ``None`` when it is missing,
        unreadable or does not parse (cached)."""
        if rel not in self._asts:
            text = self.text(rel)
            tree = None
            if text is not None:
                try:
                    tree = parse_python(text, filename=rel)
                except (SyntaxError, ValueError):
                    tree = None
            self._asts[rel] = tree
        return self._asts[rel]

    def __repr__(self) -> str:
        return f"EnvDir({str(self.root)!r})"

    # -- the manifest ------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    @property
    def has_manifest(self) -> bool:
        return self.manifest_path.is_file()

    @cached_property
    def _manifest_doc_result(self) -> tuple[YamlDocument | None, Exception | None]:
        if not self.has_manifest and not self.manifest_path.is_symlink():
            return None, None
        text = self.text(MANIFEST_NAME)
        if text is None:
            why = self.read_errors.get(MANIFEST_NAME) or "not UTF-8 text"
            return None, SpecError(
                f"Cannot read {self.manifest_path}: {why}.",
                hint="Make it a regular UTF-8 text file under 1 MiB.",
            )
        try:
            return parse_yaml(self.manifest_path, text), None
        except SpecError as exc:
            return None, exc

    @property
    def manifest_doc(self) -> YamlDocument | None:
        """``openenv.yaml`` parsed with positions (any YAML), ``None`` when missing, unreadable
        or not YAML (see :attr:`manifest_doc_error`)."""
        return self._manifest_doc_result[0]

    @property
    def manifest_doc_error(self) -> Exception | None:
        """Why :attr:`manifest_doc` is ``None``: a located
        :class:`envkit.envdir.manifest.ManifestSyntaxError`, a :class:`SpecError` for an
        unreadable file, or ``None`` (parsed, or no file)."""
        return self._manifest_doc_result[1]

    @cached_property
    def _manifest_result(self) -> tuple[Manifest | None, Exception | None]:
        doc, error = self._manifest_doc_result
        if doc is None:
            if error is None:
                try:
                    read_manifest(self.root)  # the located "no openenv.yaml" error
                except SpecError as exc:
                    return None, exc
            return None, error
        try:
            return manifest_of(doc), None
        except SpecError as exc:
            return None, exc

    @property
    def manifest(self) -> Manifest | None:
        """The validated manifest, ``None`` when it is missing or invalid (see
        :attr:`manifest_error`)."""
        return self._manifest_result[0]

    @property
    def manifest_error(self) -> Exception | None:
        """Why :attr:`manifest` is ``None`` (a :class:`envkit.errors.SpecError` whose message
        is located), or ``None``."""
        return self._manifest_result[1]

    def require_manifest(self) -> Manifest:
        """The validated manifest.

        Raises:
            SpecError: it is missing, not YAML, or fails the schema (the located message of
                :func:`envkit.envdir.manifest.read_manifest`).
        """
        manifest, error = self._manifest_result
        if manifest is None:
            raise error  # type: ignore[misc]
        return manifest

    @property
    def spec(self) -> EnvSpec:
        """The resolved environment facts (reward range, max_steps, oracle, seeds, time
        limits); the defaults without a valid manifest."""

        return env_spec(self.manifest)

    # -- launch facts ------------------------------------------------------------------------
    @property
    def raw_app(self) -> str | None:
        """The manifest's ``app`` key when it is a ``module:attr`` string, read even from a
        manifest that fails the schema; ``None`` otherwise."""
        return raw_app(self._manifest_data)

    @property
    def _manifest_data(self) -> object:
        return self.manifest_doc.data if self.manifest_doc is not None else None

    @property
    def app(self) -> str:
        """The ASGI app to serve (:func:`declared_app`)."""
        return declared_app(self.manifest, self._manifest_data)

    @property
    def port(self) -> int:
        """The port to serve on (:func:`declared_port`)."""
        return declared_port(self.manifest, self._manifest_data)

    def launch_candidates(self) -> list[LaunchCandidate]:
        """The ways to start the server locally, in the order they are tried
        (:func:`envkit.envdir.launch.launch_candidates`)."""

        return launch_candidates(self.root, self.manifest, pyproject=self.pyproject or {})

    # -- pyproject and the Dockerfile ---------------------------------------------------------
    @cached_property
    def _pyproject_result(self) -> tuple[dict[str, Any] | None, Exception | None]:
        text = self.text(PYPROJECT_NAME)
        if text is not None:
            try:
                return parse_toml(text), None
            except TomlError as exc:
                return None, exc
        if PYPROJECT_NAME in self.read_errors:
            return None, self.read_errors[PYPROJECT_NAME]
        if (self.root / PYPROJECT_NAME).exists():
            return None, UnicodeDecodeError("utf-8", b"", 0, 1, "not UTF-8")
        return None, None

    @property
    def pyproject(self) -> dict[str, Any] | None:
        """pyproject.toml as a dict, ``None`` when missing or unreadable (see
        :attr:`pyproject_error`)."""
        return self._pyproject_result[0]

    @property
    def pyproject_error(self) -> Exception | None:
        """Why :attr:`pyproject` is ``None`` although the file exists: a
        :class:`envkit.envdir.toml.TomlError`, the bounded reader's refusal, or a
        :class:`UnicodeDecodeError`; ``None`` otherwise."""
        return self._pyproject_result[1]

    @property
    def project_table(self) -> dict[str, Any]:
        """pyproject's ``[project]`` table, ``{}`` when there is none."""
        table = (self.pyproject or {}).get("project", {})
        return table if isinstance(table, dict) else {}

    @cached_property
    def capacity(self) -> AppCapacity:
        """The sessions one server process accepts by default, read from the app module
        (:func:`envkit.envdir.app_source.read_capacity`)."""

        return read_capacity(self.root, self.app)

    @cached_property
    def reset_options(self) -> dict[str, list[Any]]:
        """The reset options the environment declares in its source: the keyword parameters
        of the ``reset`` methods in ``server/*.py`` with their declared values
        (:func:`envkit.envdir.reset_options.declared_reset_options`); an unreadable file
        declares nothing."""

        texts = (self.text(rel) for rel in server_modules(self.root))
        return declared_reset_options(text for text in texts if text is not None)

    @property
    def dockerfile_path(self) -> Path:
        """The Dockerfile a Docker Space builds: the one at the root."""
        return self.root / DOCKERFILE_NAME

    @property
    def dockerfile_text(self) -> str | None:
        """The root Dockerfile's text, ``None`` when it is missing, refused by the bounded
        reader (see :attr:`read_errors`) or not UTF-8."""
        return self.text(DOCKERFILE_NAME)

    @cached_property
    def dockerfile(self) -> ParsedDockerfile | None:
        """The root Dockerfile parsed once (:func:`envkit.envdir.dockerfile.parse`), ``None``
        when it is missing or not UTF-8; a tokeniser failure is in its ``error``."""

        text = self.dockerfile_text
        return None if text is None else parse(text)

    # -- how to run it -------------------------------------------------------------------------
    def python(self, override: str | None = None) -> str:
        """The interpreter that serves the environment (:func:`envkit.envdir.project.resolve_python`;
        cached per ``override``, so the server, the oracle and the training lane share one).

        Raises:
            UsageError: ``override`` is not an executable file.
        """
        if override not in self._pythons:
            self._pythons[override] = resolve_python(self.root, override)
        return self._pythons[override]

    def interpreter_note(self, override: str | None = None) -> str | None:
        """The warning shown when envkit's own interpreter serves the environment (no
        ``override`` and no ``.venv``: :func:`envkit.envdir.project.own_interpreter_note`);
        ``None`` when there is nothing to warn about."""

        return own_interpreter_note(self.root, override)

    def timeouts(
        self,
        *,
        timeout_s: float | None = None,
        startup_timeout_s: float | None = None,
        reply_timeout_s: float | None = None,
    ) -> Timeouts:
        """The run's time limits in seconds, from the options and the manifest
        (:func:`envkit.envdir.project.resolve_timeouts`).

        Raises:
            UsageError: a given value is not > 0.
        """

        return resolve_timeouts(
            self.spec,
            timeout_s=timeout_s,
            startup_timeout_s=startup_timeout_s,
            reply_timeout_s=reply_timeout_s,
        )


class EnvProject:
    """An environment directory whose manifest is valid: a view over its :class:`EnvDir`
    for the commands that need a working environment (build, run, push, eval).

    Attributes:
        envdir: the directory, read once.
        manifest: its validated manifest.
    """

    def __init__(self, envdir: EnvDir, manifest: Manifest) -> None:
        self.envdir = envdir
        self.manifest = manifest

    @property
    def root(self) -> Path:
        """The absolute directory holding ``openenv.yaml``."""
        return self.envdir.root

    def __repr__(self) -> str:
        return f"EnvProject({str(self.root)!r})"

    @classmethod
    def load(cls, path: str | os.PathLike[str] = ".") -> EnvProject:
        """Load the environment at ``path``.

        Raises:
            UsageError: ``path`` does not exist or is not a directory.
            SpecError: no or invalid ``openenv.yaml`` (located, as
                :func:`envkit.envdir.manifest.read_manifest`).
        """
        root = Path(path).expanduser()
        if not root.exists():
            raise UsageError(f"{root} does not exist.", hint="Pass the environment's directory.")
        if not root.is_dir():
            raise UsageError(
                f"{root} is not a directory.",
                hint=f"Pass the directory that holds {MANIFEST_NAME}.",
            )
        envdir = EnvDir(root)
        return cls(envdir, envdir.require_manifest())
