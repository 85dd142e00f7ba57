"""What every static check reads: :class:`StaticContext`, one per static stage.

It parses each file at most once (openenv.yaml with positions, pyproject.toml, Python modules
as ASTs) and records which rules could not be evaluated (``skipped``, e.g. Dockerfile rules
when there is no Dockerfile). It sits below the rule modules (``envkit.validation.rules.*``
import it) and below the stage that runs them (:mod:`envkit.validation.static`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.envdir.app_source import app_module_file
from envkit.envdir.constants import DEFAULT_APP, MANIFEST_NAME
from envkit.envdir.manifest import Manifest, YamlDocument
from envkit.envdir.pysource import parse_python
from envkit.envdir.reader import EnvDir, declared_port
from envkit.findings import Location


@dataclass
class StaticContext:
    """What every static check reads: a view over the run's one :class:`EnvDir` (every file
    is read, bounded, and parsed once there) plus what the static stage decides.

    Attributes:
        envdir: the environment directory, read once.
        manifest_doc: ``openenv.yaml`` parsed with positions, ``None`` when missing or not YAML
            (set by the manifest rules' ``load``).
        manifest: the validated manifest, ``None`` when it fails the schema.
        skipped: rule code -> why it was not evaluated.
    """

    envdir: EnvDir
    manifest_doc: YamlDocument | None = None
    manifest: Manifest | None = None
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The environment directory (absolute)."""
        return self.envdir.root

    @property
    def read_errors(self) -> dict[str, OSError]:
        """Relative path -> why it was not read (EK220/EK221): :attr:`EnvDir.read_errors`."""
        return self.envdir.read_errors

    # -- manifest facts usable even when the manifest is partly invalid -----------------------
    @property
    def manifest_data(self) -> dict[str, Any]:
        data = self.manifest_doc.data if self.manifest_doc is not None else None
        return data if isinstance(data, dict) else {}

    @property
    def port(self) -> int:
        """The manifest port, else 8000 (openenv's default): :func:`envkit.envdir.reader.declared_port`."""

        return declared_port(self.manifest, self.manifest_data)

    @property
    def app(self) -> str:
        raw = self.manifest_data.get("app")
        return raw if isinstance(raw, str) else DEFAULT_APP

    def manifest_loc(self, *keys: str | int) -> Location:
        if self.manifest_doc is None:
            return Location(MANIFEST_NAME)
        return self.manifest_doc.locate(keys)

    # -- files ---------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def text(self, rel: str) -> str | None:
        """UTF-8 text of ``root/rel`` or ``None`` when missing or unreadable
        (:meth:`EnvDir.text`: bounded, cached; a refused file is in :attr:`read_errors`)."""
        return self.envdir.text(rel)

    def python(self, rel: str) -> ast.Module | None:
        """The AST of a Python file, ``None`` when missing or not parseable (cached)."""
        return self.envdir.python_ast(rel)

    def syntax_error(self, rel: str) -> SyntaxError | None:
        text = self.text(rel)
        if text is None:
            return None
        try:
            parse_python(text, filename=rel)
        except SyntaxError as exc:
            return exc
        except ValueError:  # pragma: no cover - NUL bytes
            return SyntaxError("source contains NUL bytes")
        return None

    def line_of(self, rel: str, pattern: str, flags: int = re.MULTILINE) -> int | None:
        """1-based line of the first match of ``pattern`` in ``root/rel``."""
        text = self.text(rel)
        if text is None:
            return None
        m = re.search(pattern, text, flags)
        return text.count("\n", 0, m.start()) + 1 if m else None

    def pyproject(self) -> tuple[dict[str, Any] | None, Exception | None]:
        """``(data, error)`` for pyproject.toml; both ``None`` when it is missing."""
        return self.envdir.pyproject, self.envdir.pyproject_error

    def module_file(self, module: str) -> str | None:
        """The file (relative to root) that defines ``module`` (``server.app`` ->
        ``server/app.py``). Tries the path as given, then without its first component (a
        package mapped onto the root, e.g. ``my_env.server.app``;
        :func:`envkit.envdir.app_source.app_module_file`)."""

        return app_module_file(self.root, module)

    def python_files(self) -> list[str]:
        """The environment's own Python files: top level and ``server/`` (not tests)."""
        out = []
        for sub in ("", "server/"):
            d = self.root / sub
            if d.is_dir():
                out += sorted(f"{sub}{p.name}" for p in d.glob("*.py") if p.is_file())
        return out

    def skip(self, codes: Iterable[str], reason: str) -> None:
        for code in codes:
            self.skipped.setdefault(code, reason)
