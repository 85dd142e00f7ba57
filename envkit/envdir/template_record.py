"""The template record ``envkit init`` writes into README.md: which template it rendered and
fingerprints of the files that encode the task, so EK224 can tell a README that still
describes the template from one whose code moved on.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

from envkit.envdir.pysource import parse_python

# -- the template record: what envkit validate (EK224) compares ---------------------------------
TEMPLATE_RECORD_TAG = "envkit:template"
"""Opens the HTML comment ``envkit init`` puts after the README's front matter."""


_RECORD = re.compile(
    r"<!--\s*"
    + re.escape(TEMPLATE_RECORD_TAG)
    + r"\s+([A-Za-z0-9_-]+)((?:\s+[\w./-]+=[0-9a-f]{12})+)"
)


@dataclass(frozen=True)
class TemplateRecord:
    """What ``envkit init`` recorded in the README about the template it rendered.

    Attributes:
        template: the template's name (``guess``).
        fingerprints: file relative to the environment -> :func:`source_fingerprint` of the
            text ``envkit init`` wrote (``models.py`` and the environment module).
        line: 1-based line of the record in README.md.
    """

    template: str
    fingerprints: dict[str, str]
    line: int


def source_fingerprint(text: str) -> str:
    """12 hex digits of SHA-256 over the syntax tree of Python source ``text``.

    The tree has no comments, layout, parentheses or trailing commas, so reformatting
    (``ruff format``) and editing comments keep the fingerprint while any change to the code
    changes it. It is written out field by field, leaving out empty and ``None`` fields and
    expression contexts, so the fields newer Pythons add with empty defaults
    (``type_params`` in 3.12) do not change it either. Text that does not parse is hashed as
    it is.
    """
    try:
        canonical = _tree_text(parse_python(text))
    except (SyntaxError, ValueError):
        canonical = text
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def _tree_text(node: object) -> str:
    """A syntax tree as text: node names and their non-empty fields (see
    :func:`source_fingerprint`)."""
    if isinstance(node, list):
        return "[" + ",".join(_tree_text(v) for v in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for name in node._fields:
        value = getattr(node, name, None)
        if name in ("ctx", "kind", "type_comment") or value is None or value == []:
            continue
        fields.append(f"{name}={_tree_text(value)}")
    return f"{type(node).__name__}({','.join(fields)})"


def read_template_record(readme: str) -> TemplateRecord | None:
    """The :class:`TemplateRecord` in README text, ``None`` when it has none (the author
    removed it, or envkit did not write the README)."""
    found = _RECORD.search(readme)
    if found is None:
        return None
    fingerprints: dict[str, str] = {}
    for item in found.group(2).split():
        rel, _, digest = item.partition("=")
        fingerprints[rel] = digest
    return TemplateRecord(
        template=found.group(1),
        fingerprints=fingerprints,
        line=readme.count("\n", 0, found.start()) + 1,
    )
