"""What a sentence an environment returns may give away: the parts of a text a policy that
reads it could send back as the answer (EK509 reads them in what an episode leaves behind,
EK522 in the feedback after a wrong answer).

A value is often not a field of its own but a word of a sentence (``"Out of guesses: the
number was 57."``, ``"Wrong: expected 583, got 580."``); a policy that reads the text learns
the part as easily as a field.
"""

from __future__ import annotations

import re

#: A quoted part: 'x', "x" or `x` on one line.
QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`")
#: "expected 73", "the answer was: Paris", "should be 4.5", "the word was CRANE" (the text
#: after them, to the end of the clause).
AFTER_CUE = re.compile(
    r"(?:expected(?: answer| value| output)?|(?:correct )?answer|solution|should (?:be|return)|"
    r"\b(?:word|number|value|target|secret|result) (?:was|is))"
    r"(?:\s+(?:is|was))?\s*[:=]?\s*([^\s;,.!?][^;\n]{0,120}?)\s*(?:[;\n]|[.!?](?:\s|$)|$)",
    re.IGNORECASE,
)
#: A number in running text (a full stop after it ends the sentence).
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")


def text_parts(text: str) -> list[str]:
    """The parts of ``text`` that could be an answer, in this order: the text after a cue
    (``expected``, ``the answer was``, ``the number was``), quoted parts, numbers; each
    stripped, without repeats and without ``text`` itself."""
    parts = [m.group(1).strip() for m in AFTER_CUE.finditer(text)]
    parts += [next(g for g in m.groups() if g).strip() for m in QUOTED.finditer(text)]
    parts += [m.group() for m in NUMBER.finditer(text)]
    whole = text.strip()
    out: list[str] = []
    for part in parts:
        if part and part != whole and part not in out:
            out.append(part)
    return out
