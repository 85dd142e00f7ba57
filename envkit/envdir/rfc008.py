"""RFC 008's ``validation:`` block of ``openenv.yaml``, owned by OpenEnv 0.10
(``openenv.validation.manifest`` of openenv 0.10.0, huggingface/OpenEnv#1041), mirrored field
by field so ``envkit validate`` reports, located, what ``openenv validate`` would reject; and
the bounds its severity policy (``severity-v2``) puts on declared values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from envkit.envdir.constants import (
    LEGACY_KEYS,
    PROBE_PLAN_PATH,
)

# --------------------------------------------------------------------------------------------
# RFC 008's `validation:` block, owned by OpenEnv 0.10 (openenv.validation.manifest). Mirrored
# field by field so `envkit validate` reports what `openenv validate` would reject, located.
# --------------------------------------------------------------------------------------------

RFC008_KEYS = (
    "reward",
    "judge",
    "resources",
    "task_distribution",
    "network",
    "capabilities",
    "types",
    "execution",
)
"""Keys of the ``validation:`` block that OpenEnv 0.10 reads (every other key there it ignores)."""


@dataclass(frozen=True)
class PolicyBounds:
    """Ceilings OpenEnv's severity policy puts on declared values (``severity-v2.json``
    ``bounds`` in openenv 0.10.0; its ``static.manifest`` grader FAILs past them)."""

    max_oracle_tolerance: float = 0.1
    min_floor_margin: float = 0.1
    max_variance_tolerance: float = 0.2
    max_episode_timeout_s: float = 3600.0


POLICY_BOUNDS = PolicyBounds()


class StrictModel(BaseModel):
    """A model whose unknown keys are errors (OpenEnv's ``extra="forbid"``): typos must not be
    ignored."""

    model_config = ConfigDict(extra="forbid")


class RewardDeclaration(StrictModel):
    """``validation.reward``: the declared reward contract (RFC 008).

    Attributes:
        range: ``[lo, hi]``, strictly increasing (default ``[0, 1]``).
        oracle_tolerance: the oracle passes when it scores ``>= hi - oracle_tolerance``
            (>= 0; OpenEnv's policy allows at most 0.1).
        floor_margin: degenerate policies must score ``<= hi - floor_margin`` (>= 0,
            required; OpenEnv's policy wants at least 0.1).
        variance_tolerance: required iff ``capabilities.llm_judged`` (policy max 0.2).
    """

    range: tuple[float, float] = (0.0, 1.0)
    oracle_tolerance: float = Field(default=0.0, ge=0.0)
    floor_margin: float = Field(ge=0.0)
    variance_tolerance: float | None = Field(default=None, ge=0.0)

    @model_validator(mode="after")
    def _range_increasing(self) -> RewardDeclaration:
        lo, hi = self.range
        if not lo < hi:
            raise ValueError(f"reward range must be strictly increasing, got {list(self.range)}")
        return self


class JudgePin(StrictModel):
    """``validation.judge``: the pinned LLM judge (required iff ``capabilities.llm_judged``)."""

    model: str
    version: str
    params: dict[str, Any] = Field(default_factory=dict)


class OracleDeclaration(StrictModel):
    """``validation.capabilities.oracle``: how the package demonstrates the maximum reward
    (OpenEnv's form; envkit's own oracle is ``envkit.oracle``, a ``module:callable``)."""

    form: Literal["injected_state", "script"]
    location: str


class VerifierBinding(StrictModel):
    """``validation.capabilities.verifier``: ``reward_channel`` (the served reward) or
    ``script`` with an ``entry`` path (``entry`` only with ``script``)."""

    kind: Literal["reward_channel", "script"]
    entry: str | None = None

    @model_validator(mode="after")
    def _entry_matches_kind(self) -> VerifierBinding:
        if self.kind == "script" and self.entry is None:
            raise ValueError("verifier.entry is required when verifier.kind is 'script'")
        if self.kind == "reward_channel" and self.entry is not None:
            raise ValueError("verifier.entry is only valid when verifier.kind is 'script'")
        return self


class ResourceDeclaration(StrictModel):
    """``validation.resources``: the declared budget. ``cpu`` in cores, ``memory_mb`` and
    ``disk_mb`` in MiB, ``episode_timeout_s`` in seconds (policy max 3600), all required."""

    cpu: float = Field(gt=0.0)
    memory_mb: int = Field(gt=0)
    disk_mb: int = Field(gt=0)
    episode_timeout_s: float = Field(gt=0.0)
    gpus: int = Field(default=0, ge=0)
    gpu_types: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _gpu_types_require_gpus(self) -> ResourceDeclaration:
        if self.gpu_types and self.gpus == 0:
            raise ValueError("gpu_types is declared but gpus is 0")
        return self


class NetworkPolicy(StrictModel):
    """``validation.network``: ``public`` (default), ``no-network`` or ``allowlist``;
    ``allowed_hosts`` is required with ``allowlist`` and forbidden otherwise."""

    mode: Literal["public", "no-network", "allowlist"] = "public"
    allowed_hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hosts_require_allowlist(self) -> NetworkPolicy:
        if self.mode != "allowlist" and self.allowed_hosts:
            raise PydanticCustomError(
                "allowlist",
                "allowed_hosts is only valid when mode is 'allowlist'",
                {"path": "allowed_hosts"},
            )
        if self.mode == "allowlist" and not self.allowed_hosts:
            raise PydanticCustomError(
                "allowlist", "mode 'allowlist' requires at least one allowed host", {"path": "mode"}
            )
        return self


class TaskDistributionPin(StrictModel):
    """``validation.task_distribution``: pins for generated or sourced tasks."""

    generator_seed: int | None = None
    dataset_version: str | None = None
    generator_model: str | None = None


class CapabilitiesSpec(StrictModel):
    """``validation.capabilities``: what the environment declares it can do (selects
    OpenEnv's contract graders). ``verifier`` is required."""

    oracle: OracleDeclaration | None = None
    verifier: VerifierBinding
    set_state: bool = False
    llm_judged: bool = False
    rubric_tree: bool = False
    task_api: bool = False
    canaries: str | None = None
    declared_tools: list[str] = Field(default_factory=list)
    declared_task_count: dict[str, int] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _injected_state_requires_set_state(self) -> CapabilitiesSpec:
        if self.oracle is not None and self.oracle.form == "injected_state" and not self.set_state:
            raise ValueError(
                "oracle.form 'injected_state' requires the set_state capability; "
                "declare set_state: true or use oracle.form 'script'"
            )
        return self


class TypeSpec(StrictModel):
    """``validation.types``: at least one non-empty tag (selects OpenEnv's domain graders)."""

    tags: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)


def _package_relative(value: str) -> str:
    path = PurePosixPath(value)
    if (
        not value
        or "\\" in value
        or ":" in value
        or "\x00" in value
        or path.is_absolute()
        or ".." in path.parts
    ):
        raise ValueError("must be a portable package-relative path without '..'")
    return value


class ExecutionDeclaration(StrictModel):
    """``validation.execution`` (manifest schema 2): how OpenEnv's runtime level builds and
    probes the image. Paths are package-relative without ``..``."""

    kind: Literal["openenv_ws"] = "openenv_ws"
    probe_path: str = PROBE_PLAN_PATH
    dockerfile: str = "Dockerfile"
    context: str = "."
    agent_boundary: Literal["api"] = "api"
    requires_credentials: bool = Field(default=False, strict=True)

    @field_validator("probe_path", "dockerfile", "context")
    @classmethod
    def _relative(cls, value: str) -> str:
        return _package_relative(value)

    @field_validator("probe_path", "dockerfile")
    @classmethod
    def _file(cls, value: str) -> str:
        if PurePosixPath(value) == PurePosixPath("."):
            raise ValueError("must name a file")
        return value


class OpenEnvValidation(BaseModel):
    """RFC 008's ``validation:`` block as OpenEnv 0.10 reads it.

    Sections are strict (``extra="forbid"``); the block's own top level ignores keys OpenEnv
    does not know (as OpenEnv does; envkit warns about them, EK115). Schema 2 iff
    ``execution`` is present; schema 2 rejects non-finite numbers anywhere. ``judge`` and
    ``reward.variance_tolerance`` are required iff ``capabilities.llm_judged``.
    """

    model_config = ConfigDict(extra="allow")

    reward: RewardDeclaration
    judge: JudgePin | None = None
    resources: ResourceDeclaration
    task_distribution: TaskDistributionPin | None = None
    network: NetworkPolicy = Field(default_factory=NetworkPolicy)
    capabilities: CapabilitiesSpec
    types: TypeSpec
    execution: ExecutionDeclaration | None = None

    @property
    def schema_version(self) -> str:
        """``"2"`` when ``execution`` is declared, else ``"1"`` (OpenEnv's parser)."""
        return "2" if self.execution is not None else "1"

    @model_validator(mode="after")
    def _judge_iff_llm_judged(self) -> OpenEnvValidation:
        if self.capabilities.llm_judged:
            if self.judge is None:
                raise PydanticCustomError(
                    "judge_pin",
                    "a judge pin is required when capabilities.llm_judged is true",
                    {"path": "capabilities.llm_judged"},
                )
            if self.reward.variance_tolerance is None:
                raise PydanticCustomError(
                    "judge_pin",
                    "reward.variance_tolerance is required when capabilities.llm_judged is true",
                    {"path": "capabilities.llm_judged"},
                )
        elif self.judge is not None:
            raise PydanticCustomError(
                "judge_pin",
                "a judge pin is declared but capabilities.llm_judged is false",
                {"path": "judge"},
            )
        return self

    @model_validator(mode="after")
    def _finite(self) -> OpenEnvValidation:
        lo, hi = self.reward.range
        if not (math.isfinite(lo) and math.isfinite(hi)):  # envkit needs a finite range
            raise PydanticCustomError(
                "non_finite", "reward.range must be finite numbers", {"path": "reward.range"}
            )
        if self.execution is None:
            return self
        pending: list[tuple[str, Any]] = [("", self.model_dump(include=set(RFC008_KEYS)))]
        while pending:
            path, value = pending.pop()
            if isinstance(value, float) and not math.isfinite(value):
                raise PydanticCustomError(
                    "non_finite",
                    "schema 2 numeric declarations must be finite; {path} is {value}",
                    {"path": path, "value": value},
                )
            if isinstance(value, dict):
                pending.extend((f"{path}.{k}".lstrip("."), v) for k, v in value.items())
            elif isinstance(value, (list, tuple)):
                pending.extend((f"{path}.{i}", v) for i, v in enumerate(value))
        return self

    def unknown_keys(self) -> list[str]:
        """Keys at the block's top level that OpenEnv ignores (legacy envkit keys excluded)."""
        return [k for k in (self.model_extra or {}) if k not in LEGACY_KEYS]


def policy_violations(
    block: OpenEnvValidation, bounds: PolicyBounds = POLICY_BOUNDS
) -> list[tuple[tuple[str, ...], str]]:
    """Declared values outside OpenEnv's severity-policy bounds (its ``static.manifest``
    grader FAILs them).

    Returns:
        ``(key path under validation, message)`` pairs, e.g.
        ``(("reward", "floor_margin"), "declared floor_margin 0.05 is below the policy
        minimum 0.1")``; empty when within bounds.
    """
    out: list[tuple[tuple[str, ...], str]] = []
    reward = block.reward
    if reward.oracle_tolerance > bounds.max_oracle_tolerance:
        out.append(
            (
                ("reward", "oracle_tolerance"),
                (
                    f"declared oracle_tolerance {reward.oracle_tolerance:g} exceeds the policy "
                    f"maximum {bounds.max_oracle_tolerance:g}"
                ),
            )
        )
    if reward.floor_margin < bounds.min_floor_margin:
        out.append(
            (
                ("reward", "floor_margin"),
                (
                    f"declared floor_margin {reward.floor_margin:g} is below the policy minimum "
                    f"{bounds.min_floor_margin:g}"
                ),
            )
        )
    if (
        reward.variance_tolerance is not None
        and reward.variance_tolerance > bounds.max_variance_tolerance
    ):
        out.append(
            (
                ("reward", "variance_tolerance"),
                (
                    f"declared variance_tolerance {reward.variance_tolerance:g} exceeds the "
                    f"policy maximum {bounds.max_variance_tolerance:g}"
                ),
            )
        )
    timeout = block.resources.episode_timeout_s
    if timeout > bounds.max_episode_timeout_s:
        out.append(
            (
                ("resources", "episode_timeout_s"),
                (
                    f"declared episode_timeout_s {timeout:g} exceeds the policy maximum "
                    f"{bounds.max_episode_timeout_s:g}"
                ),
            )
        )
    return out
