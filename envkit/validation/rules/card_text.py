"""EK224: the README (or its Space card) still describes the template's task after the
environment changed.

``envkit init`` puts a record after the README's front matter (an HTML comment, invisible on
the Space page): the template's name and fingerprints of the ``models.py`` and environment
module it rendered (:func:`envkit.envdir.template_record.source_fingerprint`: Python tokens without comments
or layout, so reformatting does not count as a change). Each bundled template declares in its
``template.toml`` (``readme_phrases``) the sentences of its README and card that describe its
own task. A README that keeps the record and one of these sentences while a recorded file no
longer has its fingerprint describes a task the environment no longer has.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from envkit.catalog import template_phrases
from envkit.envdir.template_record import read_template_record, source_fingerprint
from envkit.findings import Finding, Location, Severity, register
from envkit.validation.context import StaticContext

README = "README.md"

TEMPLATE_TEXT = register(
    "EK224",
    "readme-describes-template",
    Severity.WARNING,
    hygiene=True,
    summary="The README or Space card still carries the template's own text after the "
    "environment's models or code changed.",
    what="`envkit init` records in README.md (an HTML comment after the front matter) the "
    "template and fingerprints of the `models.py` and `server/<pkg>_environment.py` it "
    "wrote; comments and formatting do not count. When a recorded file changed and the "
    "README or its card still holds one of the template's own sentences (its "
    "`readme_phrases`, e.g. guess's 'Guess the hidden number'), the README describes the "
    "template's task, not the environment's. Never an error: the task may be the same.",
    why="The README is the Space's page and the first thing an agent or a trainer reads: "
    "action and observation tables and a task description that no longer match "
    "`/schema` send people and models after the wrong task.",
    example="A guess environment whose action became `{'word': str}` while the card still "
    "says 'Guess the hidden number' and the Action table lists `guess`.",
    fix="Rewrite the README's description, its Action/Observation/Reward sections and the "
    "card's `short_description` for your environment, then delete the "
    "`<!-- envkit:template ... -->` comment. If the task really is still the template's, "
    "delete the comment alone.",
)


def _phrase_lines(text: str, phrases: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(1-based line, phrase)`` of each phrase found in ``text``, first line first.

    Matched case-insensitively, with any run of whitespace in the phrase matching any run
    in the text (README paragraphs wrap wherever the author likes)."""
    found = []
    for phrase in phrases:
        words = [re.escape(w) for w in phrase.split()]
        if not words:
            continue
        m = re.search(r"\s+".join(words), text, re.IGNORECASE)
        if m:
            found.append((text.count("\n", 0, m.start()) + 1, phrase))
    return sorted(found)


def check(ctx: StaticContext) -> Iterator[Finding]:
    text = ctx.text(README)
    record = read_template_record(text) if text is not None else None
    if text is None or record is None:
        return
    changed = []
    for rel, digest in record.fingerprints.items():
        source = ctx.text(rel)
        if source is None or source_fingerprint(source) != digest:
            changed.append(rel)
    hits = _phrase_lines(text, template_phrases(record.template)) if changed else []
    if not hits:
        return
    line, phrase = hits[0]
    more = (
        " (also " + ", ".join(f"'{p}' on line {n}" for n, p in hits[1:]) + ")"
        if len(hits) > 1
        else ""
    )
    yield TEMPLATE_TEXT.finding(
        f"`README.md` should describe this environment; it still says '{phrase}', the "
        f"{record.template} template's own text{more}, while "
        + " and ".join(f"`{rel}`" for rel in changed)
        + (
            " changed since `envkit init` wrote it (its fingerprint"
            if len(changed) == 1
            else " changed since `envkit init` wrote them (their fingerprints"
        )
        + f" are in the `envkit:template` comment on line {record.line}).",
        location=Location(README, line),
        template=record.template,
        changed=changed,
        phrases=[{"line": n, "phrase": p} for n, p in hits],
    )
