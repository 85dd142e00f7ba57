"""The one Dockerfile parser, shared by ``envkit build``, launch and the EK3xx rules.

:func:`parse` turns a Dockerfile's text into a :class:`ParsedDockerfile`: instructions with
1-based line numbers (comments and heredoc bodies dropped), stages, the final stage's
``CMD``/``ENTRYPOINT``/``WORKDIR``/``EXPOSE``/``USER``, and the BuildKit-only syntax it uses.
Tokenising uses ``dockerfile-parse`` (a maintained parser that keeps line numbers, joins
continuations and substitutes ``ARG`` defaults in ``FROM``) instead of our own. Results are
cached by text, so every caller in one process shares one parse of each Dockerfile.

Malformed input is bounded here, not in the callers: numbers (``EXPOSE`` ports, ``--port``
arguments) are checked by their text (digits, at most 5 characters, 1-65535) before
``int()``, so a 4 000-digit port is a located finding instead of Python's int-string limit.

It sits below ``envkit.container`` and ``envkit.validation`` (both import it; it imports
neither). :mod:`envkit.container.dockerfile` re-exports it with the build's own helpers.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from dockerfile_parse import DockerfileParser

from envkit.envdir.constants import DOCKERFILE_NAME

DOCKERFILE = DOCKERFILE_NAME

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

#: Leading flags the legacy builder (docker-py, Engine 20.10) rejects with "... requires
#: BuildKit" (docs.docker.com/reference/dockerfile, per instruction).
BUILDKIT_FLAGS: dict[str, tuple[str, ...]] = {
    "RUN": ("--mount", "--network", "--security"),
    "COPY": ("--link", "--chmod", "--exclude", "--parents"),
    "ADD": ("--link", "--chmod", "--exclude", "--checksum", "--keep-git-dir"),
}
#: ``<<EOF``, ``<<-EOF``, ``<<"EOF"``: a heredoc (BuildKit only); group 1 is the terminator.
HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_SYNTAX_DIRECTIVE = re.compile(r"^\s*#\s*syntax\s*=", re.IGNORECASE)
_DIRECTIVE = re.compile(r"^\s*#\s*\w+\s*=")
#: A TCP/UDP port as text: 1-5 digits (the range is checked after ``int()``).
_PORT_TEXT = re.compile(r"^[0-9]{1,5}$")
_MAX_TOKEN_SHOWN = 20


def port_number(text: str) -> int | None:
    """``text`` as a port (1-65535), or ``None`` when it is not one.

    The text is checked before ``int()`` (digits only, at most 5 characters), so a huge
    number never reaches Python's int-string limit.
    """
    if not _PORT_TEXT.match(text):
        return None
    value = int(text)
    return value if 1 <= value <= 65535 else None


def shown(text: str) -> str:
    """``text`` shortened for a message: at most 20 characters, then ``… (N characters)``."""
    if len(text) <= _MAX_TOKEN_SHOWN:
        return text
    return f"{text[:_MAX_TOKEN_SHOWN]}… ({len(text)} characters)"


@dataclass(frozen=True)
class Instruction:
    """One instruction of a Dockerfile.

    Attributes:
        name: upper-case instruction (``RUN``; an unknown word is kept as written, upper-cased).
        value: its arguments with continuations joined.
        line: 1-based first line in the file.
        content: the raw text (may span lines).
        heredoc: the terminator of a heredoc the instruction opens (``EOF``), else ``None``.
    """

    name: str
    value: str
    line: int
    content: str
    heredoc: str | None = None

    def short(self, width: int = 80) -> str:
        """``RUN pip install ...`` on one line, at most ``width`` characters."""
        text = " ".join(f"{self.name} {self.value}".split())
        return text if len(text) <= width else text[: width - 1] + "…"

    @property
    def flags(self) -> list[str]:
        """Leading ``--flag`` names (``--mount``), values dropped."""
        out = []
        for tok in self.value.split():
            if not tok.startswith("--"):
                break
            out.append(tok.split("=", 1)[0])
        return out


@dataclass(frozen=True)
class Stage:
    """One ``FROM`` and the instructions up to the next one.

    Attributes:
        index: 0-based stage number.
        from_: the ``FROM`` instruction.
        image: the base as written (flags dropped), e.g. ``python:${V}-slim``.
        resolved: the base with ``ARG`` defaults substituted (dockerfile-parse's
            ``parent_images``), else ``image``.
        name: the ``AS name`` alias, lower-cased, or ``None``.
        instructions: the stage's instructions after its ``FROM``.
    """

    index: int
    from_: Instruction
    image: str
    resolved: str
    name: str | None
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True)
class ExposedPort:
    """One token of an ``EXPOSE`` instruction.

    Attributes:
        text: the number as written (``8000`` of ``8000/tcp``), never empty.
        port: the port (1-65535), ``None`` when ``text`` is all digits but not a port.
        instruction: the ``EXPOSE`` it came from.
    """

    text: str
    port: int | None
    instruction: Instruction


@dataclass(frozen=True)
class FinalStage:
    """What the final stage runs (``CMD``/``ENTRYPOINT`` reset at each ``FROM``).

    Attributes:
        argv: ``ENTRYPOINT`` + ``CMD`` as one argv (shell form becomes ``sh -c VALUE``);
            empty when neither is set.
        command: the instruction that supplied the command last, or ``None``.
        workdir: the last ``WORKDIR`` (relative ones joined to the previous), or ``None``.
        users: the stage's ``USER`` instructions in order.
        expose: the numeric tokens of every ``EXPOSE`` in the file (all stages: Docker
            records only the final stage's, but EK307 has always read every line).
    """

    argv: tuple[str, ...] = ()
    command: Instruction | None = None
    workdir: str | None = None
    users: tuple[Instruction, ...] = ()
    expose: tuple[ExposedPort, ...] = ()


@dataclass(frozen=True)
class BuildKitFeature:
    """A line that only BuildKit can build.

    Attributes:
        line: 1-based line number.
        what: the feature (``RUN --mount``, ``# syntax=`` directive, heredoc).
        text: the line's text, stripped.
        flag: the BuildKit-only flag (``--mount``) for a flag feature, else ``None``.
        instruction: the instruction it is in (``None`` for a ``# syntax=`` directive).
    """

    line: int
    what: str
    text: str
    flag: str | None = None
    instruction: Instruction | None = None


@dataclass(frozen=True)
class ParsedDockerfile:
    """A parsed Dockerfile (see :func:`parse`).

    Attributes:
        text: the source text.
        instructions: every instruction (comments and heredoc bodies dropped), in order.
        comments: the comment lines as instructions named ``COMMENT``.
        stages: the stages, in order (empty without ``FROM``).
        final: the final stage's command, workdir, users and the file's exposed ports.
        buildkit: the BuildKit-only syntax, in the order of the EK306 rule.
        syntax_line: 1-based line of a ``# syntax=`` parser directive, or ``None``.
        error: why dockerfile-parse failed (then everything else is empty), or ``None``.
    """

    text: str
    instructions: tuple[Instruction, ...] = ()
    comments: tuple[Instruction, ...] = ()
    stages: tuple[Stage, ...] = ()
    final: FinalStage = field(default_factory=FinalStage)
    buildkit: tuple[BuildKitFeature, ...] = ()
    syntax_line: int | None = None
    error: str | None = None

    @property
    def first_non_arg(self) -> Instruction | None:
        """The first instruction that is not ``ARG`` (must be ``FROM``)."""
        return next((i for i in self.instructions if i.name != "ARG"), None)

    @property
    def unknown(self) -> list[Instruction]:
        """Instructions Docker does not know (``FORM``), in order."""
        return [i for i in self.instructions if i.name not in INSTRUCTIONS]

    def line_text(self, line: int) -> str:
        """The stripped text of 1-based ``line`` ('' past the end)."""
        lines = self.text.splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


@lru_cache(maxsize=32)
def parse(text: str) -> ParsedDockerfile:
    """Parse a Dockerfile's text (cached by text: one parse per Dockerfile per process).

    Args:
        text: the Dockerfile's source (at most what the caller read; ``EnvDir`` and the
            static context read at most 1 MiB).

    Returns:
        The :class:`ParsedDockerfile`. It never raises for bad input: a tokeniser failure is
        in ``error``, an unknown instruction in ``unknown``, a bad port in ``final.expose``.
    """
    try:
        instructions, comments, parents = _tokenise(text)
    except Exception as exc:  # noqa: BLE001 - any tokeniser failure is the caller's finding
        return ParsedDockerfile(text=text, error=str(exc) or type(exc).__name__)
    stages = _stages(instructions, parents)
    syntax_line = _syntax_directive(text)
    parsed = ParsedDockerfile(
        text=text,
        instructions=tuple(instructions),
        comments=tuple(comments),
        stages=tuple(stages),
        final=_final_stage(instructions, stages),
        syntax_line=syntax_line,
    )
    return replace(parsed, buildkit=tuple(_buildkit(parsed)))


def _tokenise(text: str) -> tuple[list[Instruction], list[Instruction], list[str]]:
    """``(instructions, comments, parent images)`` from dockerfile-parse, heredoc bodies
    dropped (dockerfile-parse reads their lines as instructions: ``echo hi`` as ``ECHO``)."""
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")), cache_content=True)
    structure = parser.structure
    parents = [str(p) for p in parser.parent_images]
    instructions: list[Instruction] = []
    comments: list[Instruction] = []
    heredoc_end: str | None = None
    for item in structure:
        content = str(item.get("content", ""))
        if heredoc_end is not None:
            if content.strip() == heredoc_end:
                heredoc_end = None
            continue
        name = str(item.get("instruction", "")).upper()
        value = str(item.get("value", ""))
        match = HEREDOC.search(value) if name in ("RUN", "COPY", "ADD") else None
        heredoc_end = match.group(1) if match else None
        ins = Instruction(
            name=name,
            value=value,
            line=int(item.get("startline", 0)) + 1,
            content=content,
            heredoc=heredoc_end,
        )
        (comments if name == "COMMENT" else instructions).append(ins)
    return instructions, comments, parents


def _stages(instructions: list[Instruction], parents: list[str]) -> list[Stage]:
    froms = [i for i, ins in enumerate(instructions) if ins.name == "FROM"]
    stages: list[Stage] = []
    for n, start in enumerate(froms):
        end = froms[n + 1] if n + 1 < len(froms) else len(instructions)
        ins = instructions[start]
        words = [w for w in ins.value.split() if not w.startswith("--")]
        image = words[0] if words else ""
        alias = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
        resolved = parents[n] if n < len(parents) and parents[n] else image
        stages.append(Stage(n, ins, image, resolved, alias, tuple(instructions[start + 1 : end])))
    return stages


def command_argv(value: str) -> list[str]:
    """A ``CMD``/``ENTRYPOINT`` value as argv: exec form (a JSON array of strings) as is,
    shell form as ``["sh", "-c", value]``."""
    value = value.strip()
    if value.startswith("["):
        try:
            words = json.loads(value)
            if isinstance(words, list) and all(isinstance(w, str) for w in words):
                return words
        except ValueError:
            pass
    return ["sh", "-c", value]


def _final_stage(instructions: list[Instruction], stages: list[Stage]) -> FinalStage:
    expose = tuple(_exposed(instructions))
    if not stages:
        return FinalStage(expose=expose)
    entry: list[str] = []
    cmd: list[str] = []
    workdir: str | None = None
    command: Instruction | None = None
    users: list[Instruction] = []
    for ins in stages[-1].instructions:
        if ins.name == "WORKDIR":
            value = ins.value
            workdir = (
                value
                if value.startswith("/") or workdir is None
                else f"{workdir.rstrip('/')}/{value}"
            )
        elif ins.name in ("CMD", "ENTRYPOINT"):
            words = command_argv(ins.value)
            if ins.name == "CMD":
                cmd = words
            else:
                entry, cmd = words, []  # ENTRYPOINT resets an inherited CMD
            command = ins
        elif ins.name == "USER":
            users.append(ins)
    return FinalStage(tuple(entry + cmd), command, workdir, tuple(users), expose)


def _exposed(instructions: list[Instruction]) -> list[ExposedPort]:
    out: list[ExposedPort] = []
    for ins in instructions:
        if ins.name != "EXPOSE":
            continue
        for tok in ins.value.split():
            num = tok.split("/")[0]
            if num.isdigit():  # `$PORT` and other words are not numbers; skipped
                out.append(ExposedPort(num, port_number(num), ins))
    return out


def _syntax_directive(text: str) -> int | None:
    # Parser directives are only honoured before the first instruction or ordinary comment.
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        if _SYNTAX_DIRECTIVE.match(line):
            return i + 1
        if not _DIRECTIVE.match(line):
            return None
    return None


def _buildkit(parsed: ParsedDockerfile) -> list[BuildKitFeature]:
    found: list[BuildKitFeature] = []
    if parsed.syntax_line is not None:
        found.append(
            BuildKitFeature(
                parsed.syntax_line,
                "`# syntax=` parser directive",
                parsed.line_text(parsed.syntax_line),
            )
        )
    for ins in parsed.instructions:
        first_line = parsed.line_text(ins.line) or ins.content.strip()
        for flag in ins.flags:
            if flag in BUILDKIT_FLAGS.get(ins.name, ()):
                what = f"`{ins.name} {flag}`"
                found.append(BuildKitFeature(ins.line, what, first_line, flag, ins))
        if ins.heredoc is not None:
            what = f"a heredoc in `{ins.name}`"
            found.append(BuildKitFeature(ins.line, what, first_line, None, ins))
    return found


def base_images(instructions: list[Instruction]) -> list[tuple[str, int]]:
    """``(image, line)`` of every ``FROM`` that names an image (not a stage, not scratch)."""
    stages: set[str] = set()
    out: list[tuple[str, int]] = []
    for stage in _stages(instructions, []):
        if stage.name is not None:
            stages.add(stage.name)
        if not stage.image or stage.image.lower() in stages or stage.image == "scratch":
            continue
        out.append((stage.image, stage.from_.line))
    return out
