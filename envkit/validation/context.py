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

from envkit.envdir.constants import DEFAULT_APP, MANIFEST_NAME
from envkit.envdir.manifest import Manifest, YamlDocument
from envkit.findings import Location


@dataclass
class StaticContext:
    """What every static check reads.

    Attributes:
        root: the environment directory (absolute).
        manifest_doc: ``openenv.yaml`` parsed with positions, ``None`` when missing or not YAML.
        manifest: the validated manifest, ``None`` when it fails the schema.
        skipped: rule code -> why it was not evaluated.
    """

    root: Path
    manifest_doc: YamlDocument | None = None
    manifest: Manifest | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    _texts: dict[str, str | None] = field(default_factory=dict)
    _asts: dict[str, ast.Module | None] = field(default_factory=dict)
    _pyproject: Any = None
    _pyproject_loaded: bool = False
    _pyproject_error: Exception | None = None
    read_errors: dict[str, OSError] = field(default_factory=dict)  # rel -> why unread (EK22x)

    # -- manifest facts usable even when the manifest is partly invalid -----------------------
    @property
    def manifest_data(self) -> dict[str, Any]:
        data = self.manifest_doc.data if self.manifest_doc is not None else None
        return data if isinstance(data, dict) else {}

    @property
    def port(self) -> int:
        """The manifest port, else 8000 (openenv's default): :func:`envkit.envdir.reader.declared_port`."""
        from envkit.envdir.reader import declared_port

        return declared_port(self.manifest, self.manifest_data)

    @property
    def app(self) -> str:
        raw = self.manifest_data.get("app")
        return raw if isinstance(raw, str) else DEFAULT_APP

    def manifest_loc(self, *keys: Any) -> Location:
        if self.manifest_doc is None:
            return Location(MANIFEST_NAME)
        return self.manifest_doc.locate(keys)

    # -- files ---------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def text(self, rel: str) -> str | None:
        """UTF-8 text of ``root/rel`` or ``None`` when missing or unreadable (cached).

        Read with :func:`envkit.fsutil.read_text_bounded`: regular files inside the root, at
        most 1 MiB; a refused file is recorded in ``read_errors`` (EK220/EK221)."""
        if rel not in self._texts:
            from envkit.fsutil import FileTooLargeError, UnsafeFileError, read_text_bounded

            try:
                self._texts[rel] = read_text_bounded(self.root / rel, root=self.root)
            except (FileTooLargeError, UnsafeFileError) as exc:
                self.read_errors[rel] = exc
                self._texts[rel] = None
            except (OSError, UnicodeDecodeError):
                self._texts[rel] = None
        return self._texts[rel]

    def python(self, rel: str) -> ast.Module | None:
        """The AST of a Python file, ``None`` when missing or not parseable (cached)."""
        if rel not in self._asts:
            text = self.text(rel)
            tree = None
            if text is not None:
                try:
                    tree = ast.parse(text, filename=rel)
                except (SyntaxError, ValueError):
                    tree = None
            self._asts[rel] = tree
        return self._asts[rel]

    def syntax_error(self, rel: str) -> SyntaxError | None:
        text = self.text(rel)
        if text is None:
            return None
        try:
            ast.parse(text, filename=rel)
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
        if not self._pyproject_loaded:
            self._pyproject_loaded = True
            text = self.text("pyproject.toml")
            if text is not None:
                from envkit.envdir.toml import TomlError, parse_toml

                try:
                    self._pyproject = parse_toml(text)
                except TomlError as exc:
                    self._pyproject_error = exc
            elif "pyproject.toml" in self.read_errors:
                self._pyproject_error = self.read_errors["pyproject.toml"]
            elif self.exists("pyproject.toml"):
                self._pyproject_error = UnicodeDecodeError("utf-8", b"", 0, 1, "not UTF-8")
        return self._pyproject, self._pyproject_error

    def module_file(self, module: str) -> str | None:
        """The file (relative to root) that defines ``module`` (``server.app`` ->
        ``server/app.py``). Tries the path as given, then without its first component (a
        package mapped onto the root, e.g. ``my_env.server.app``;
        :func:`envkit.envdir.app_source.app_module_file`)."""
        from envkit.envdir.app_source import app_module_file

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
