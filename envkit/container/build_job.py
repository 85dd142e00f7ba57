"""What either build driver (:mod:`envkit.container.build_sdk`,
:mod:`envkit.container.build_cli`) is given, and the errors both raise."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from envkit.container.build_result import BuildEvent, BuildStep
from envkit.container.dockerfile import Instruction, base_images
from envkit.errors import BuildError, BuildTimeoutError, UserError

#: Lines of a failing step's output kept for the error message.
FAIL_TAIL_LINES = 30


@dataclass(frozen=True)
class BuildJob:
    """What one build needs, passed to either builder.

    Attributes:
        root: environment directory (the build context; its ``Dockerfile`` is built).
        tag: image reference to apply.
        build_args: ``--build-arg`` values.
        labels: every label to set.
        no_cache: build every step afresh.
        pull: always try to pull a newer base image.
        platform: ``os/arch[/variant]`` or ``None``.
        instructions: the parsed Dockerfile (to map steps to lines), possibly empty.
        emit: progress callback.
        deadline: a ``time.monotonic()`` value after which the build is stopped, or ``None``.
    """

    root: Path
    tag: str
    build_args: Mapping[str, str]
    labels: Mapping[str, str]
    no_cache: bool
    pull: bool
    platform: str | None
    instructions: tuple[Instruction, ...]
    emit: Callable[[BuildEvent], None]
    deadline: float | None = None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (0 when passed), ``None`` without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())


def timeout_error(job: BuildJob, step: BuildStep | None) -> BuildTimeoutError:
    """The error of a build stopped at its deadline, naming the running ``step`` if known."""
    where = f" during step {step.number} `{step.instruction}`" if step is not None else ""
    return BuildTimeoutError(
        f"The build of {job.tag} exceeded the time limit{where} and was stopped.",
        hint="Give it more time with a larger --timeout, or make the slow step faster "
        "(a cached base image, fewer dependencies).",
    )


def base_image_error(
    instructions: list[Instruction], cause: str, image: str | None = None
) -> UserError:
    """The error of a base ``image`` (default: the first ``FROM``) that is neither local nor
    pullable; ``cause`` is the engine's or CLI's message."""
    bases = base_images(instructions)
    if image is None and bases:
        image = bases[0][0]
    line = next((ln for img, ln in bases if img == image), None)
    where = f" (Dockerfile line {line})" if line else ""
    return UserError(
        f"Base image `{image or '?'}`{where} is not on this machine and cannot be pulled: "
        f"{cause.strip().rstrip('.')}.",
        hint=f"Pull it where a registry is reachable (`docker pull {image or '<image>'}`), "
        "load or build it locally (`docker image ls` shows what exists; envkit's "
        ".ci/docker-setup.sh builds python:3.11-slim offline), or change FROM.",
    )


def step_error(step: BuildStep | None, total: int, cause: str, output: deque[str]) -> BuildError:
    """The error of a failed ``step`` (of ``total``; ``None``: before any step), with the
    step's last ``output`` lines as ``details``."""
    if step is None:
        return BuildError(
            f"The build failed: {cause.strip()}",
            details="\n".join(output) or None,
            hint="Fix the Dockerfile and run `envkit build` again.",
        )
    where = f" (Dockerfile line {step.line})" if step.line else ""
    of = f"/{total}" if total else ""
    return BuildError(
        f"Step {step.number}{of} `{step.instruction}`{where} failed: {cause.strip().rstrip('.')}.",
        details="\n".join(output) or None,
        hint="Fix that step and run `envkit build` again (--no-cache forces a clean rebuild).",
    )


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (colours, cursor moves, OSC links).

    Build steps' own programs (pip, npm, apt) colour their output; a failure's log tail in
    an error message is plain text. Decoded by rich's ANSI decoder (envkit's console library)
    rather than a regex of our own: it knows the CSI, OSC and private sequences.
    """
    if "\x1b" not in text:
        return text
    return Text.from_ansi(text).plain
