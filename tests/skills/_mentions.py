"""Find every `envkit ...` command line and flag a skill mentions (for the CLI-existence test).

Checked: inline code spans and fenced code blocks that contain an `envkit <command> ...`
invocation; bare flag spans (`--static`) inside a section headed `envkit <command>` (they
belong to that command); and bare flag spans anywhere else (``words == ()``, ``bare``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SPAN = re.compile(r"`([^`]+)`")
_INVOCATION = re.compile(r"(?<![\w./-])envkit\s+(?=\S)")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_SECTION = re.compile(r"^envkit\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?")
_SEPARATORS = re.compile(r"\s(?:&&|\|\||\||;|#)\s|\s#|\s\|\s")


@dataclass(frozen=True)
class Mention:
    """One command (and flags) a skill mentions.

    Attributes:
        where: ``file:line`` for the failure message.
        words: command words, e.g. ``("skills", "install")``; empty for root options
            (``envkit --version``) and for bare flags outside a command section.
        flags: flags as written (``--agent``, ``-e``).
        bare: True for flags found alone under an ``envkit <command>`` heading.
    """

    where: str
    words: tuple[str, ...]
    flags: tuple[str, ...]
    bare: bool = False


def _clean_flag(token: str) -> list[str]:
    out = []
    for part in token.strip("[](){},.;:").split("|"):
        part = part.strip("[](){},.;:").split("=", 1)[0]
        part = part.removesuffix("...")
        if re.fullmatch(r"--?[A-Za-z][\w-]*", part):
            out.append(part)
    return out


def _parse_invocation(rest: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    rest = _SEPARATORS.split(" " + rest + " ", maxsplit=1)[0]
    tokens = rest.split()
    if not tokens or tokens[0].startswith(("<", "[", "COMMAND", "CMD")):
        return None
    words: list[str] = []  # up to two leading words: command, and subcommand of a group
    flags: list[str] = []
    for i, tok in enumerate(tokens):
        if tok.startswith("-"):
            flags.extend(_clean_flag(tok))
        elif i == len(words) and len(words) < 2 and re.fullmatch(r"[a-z][a-z-]*", tok):
            words.append(tok)
    return tuple(words), tuple(flags)


def mentions(path: Path, label: str) -> list[Mention]:
    """Every envkit invocation and sectioned flag in one Markdown file."""
    found: list[Mention] = []
    fenced = False
    section: tuple[str, ...] | None = None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{label}:{lineno}"
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            heading = _HEADING.match(line)
            if heading:
                m = _SECTION.match(heading.group(1).strip().strip("`"))
                section = tuple(w for w in m.groups() if w) if m else None
                continue
        # in code blocks, a shell comment is prose: `envkit stop   # stop what envkit started`
        segments = [re.split(r"(?:^|\s)#(?:\s|$)", line)[0]] if fenced else _SPAN.findall(line)
        for seg in segments:
            invocations = list(_INVOCATION.finditer(seg))
            for inv in invocations:
                parsed = _parse_invocation(seg[inv.end() :])
                if parsed:
                    found.append(Mention(where, *parsed))
            if not invocations and not fenced and seg.lstrip(" [(").startswith("-"):
                flags = tuple(
                    f
                    for tok in seg.split()
                    if tok.lstrip("[(").startswith("-")
                    for f in _clean_flag(tok)
                )
                if flags:  # outside an `envkit <command>` section: words=()
                    found.append(Mention(where, section or (), flags, bare=True))
    return found
