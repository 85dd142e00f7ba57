"""EK220-EK221: files the static checks must read but will not.

Static validation reads every file through :func:`envkit.fsutil.read_text_bounded`: only
regular files inside the environment, at most 1 MiB each, so a FIFO named ``openenv.yaml``, a
link to ``/dev/zero`` or a 10 GB ``README.md`` cannot hang ``envkit validate`` or fill memory.
These rules say which file was refused and why; the rules that needed its content report what
they could not check. This module runs after the others (it reports what they tried to read).
"""

from __future__ import annotations

from collections.abc import Iterator

from envkit.envdir.constants import MANIFEST_NAME
from envkit.findings import Finding, Location, Severity, register
from envkit.fsutil import FileTooLargeError, probe
from envkit.validation.context import StaticContext

FILE_TOO_LARGE = register(
    "EK220",
    "file-too-large-to-check",
    Severity.ERROR,
    summary="A file the static checks read is larger than 1 MiB.",
    what="`openenv.yaml`, `pyproject.toml`, `README.md`, the Dockerfile, the ignore files "
    "and the environment's Python modules are each at most 1 MiB (1 048 576 bytes).",
    why="envkit reads these files to check them and caps what it reads, so a huge or "
    "sparse file cannot stall validation or exhaust memory; a file past the cap is not "
    "checked at all.",
    example="A 10 MB `README.md` with a data dump pasted into it.",
    fix="Move the bulk into a separate data file (ignored, or downloaded at build time) and "
    "keep the file itself small.",
)
FILE_NOT_REGULAR = register(
    "EK221",
    "file-not-regular",
    Severity.ERROR,
    summary="A file the static checks read is a FIFO, a device, a socket or a link leaving "
    "the environment.",
    what="`openenv.yaml`, `pyproject.toml`, `README.md`, the Dockerfile, the ignore files "
    "and the environment's Python modules are regular files inside the environment "
    "directory (symbolic links may point only inside it).",
    why="Reading a FIFO blocks forever, a device such as `/dev/urandom` never ends, and a "
    "link out of the directory is not what a Space receives: envkit refuses to read them.",
    example="`README.md` as a symbolic link to a file in a sibling directory.",
    fix="Replace it with a regular file holding the content (copy it instead of linking).",
)

KNOWN_FILES = (
    MANIFEST_NAME,
    "pyproject.toml",
    "README.md",
    "Dockerfile",
    "server/Dockerfile",
    ".gitignore",
    ".dockerignore",
    "inference.py",
)


def check(ctx: StaticContext) -> Iterator[Finding]:
    seen = dict(getattr(ctx, "read_errors", {}))
    for rel in KNOWN_FILES:
        if rel not in seen:
            problem = probe(ctx.root / rel, root=ctx.root)
            if problem is not None:
                seen[rel] = problem
    for rel in sorted(seen):
        exc = seen[rel]
        if isinstance(exc, FileTooLargeError):
            yield FILE_TOO_LARGE.finding(
                f"Files the static checks read must be at most {exc.limit} bytes; `{rel}` has "
                f"{exc.size}. It was not checked.",
                location=Location(rel),
            )
        else:
            reason = getattr(exc, "reason", None) or str(exc)
            yield FILE_NOT_REGULAR.finding(
                f"`{rel}` must be a regular file inside the environment; it is {reason}. "
                "It was not read.",
                location=Location(rel),
            )
