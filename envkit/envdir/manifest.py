"""The environment manifest, ``openenv.yaml``, read with line numbers.

Layout (OpenEnv 0.10 owns ``validation:``, RFC 008, huggingface/OpenEnv#1041):

.. code-block:: yaml

    spec_version: 1
    name: my_env
    version: 0.1.0
    type: space
    runtime: fastapi
    app: server.app:app
    port: 8000
    validation:                 # RFC 008, read by `openenv validate` (and checked by envkit)
      reward: {range: [0.0, 1.0], oracle_tolerance: 0.0, floor_margin: 0.1}
      resources: {cpu: 1, memory_mb: 512, disk_mb: 1024, episode_timeout_s: 60}
      capabilities: {verifier: {kind: reward_channel}}
      types: {tags: [echo]}
      network: {mode: no-network}
      execution: {kind: openenv_ws, probe_path: validation/runtime.json, dockerfile: Dockerfile}
    envkit:                     # envkit's own facts; OpenEnv ignores this key
      oracle: server.oracle:policy   # observation dict -> action dict reaching `hi`
      max_steps: 8               # an episode must end (done=true) within this many steps
      seeds: [0, 1, 2]           # reset seeds used for the determinism checks
      step_timeout_s: 5.0        # p95 step latency budget, seconds
      startup_timeout_s: 60.0    # seconds to wait for GET /health after start

The RFC 008 models mirror ``openenv.validation.manifest`` of openenv 0.10.0 (types, required
fields, ``extra="forbid"`` below the block's top level, schema 2 iff ``execution``, finite
numbers in schema 2); :func:`policy_violations` applies its severity policy's bounds. envkit's
layout before 0.10 (its keys directly under ``validation:``) is still read; the validate rules
flag it (EK119) and ``envkit migrate`` moves it. :attr:`Manifest.spec` resolves every source
into one :class:`EnvSpec`.

YAML is parsed with ruamel.yaml so every key keeps its line and column (findings point at
the line). Unknown keys inside ``envkit:`` are rejected (typos must not be ignored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from envkit.envdir.constants import (
    APP_PATTERN,
    DEFAULT_APP,
    DEFAULT_BLIND_FLOOR,
    DEFAULT_PORT,
    DEFAULT_STARTUP_TIMEOUT_S,
    LEGACY_KEYS,
    MANIFEST_NAME,
)
from envkit.envdir.rfc008 import (
    OpenEnvValidation,
    StrictModel,
)
from envkit.errors import SpecError
from envkit.findings import Location
from envkit.fsutil import read_text_bounded
from envkit.safe_yaml import YamlLimitError, load_bounded


class ManifestSyntaxError(SpecError):
    """``openenv.yaml`` is not valid YAML. ``location`` points at the offending line."""

    def __init__(self, message: str, location: Location, *, hint: str | None = None):
        super().__init__(message, hint=hint)
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
                elif (
                    lc is not None
                    and isinstance(node, list)
                    and isinstance(key, int)
                    and 0 <= key < len(node)
                ):
                    line, col = lc.item(key)[0] + 1, lc.item(key)[1] + 1
                    node = node[key]
                else:
                    break
            except (KeyError, IndexError, TypeError):  # pragma: no cover - defensive
                break
        return Location(file, line, col)


def load_yaml(path: Path) -> YamlDocument:
    """Parse a YAML file keeping positions, in bounded time and memory.

    The file is read with :func:`envkit.fsutil.read_text_bounded` (a regular file inside its
    directory, at most 1 MiB) and parsed by :func:`parse_yaml`.

    Raises:
        SpecError: the file cannot be read (missing, a FIFO/device, a symbolic link leaving its
            directory, over 1 MiB, not UTF-8).
        ManifestSyntaxError: the file is not usable YAML; the location is the parser's mark or
            the limit's line.
    """
    try:
        text = read_text_bounded(path, root=path.parent)
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(
            f"Cannot read {path}: {exc}.", hint="Make it a regular UTF-8 text file under 1 MiB."
        ) from None
    return parse_yaml(path, text)


def parse_yaml(path: Path, text: str) -> YamlDocument:
    """Parse YAML ``text`` (the file ``path`` holds) keeping positions, with alias
    expansion, nesting and Unicode bounded (:func:`envkit.safe_yaml.load_bounded`): the one
    YAML parser of an environment's files.

    Raises:
        ManifestSyntaxError: the text is not usable YAML; the location is the parser's mark or
            the limit's line.
    """
    try:
        data = load_bounded(text)
    except YamlLimitError as exc:
        loc = Location(path.name, exc.line, exc.column)
        where = f"{loc}: " if exc.line else ""
        raise ManifestSyntaxError(
            f"{where}{path.name} is not valid YAML: {exc.message}.",
            loc,
            hint="Fix the YAML at that line." if exc.line else "Fix the YAML.",
        ) from None
    return YamlDocument(path=path, text=text, data=data)


# --------------------------------------------------------------------------------------------
# envkit's own facts: the top-level `envkit:` section (and the legacy keys under validation:).
# --------------------------------------------------------------------------------------------


def _check_oracle(v: str | None) -> str | None:
    if v is not None and not APP_PATTERN.fullmatch(v):
        raise ValueError("must be of the form 'module.path:callable'")
    return v


def _check_seeds(v: list[int]) -> list[int]:
    if any(s < 0 for s in v):
        raise ValueError("seeds must be >= 0 (OpenEnv's reset rejects negative seeds)")
    return v


class EnvkitSection(StrictModel):
    """``envkit:`` in ``openenv.yaml``: facts only envkit uses (OpenEnv ignores the key).

    Attributes:
        oracle: ``module:callable`` mapping an observation dict to an action dict that
            reaches ``hi`` of the reward range.
        max_steps: an episode must end (``done=true``) within this many steps (>= 1).
        seeds: reset seeds (>= 0) for the determinism checks.
        step_timeout_s: p95 step latency budget, seconds (> 0).
        startup_timeout_s: seconds to wait for ``GET /health`` after start (> 0).
        blind_floor: ``[warning, error]``: the shares of the oracle's return (each in
            (0, 1], warning <= error) above which a question-blind policy's return is a
            warning, an error (EK524).
    """

    oracle: str | None = None
    max_steps: int | None = Field(default=None, ge=1)
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    step_timeout_s: float = Field(default=5.0, gt=0)
    startup_timeout_s: float = Field(default=DEFAULT_STARTUP_TIMEOUT_S, gt=0)
    blind_floor: tuple[float, float] = DEFAULT_BLIND_FLOOR

    @field_validator("blind_floor")
    @classmethod
    def _blind_floor_ok(cls, v: tuple[float, float]) -> tuple[float, float]:
        warn, error = v
        if not (0 < warn <= error <= 1):
            raise ValueError(f"need 0 < warning ({warn}) <= error ({error}) <= 1")
        return v

    @field_validator("oracle")
    @classmethod
    def _oracle_ok(cls, v: str | None) -> str | None:
        return _check_oracle(v)

    @field_validator("seeds")
    @classmethod
    def _seeds_ok(cls, v: list[int]) -> list[int]:
        return _check_seeds(v)


class LegacyValidation(EnvkitSection):
    """envkit's keys directly under ``validation:`` (the layout before OpenEnv 0.10; read with
    a deprecation warning, EK119; ``envkit migrate`` moves them)."""

    reward_range: tuple[float, float] = (0.0, 1.0)
    floor_margin: float = Field(default=0.1, ge=0.0)

    @field_validator("reward_range")
    @classmethod
    def _range_ok(cls, v: tuple[float, float]) -> tuple[float, float]:
        lo, hi = v
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("both bounds must be finite numbers")
        if lo >= hi:
            raise ValueError(f"lo ({lo}) must be smaller than hi ({hi})")
        return v


@dataclass
class EnvSpec:
    """The facts envkit checks an environment against, resolved from one manifest.

    Sources, first found wins: RFC 008's fields under ``validation:`` (reward range and floor
    margin, resources, network), envkit's ``envkit:`` section, the legacy keys under
    ``validation:``, then the defaults below. Mutable on purpose (tests tighten a budget).

    Attributes:
        reward_range: ``(lo, hi)``, finite, ``lo < hi``.
        max_steps: episode step bound, or ``None`` (the runtime stage then uses its default).
        oracle: ``module:callable`` or ``None``.
        seeds: reset seeds for the determinism checks.
        floor_margin: degenerate policies must score below ``hi - floor_margin``.
        oracle_tolerance: the oracle passes when it scores ``>= hi - oracle_tolerance``
            (RFC 008 ``validation.reward.oracle_tolerance``; 0 by default).
        step_timeout_s: p95 step latency budget, seconds.
        startup_timeout_s: seconds to wait for ``GET /health``.
        blind_floor: ``(warning, error)`` shares of the oracle's return (EK524).
        episode_timeout_s: ``validation.resources.episode_timeout_s`` (seconds) or ``None``.
        network_mode: ``public``, ``no-network`` or ``allowlist``.
        memory_mb: ``validation.resources.memory_mb`` (MiB) or ``None``.
        cpu: ``validation.resources.cpu`` (cores) or ``None``.
        probe_path: ``validation.execution.probe_path`` (OpenEnv's runtime probe plan,
            package-relative) when ``execution`` is declared, else ``None``.
    """

    reward_range: tuple[float, float] = (0.0, 1.0)
    max_steps: int | None = None
    oracle: str | None = None
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    floor_margin: float = 0.1
    oracle_tolerance: float = 0.0
    step_timeout_s: float = 5.0
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    blind_floor: tuple[float, float] = DEFAULT_BLIND_FLOOR
    episode_timeout_s: float | None = None
    network_mode: str = "public"
    memory_mb: int | None = None
    cpu: float | None = None
    probe_path: str | None = None


class Manifest(BaseModel):
    """The parts of ``openenv.yaml`` envkit uses.

    Unknown top-level keys are kept (other tools may add their own). ``validation`` is RFC
    008's block (``None`` when absent or when it holds only envkit's legacy keys), ``envkit``
    envkit's own section, ``legacy`` the deprecated envkit keys found under ``validation:``.
    :attr:`spec` resolves them into the one object readers use.
    """

    model_config = ConfigDict(extra="allow")

    spec_version: int = 1
    name: str
    version: str | None = None
    type: str = "space"
    runtime: str = "fastapi"
    app: str = DEFAULT_APP
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    variables: dict[str, str] = Field(default_factory=dict)
    validation: OpenEnvValidation | None = None
    envkit: EnvkitSection | None = None
    legacy: LegacyValidation | None = Field(default=None, exclude=True)
    _spec: EnvSpec = PrivateAttr(default_factory=EnvSpec)

    @field_validator("app")
    @classmethod
    def _app_ok(cls, v: str) -> str:
        if not APP_PATTERN.fullmatch(v):
            raise ValueError("must be of the form 'module.path:attribute', e.g. server.app:app")
        return v

    @model_validator(mode="before")
    @classmethod
    def _split_validation(cls, data: object) -> object:
        """Separate envkit's legacy keys from RFC 008's block (see :func:`split_validation`)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        data.pop("legacy", None)  # not a manifest key: only filled from `validation:`
        block, legacy = split_validation(data.get("validation"))
        data["validation"] = block
        if legacy is not None:
            data["legacy"] = legacy
        if data.get("envkit", ...) is None:
            data["envkit"] = None
        return data

    @model_validator(mode="after")
    def _resolve(self) -> Manifest:
        own = self.envkit or self.legacy or EnvkitSection()
        spec = EnvSpec(
            max_steps=own.max_steps,
            oracle=own.oracle,
            seeds=list(own.seeds),
            step_timeout_s=own.step_timeout_s,
            startup_timeout_s=own.startup_timeout_s,
            blind_floor=tuple(own.blind_floor),  # type: ignore[arg-type]
        )
        if self.legacy is not None:
            spec.reward_range = tuple(self.legacy.reward_range)  # type: ignore[assignment]
            spec.floor_margin = self.legacy.floor_margin
        block = self.validation
        if block is not None:
            spec.reward_range = tuple(block.reward.range)  # type: ignore[assignment]
            spec.floor_margin = block.reward.floor_margin
            spec.oracle_tolerance = block.reward.oracle_tolerance
            spec.episode_timeout_s = block.resources.episode_timeout_s
            spec.memory_mb = block.resources.memory_mb
            spec.cpu = block.resources.cpu
            spec.network_mode = block.network.mode
            if block.execution is not None:
                spec.probe_path = block.execution.probe_path
        self._spec = spec
        return self

    @property
    def spec(self) -> EnvSpec:
        """The resolved facts (:class:`EnvSpec`); the single object every reader uses."""
        return self._spec


