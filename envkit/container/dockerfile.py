"""Reading the environment's root Dockerfile before a build: parse, preflight, BuildKit needs.

Parsing uses ``dockerfile-parse`` (a maintained parser that keeps line numbers and handles
continuations) instead of our own. The preflight prefers ``envkit.validation``'s static
Dockerfile rules (EK3xx) and falls back to a few structural checks of its own while those
rules are not importable.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import SpecError

DOCKERFILE = "Dockerfile"

#: Every instruction the Dockerfile reference defines (docs.docker.com/reference/dockerfile).
INSTRUCTIONS = frozenset(
    {
        "ADD",
        "ARG",
        "CMD",
        "COPY",
        "ENTRYPOINT",
        "ENV",
        "EXPOSE",
        "FROM",
        "HEALTHCHECK",
        "LABEL",
        "MAINTAINER",
        "ONBUILD",
        "RUN",
        "SHELL",
        "STOPSIGNAL",
        "USER",
        "VOLUME",
        "WORKDIR",
    }
)

# Flags the legacy builder (docker-py, Engine 20.10) rejects with "... requires BuildKit".
_BUILDKIT_FLAGS = {
    "RUN": ("--mount", "--network", "--security"),
    "COPY": ("--link", "--chmod", "--parents", "--exclude"),
    "ADD": ("--link", "--chmod", "--checksum", "--keep-git-dir", "--exclude"),
}
_SYNTAX_DIRECTIVE = re.compile(r"^\s*#\s*syntax\s*=", re.IGNORECASE)
_HEREDOC = re.compile(r"<<-?\s*[\"']?[A-Za-z_][A-Za-z0-9_]*[\"']?")


@dataclass(frozen=True)
class Instruction:
    """One instruction of a Dockerfile.

    Attributes:
        name: upper-case instruction (``RUN``).
        value: its arguments with continuations joined.
        line: 1-based first line in the file.
        content: the raw text (may span lines).
    """

    name: str
    value: str
    line: int
    content: str

    def short(self, width: int = 80) -> str:
        """``RUN pip install ...`` on one line, at most ``width`` characters."""
        text = " ".join(f"{self.name} {self.value}".split())
        return text if len(text) <= width else text[: width - 1] + "…"


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


@dataclass(frozen=True)
class BuildKitFeature:
    """A line that only BuildKit can build.

    Attributes:
        line: 1-based line number.
        what: the feature (``RUN --mount``, ``# syntax=`` directive, heredoc).
        text: the line's text, stripped.
    """

    line: int
    what: str
    text: str


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
    """Instructions of a Dockerfile (comments dropped), with 1-based line numbers."""
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")), cache_content=True)
    out: list[Instruction] = []
    for item in parser.structure:
        name = str(item.get("instruction", "")).upper()
        if name == "COMMENT":
            continue
        out.append(
            Instruction(
                name=name,
                value=str(item.get("value", "")),
                line=int(item.get("startline", 0)) + 1,
                content=str(item.get("content", "")),
            )
        )
    return out


def base_images(instructions: list[Instruction]) -> list[tuple[str, int]]:
    """``(image, line)`` of every ``FROM`` that names an image (not a stage, not scratch)."""
    stages: set[str] = set()
    out: list[tuple[str, int]] = []
    for ins in instructions:
        if ins.name != "FROM":
            continue
        words = [w for w in ins.value.split() if not w.startswith("--")]
        if not words:
            continue
        image = words[0]
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
        if image.lower() in stages or image == "scratch":
            continue
        out.append((image, ins.line))
    return out


def buildkit_features(
    text: str, instructions: list[Instruction] | None = None
) -> list[BuildKitFeature]:
    """Lines the legacy builder cannot build (docker-py fails with "the --mount
    option requires BuildKit"): a ``# syntax=`` parser directive, BuildKit-only flags
    (``RUN --mount``/``--network``/``--security``, ``COPY``/``ADD --link``/``--chmod``/...),
    and heredocs (``RUN <<EOF``)."""
    instructions = parse_dockerfile(text) if instructions is None else instructions
    lines = text.splitlines()
    found: list[BuildKitFeature] = []
    # Parser directives are only honoured before the first instruction or ordinary comment.
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if _SYNTAX_DIRECTIVE.match(line):
            found.append(BuildKitFeature(i + 1, "`# syntax=` parser directive", line.strip()))
        if not line.lstrip().startswith("#"):
            break
        if not re.match(r"^\s*#\s*\w+\s*=", line):
            break
    for ins in instructions:
        first_line = lines[ins.line - 1].strip() if 0 < ins.line <= len(lines) else ins.content
        words = ins.value.split()
        for flag in _BUILDKIT_FLAGS.get(ins.name, ()):
            if any(w == flag or w.startswith(flag + "=") for w in words):
                found.append(BuildKitFeature(ins.line, f"`{ins.name} {flag}`", first_line))
        if ins.name in ("RUN", "COPY", "ADD") and _HEREDOC.search(first_line):
            found.append(BuildKitFeature(ins.line, f"a heredoc in `{ins.name}`", first_line))
    return found


def preflight(root: Path, text: str) -> tuple[list[Problem], list[Problem], str]:
    """Dockerfile problems that should stop a build, warnings, and which checker found them.

     Runs ``envkit.validation.validate(root, static=True, select=["EK3"])`` and keeps its
     error-severity findings (warning-severity ones are returned apart). An exception from a
     rule propagates: the build stops with an internal error instead of skipping its checks
    .

     Returns:
         ``(errors, warnings, checker)`` where ``checker`` is ``"the EK3xx rules"``.
    """
    from envkit.validation import validate

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
