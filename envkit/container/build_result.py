"""What a build reports: :class:`BuildEvent` (live progress), :class:`BuildStep` and
:class:`BuildResult` (what :func:`envkit.container.build.build_image` returns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BuildEvent:
    """Progress of a build, for a live display. The library never prints; the CLI renders.

    Attributes:
        kind: ``"step"`` (a new step starts), ``"cached"`` (the current step came from the
            cache), ``"output"`` (a line of the current step's output), ``"warning"``.
        text: the instruction (``step``), output line (``output``) or warning message.
        step: 1-based number of the current step (0 before the first).
        total: number of steps (0 when not known yet).
    """

    kind: str
    text: str
    step: int = 0
    total: int = 0


@dataclass
class BuildStep:
    """One step of a finished build.

    Attributes:
        number: 1-based step number as the builder counts it.
        instruction: the instruction, one line (``RUN pip install ...``).
        cached: the step's layer came from the build cache ("Using cache" / ``CACHED``).
        line: 1-based Dockerfile line, when known.
    """

    number: int
    instruction: str
    cached: bool = False
    line: int | None = None


@dataclass
class BuildResult:
    """What ``build_image`` produced.

    Attributes:
        image_id: ``sha256:...`` of the image.
        tags: the tags applied (``["echo-env:0.1.0"]``).
        size_bytes: image size in bytes (as ``docker image ls`` counts it).
        seconds: wall time of the build, seconds.
        steps: every step with its cache status.
        builder: ``"docker-py"`` (legacy builder through the SDK) or ``"docker-cli-buildkit"``.
        labels: the labels envkit set (OCI + ``envkit.*`` + the caller's).
        context_bytes: size of the build context after ``.dockerignore``, bytes.
        warnings: messages for the user (large context, ...).
        preflight: which checker ran the Dockerfile preflight (``None`` with ``check=False``).
    """

    image_id: str
    tags: list[str]
    size_bytes: int
    seconds: float
    steps: list[BuildStep] = field(default_factory=list)
    builder: str = "docker-py"
    labels: dict[str, str] = field(default_factory=dict)
    context_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    preflight: str | None = None

    @property
    def size_mb(self) -> float:
        """Image size in MB (10^6 bytes, as the docker CLI prints it)."""
        return self.size_bytes / 1e6

    @property
    def cache_hits(self) -> int:
        """Number of steps whose layer came from the build cache."""
        return sum(1 for s in self.steps if s.cached)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``envkit build --format json``)."""
        return {
            "image_id": self.image_id,
            "tags": list(self.tags),
            "size_bytes": self.size_bytes,
            "size_mb": round(self.size_mb, 1),
            "seconds": round(self.seconds, 2),
            "cache_hits": self.cache_hits,
            "steps_total": len(self.steps),
            "steps": [
                {
                    "number": s.number,
                    "instruction": s.instruction,
                    "cached": s.cached,
                    "line": s.line,
                }
                for s in self.steps
            ],
            "builder": self.builder,
            "labels": dict(self.labels),
            "context_bytes": self.context_bytes,
            "warnings": list(self.warnings),
            "preflight": self.preflight,
        }