def split_validation(raw: object) -> tuple[object, dict[str, Any] | None]:
    """Split a raw ``validation:`` value into (RFC 008 block, envkit legacy keys).

    The block is ``None`` when ``validation:`` is absent, empty or holds only envkit's legacy
    keys; the legacy part is ``None`` when there are none. A non-mapping is returned as the
    block unchanged (the model then reports its type).
    """
    if not isinstance(raw, dict):
        return raw, None
    legacy = {k: v for k, v in raw.items() if k in LEGACY_KEYS}
    rest = {k: v for k, v in raw.items() if k not in LEGACY_KEYS}
    if not rest:
        return None, legacy or None
    return rest, legacy or None


def pydantic_errors_to_locations(
    doc: YamlDocument, exc: ValidationError, rel_to: Path | None = None
) -> list[tuple[str, Location]]:
    """Turn pydantic errors into ``(message, location)`` pairs located in the YAML file.

    The message names the dotted key path, e.g. ``validation.reward_range: lo (1.0) must be
    smaller than hi (0.0)``.
    """
    out: list[tuple[str, Location]] = []
    for err in exc.errors():
        loc = user_loc(err)
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        msg = err.get("msg", "invalid value")
        msg = msg.removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            msg = "unknown key (a typo?)"
        out.append((f"{dotted}: {msg}", doc.locate(loc, rel_to=rel_to)))
    return out


