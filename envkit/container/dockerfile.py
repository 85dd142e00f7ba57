"""Reading the environment's root Dockerfile before a build: read, preflight, BuildKit needs.

Parsing is :mod:`envkit.envdir.dockerfile` (the one parser, shared with launch and the EK3xx
rules), re-exported here. The preflight runs ``envkit.validation``'s static Dockerfile rules
(EK3xx); :func:`_fallback_checks` is a few structural checks of envkit's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envkit.envdir.dockerfile import (
    BUILDKIT_FLAGS,
    DOCKERFILE,
    HEREDOC,
    INSTRUCTIONS,
    BuildKitFeature,
    ExposedPort,
    FinalStage,
    Instruction,
    ParsedDockerfile,
    Stage,
    base_images,
    command_argv,
    parse,
    port_number,
    shown,
)
from envkit.errors import SpecError
from envkit.validation import validate

__all__ = [
    "BUILDKIT_FLAGS",
    "DOCKERFILE",
    "HEREDOC",
    "INSTRUCTIONS",
    "BuildKitFeature",
    "ExposedPort",
    "FinalStage",
    "Instruction",
    "ParsedDockerfile",
    "Problem",
    "Stage",
    "base_images",
    "buildkit_features",
    "command_argv",
    "instruction_at_step",
    "parse",
    "parse_dockerfile",
    "port_number",
    "preflight",
    "read_dockerfile",
    "shown",
]


def read_dockerfile(root: Path) -> tuple[Path, str]:
    """The root Dockerfile of an environment and its text.

    Raises:
        SpecError: there is no ``root/Dockerfile`` (a Docker Space builds the root one) or it
            cannot be read as UTF-8.
    """
    path = root / DOCKERFILE
    if not path.is_file():
        raise SpecError(
            f"No {DOCKERFILE} in {root}: a Hugging Face Docker Space builds the Dockerfile at "
            "the repository root.",
            hint="Add one (`envkit init` generates a working one) or move yours to the root.",
        )
    try:
        return path, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"Cannot read {path}: {exc}.", hint="Make it a UTF-8 text file.") from None


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions of a Dockerfile (comments and heredoc bodies dropped), with 1-based
    line numbers.

    Raises:
        ValueError: dockerfile-parse could not tokenise it.
    """
    parsed = parse(text)
    if parsed.error is not None:
        raise ValueError(parsed.error)
    return list(parsed.instructions)


def buildkit_features(
    text: str, instructions: list[Instruction] | None = None
) -> list[BuildKitFeature]:
    """Lines the legacy builder cannot build (docker-py fails with "the --mount
    option requires BuildKit"): a ``# syntax=`` parser directive, BuildKit-only leading flags
    (``RUN --mount``/``--network``/``--security``, ``COPY``/``ADD --link``/``--chmod``/...),
    and heredocs (``RUN <<EOF``). ``instructions`` is accepted for compatibility; the
    features come from :func:`parse` of ``text``."""
    del instructions  # the cached parse of `text` holds the same instructions
    return list(parse(text).buildkit)


@dataclass(frozen=True)
class Problem:
    """A preflight problem that stops the build (unless ``--no-check``).

    Attributes:
        code: the validate rule code (``EK3xx``) or ``"parse"`` for envkit's own fallback.
        message: what is wrong (expected, actual, likely cause).
        line: 1-based line in the Dockerfile, when known.
    """

    code: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{DOCKERFILE}:{self.line}: " if self.line else f"{DOCKERFILE}: "
        code = "" if self.code == "parse" else f"{self.code} "
        return f"{where}{code}{self.message}"


def preflight(root: Path, text: str) -> tuple[list[Problem], list[Problem], str]:
    """Dockerfile problems that should stop a build, warnings, and which checker found them.

     Runs ``envkit.validation.validate(root, static=True, select=["EK3"])`` and keeps its
     error-severity findings (warning-severity ones are returned apart). An exception from a
     rule propagates: the build stops with an internal error instead of skipping its checks
    .

     Returns:
         ``(errors, warnings, checker)`` where ``checker`` is ``"the EK3xx rules"``.
    """

    # Fails closed: a bug in a rule raises (internal error, exit 2); the build never
    # falls back to weaker checks without saying so.
    report = validate(root, static=True, select=["EK3"])
    problems: list[Problem] = []
    warnings: list[Problem] = []
    for f in report.findings:
        loc = f.location
        item = Problem(code=str(f.code), message=str(f.message), line=getattr(loc, "line", None))
        if f.severity.value == "error":
            problems.append(item)
        elif f.severity.value == "warning":
            warnings.append(item)
    return problems, warnings, "the EK3xx rules"


def _fallback_checks(text: str) -> list[Problem]:
    try:
        instructions = parse_dockerfile(text)
    except Exception as exc:  # noqa: BLE001 - any parser failure is the finding
        return [Problem("parse", f"the Dockerfile does not parse: {exc}.")]
    problems: list[Problem] = []
    if not instructions:
        return [
            Problem(
                "parse", "the Dockerfile has no instructions; expected at least `FROM <image>`."
            )
        ]
    for ins in instructions:
        if ins.name not in INSTRUCTIONS:
            problems.append(
                Problem(
                    "parse",
                    f"unknown instruction `{ins.name}`; expected one "
                    "of FROM, RUN, COPY, ... (a typo?).",
                    ins.line,
                )
            )
    first = next((i for i in instructions if i.name != "ARG"), None)
    if first is not None and first.name != "FROM":
        problems.append(
            Problem(
                "parse",
                f"expected `FROM` as the first instruction (after `ARG`), got `{first.name}`.",
                first.line,
            )
        )
    return problems


def instruction_at_step(
    instructions: list[Instruction], step: int, title: str
) -> Instruction | None:
    """The instruction the legacy builder's ``Step N/M : TITLE`` refers to (1-based ``step``),
    when the numbering and the instruction name agree."""
    name = title.split(" ", 1)[0].upper()
    if 0 < step <= len(instructions) and instructions[step - 1].name == name:
        return instructions[step - 1]
    matches = [i for i in instructions if i.short(10_000) == " ".join(title.split())]
    return matches[0] if len(matches) == 1 else None
