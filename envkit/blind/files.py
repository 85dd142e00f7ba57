"""Files the sequence policies write: the paths an observation names, the vacuous contents
written over them, and a file's content commented out in the file's own language."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: A file path in text: a relative name with a known extension (``tests/cases.json``).
FILE_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:json|jsonl|py|txt|csv|tsv|ya?ml|toml|cfg|ini|md|sh"
    r"|log|xml|html|sql))(?![\w/])"
)
#: Vacuous contents written over a named file: an empty list of checks, then nothing.
VACUOUS = ("[]", "")


def shown_paths(texts: Sequence[str]) -> list[str]:
    """The file paths ``texts`` name (:data:`FILE_PATH`), distinct, in order."""
    return list(dict.fromkeys(m.group(1) for t in texts for m in FILE_PATH.finditer(t)))


#: The line-comment marker of a file, by its extension (lower case, no dot).
COMMENT_MARKERS: dict[str, str] = {
    **dict.fromkeys(
        (
            "py",
            "sh",
            "bash",
            "conf",
            "cfg",
            "ini",
            "yaml",
            "yml",
            "toml",
            "env",
            "rb",
            "pl",
            "r",
            "properties",
            "dockerfile",
            "mk",
            "tf",
        ),
        "#",
    ),
    **dict.fromkeys(
        (
            "js",
            "mjs",
            "ts",
            "c",
            "h",
            "cc",
            "cpp",
            "hpp",
            "go",
            "rs",
            "java",
            "kt",
            "swift",
            "scala",
            "cs",
        ),
        "//",
    ),
    **dict.fromkeys(("sql", "lua", "hs"), "--"),
}


def commented_out(path: str, content: str) -> str | None:
    """``content`` with each of its non-blank lines commented out in the language
    ``path``'s extension names (:data:`COMMENT_MARKERS`; ``Dockerfile``/``Makefile`` by
    name); None when the extension has no line comment envkit knows, or nothing is left
    to comment out."""
    name = path.rsplit("/", 1)[-1].lower()
    ext = (
        name.rsplit(".", 1)[-1]
        if "." in name
        else {"dockerfile": "dockerfile", "makefile": "mk"}.get(name, "")
    )
    marker = COMMENT_MARKERS.get(ext)
    if marker is None or not content.strip():
        return None
    return "\n".join(
        f"{marker} {line}" if line.strip() else line for line in content.splitlines()
    ) + ("\n" if content.endswith("\n") else "")