def user_loc(err: ErrorDetails) -> tuple[int | str, ...]:
    """The key path of a pydantic error of :class:`Manifest` as written in ``openenv.yaml``.

    Legacy keys are validated as ``legacy.<key>`` but live under ``validation:``; the
    cross-field errors of RFC 008's models carry the offending key in ``ctx["path"]``.
    """
    loc = tuple(err.get("loc", ()))
    if loc[:1] == ("legacy",):
        loc = ("validation",) + loc[1:]
    path = (err.get("ctx") or {}).get("path")
    if isinstance(path, str) and path:
        loc = loc + tuple(int(p) if p.isdigit() else p for p in path.split("."))
    return loc


def to_plain(data: object) -> object:
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
    if not path.is_file() and not path.exists():  # another kind of file: load_yaml names it
        raise SpecError(
            f"No {MANIFEST_NAME} in {root}: this is not an OpenEnv environment directory.",
            hint="Run the command inside an environment (or pass its path), or create one with "
            "`envkit init my-env`.",
        )
    return manifest_of(load_yaml(path))


def manifest_of(doc: YamlDocument) -> Manifest:
    """Validate a parsed ``openenv.yaml`` (:func:`load_yaml`, :func:`parse_yaml`).

    Raises:
        SpecError: it is not a mapping or fails the schema (located, as
            :func:`read_manifest`).
    """
    path = doc.path
    if not isinstance(doc.data, dict):
        raise SpecError(
            f"{path}: the manifest must be a YAML mapping of keys to values.",
            hint="See `envkit validate --explain EK101`.",
        )
    try:
        return Manifest.model_validate(to_plain(doc.data))
    except ValidationError as exc:
        first_msg, first_loc = pydantic_errors_to_locations(doc, exc)[0]
        raise SpecError(
            f"{first_loc}: {first_msg}.",
            hint=f"Fix {MANIFEST_NAME}; `envkit validate --static` lists every problem.",
        ) from None
