"""The environment manifest, ``openenv.yaml``, read with line numbers.

Upstream fields (docs/protocol.md): ``spec_version``, ``name``, ``type`` (``space``),
``runtime`` (``fastapi``), ``app`` (``module:attr``), ``port``, ``variables``. envkit adds a
``validation:`` block in the spirit of OpenEnv RFC 008 (huggingface/OpenEnv#1041):

.. code-block:: yaml

    validation:
      reward_range: [0.0, 1.0]   # [lo, hi], lo < hi, both finite
      max_steps: 8               # an episode must end (done=true) within this many steps
      oracle: server.oracle:policy   # observation dict -> action dict reaching `hi`
      seeds: [0, 1, 2]           # reset seeds used for the determinism checks
      floor_margin: 0.1          # degenerate policies must score below hi - floor_margin
      step_timeout_s: 5.0        # p95 step latency budget, seconds
      startup_timeout_s: 60.0    # seconds to wait for GET /health after start

YAML is parsed with ruamel.yaml so every key keeps its line and column (findings point at
the line). Unknown keys inside ``validation:`` are rejected (typos must not be ignored).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from envkit.errors import SpecError
from envkit.findings import Location

MANIFEST_NAME = "openenv.yaml"
APP_PATTERN = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


class ManifestSyntaxError(SpecError):
    """``openenv.yaml`` is not valid YAML. ``location`` points at the offending line."""

    def __init__(self, message: str, location: Location, **kw: Any):
        super().__init__(message, **kw)
        self.location = location


@dataclass
class YamlDocument:
    """A YAML file parsed with positions.

    Attributes:
        path: the file on disk.
        text: its text.
        data: the parsed value (ruamel ``CommentedMap``/``CommentedSeq`` keep positions).
    """

    path: Path
    text: str
    data: Any

    def locate(self, keys: tuple[Any, ...] | list[Any], rel_to: Path | None = None) -> Location:
        """Location of the value at ``keys`` (e.g. ``("validation", "reward_range", 0)``).

        Walks as deep as the path exists; returns the deepest known position (1-based). Falls
        back to line 1 when nothing matches.
        """
        file = str(self.path.relative_to(rel_to)) if rel_to else self.path.name
        node = self.data
        line, col = 1, 1
        for key in keys:
            lc = getattr(node, "lc", None)
            try:
                if lc is not None and isinstance(node, dict) and key in node:
                    line, col = lc.key(key)[0] + 1, lc.key(key)[1] + 1
                    node = node[key]
                elif lc is not None and isinstance(node, list) and isinstance(key, int) \
                        and 0 <= key < len(node):
                    line, col = lc.item(key)[0] + 1, lc.item(key)[1] + 1
                    node = node[key]
                else:
                    break
            except (KeyError, IndexError, TypeError):  # pragma: no cover - defensive
                break
        return Location(file, line, col)


def load_yaml(path: Path) -> YamlDocument:
    """Parse a YAML file keeping positions, in bounded time and memory (issue #12).

    The file is read with :func:`envkit.fsutil.read_text_bounded` (a regular file inside its
    directory, at most 1 MiB) and parsed with :func:`envkit.safe_yaml.load_bounded` (alias
    expansion, nesting and Unicode bounded).

    Raises:
        SpecError: the file cannot be read (missing, a FIFO/device, a symbolic link leaving its
            directory, over 1 MiB, not UTF-8).
        ManifestSyntaxError: the file is not usable YAML; the location is the parser's mark or
            the limit's line.
    """
    from envkit.fsutil import read_text_bounded
    from envkit.safe_yaml import YamlLimitError, load_bounded

    try:
        text = read_text_bounded(path, root=path.parent)
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"Cannot read {path}: {exc}.",
                        hint="Make it a regular UTF-8 text file under 1 MiB.") from None
    try:
        data = load_bounded(text)
    except YamlLimitError as exc:
        loc = Location(path.name, exc.line, exc.column)
        where = f"{loc}: " if exc.line else ""
        raise ManifestSyntaxError(
            f"{where}{path.name} is not valid YAML: {exc.message}.", loc,
            hint="Fix the YAML at that line." if exc.line else "Fix the YAML.",
        ) from None
    return YamlDocument(path=path, text=text, data=data)


class ValidationSpec(BaseModel):
    """envkit's ``validation:`` block (see the module docstring for the meaning of each key)."""

    model_config = ConfigDict(extra="forbid")

    reward_range: tuple[float, float] = (0.0, 1.0)
    max_steps: int | None = Field(default=None, ge=1)
    oracle: str | None = None
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    floor_margin: float = Field(default=0.1, ge=0.0)
    step_timeout_s: float = Field(default=5.0, gt=0)
    startup_timeout_s: float = Field(default=60.0, gt=0)

    @field_validator("reward_range")
    @classmethod
    def _range_ok(cls, v: tuple[float, float]) -> tuple[float, float]:
        lo, hi = v
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("both bounds must be finite numbers")
        if lo >= hi:
            raise ValueError(f"lo ({lo}) must be smaller than hi ({hi})")
        return v

    @field_validator("oracle")
    @classmethod
    def _oracle_ok(cls, v: str | None) -> str | None:
        if v is not None and not APP_PATTERN.fullmatch(v):
            raise ValueError("must be of the form 'module.path:callable'")
        return v

    @field_validator("seeds")
    @classmethod
    def _seeds_ok(cls, v: list[int]) -> list[int]:
        if any(s < 0 for s in v):
            raise ValueError("seeds must be >= 0 (openenv-core rejects negative seeds)")
        return v


class Manifest(BaseModel):
    """The parts of ``openenv.yaml`` envkit uses. Unknown top-level keys are kept (other tools
    may add their own); ``validation:`` is strict."""

    model_config = ConfigDict(extra="allow")

    spec_version: int = 1
    name: str
    type: str = "space"
    runtime: str = "fastapi"
    app: str = "server.app:app"
    port: int = Field(default=8000, ge=1, le=65535)
    variables: dict[str, str] = Field(default_factory=dict)
    validation: ValidationSpec = Field(default_factory=ValidationSpec)

    @field_validator("app")
    @classmethod
    def _app_ok(cls, v: str) -> str:
        if not APP_PATTERN.fullmatch(v):
            raise ValueError("must be of the form 'module.path:attribute', e.g. server.app:app")
        return v

    @model_validator(mode="before")
    @classmethod
    def _none_validation(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("validation", ...) is None:
            data = dict(data)
            data["validation"] = {}
        return data


def pydantic_errors_to_locations(doc: YamlDocument, exc: ValidationError,
                                 rel_to: Path | None = None) -> list[tuple[str, Location]]:
    """Turn pydantic errors into ``(message, location)`` pairs located in the YAML file.

    The message names the dotted key path, e.g. ``validation.reward_range: lo (1.0) must be
    smaller than hi (0.0)``.
    """
    out: list[tuple[str, Location]] = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        msg = err.get("msg", "invalid value")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if err.get("type") == "extra_forbidden":
            msg = "unknown key (a typo?)"
        out.append((f"{dotted}: {msg}", doc.locate(loc, rel_to=rel_to)))
    return out


def to_plain(data: Any) -> Any:
    """ruamel containers -> plain dict/list (pydantic accepts both, this keeps errors clean)."""
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    return data


def read_manifest(root: Path) -> Manifest:
    """Read and validate ``root/openenv.yaml``.

    Args:
        root: the environment directory.

    Returns:
        The parsed :class:`Manifest`.

    Raises:
        SpecError: the file is missing, not YAML, not a mapping, or fails the schema. The
            message names the file, line and key (e.g. ``openenv.yaml:9:3: validation.max_steps:
            Input should be greater than or equal to 1``) and the hint points at
            ``envkit validate``.
    """
    path = root / MANIFEST_NAME
    if not path.is_file():
        raise SpecError(
            f"No {MANIFEST_NAME} in {root}: this is not an OpenEnv environment directory.",
            hint="Run the command inside an environment (or pass its path), or create one with "
            "`envkit init my-env`.",
        )
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise SpecError(f"{path}: the manifest must be a YAML mapping of keys to values.",
                        hint="See `envkit validate --explain EK101`.")
    try:
        return Manifest.model_validate(to_plain(doc.data))
    except ValidationError as exc:
        first_msg, first_loc = pydantic_errors_to_locations(doc, exc)[0]
        raise SpecError(
            f"{first_loc}: {first_msg}.",
            hint=f"Fix {MANIFEST_NAME}; `envkit validate --static` lists every problem.",
        ) from None
