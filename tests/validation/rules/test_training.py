"""EK7xx findings read from the driver's lines: a multi-line library error stays readable."""

from __future__ import annotations

from pathlib import Path

from envkit.validation.report import _finding_lines
from envkit.validation.rules.training import ORACLE_THROUGH_ADAPTER, _failure

PYDANTIC = (
    "ValidationError: 1 validation error for GuessAction\n"
    "hint\n"
    "  Extra inputs are not permitted [type=extra_forbidden, input_value=True]"
)


def test_a_multi_line_error_is_indented_under_the_finding(tmp_path: Path) -> None:
    item = {"phase": "play", "tool": "guess", "error": PYDANTIC, "action": {"guess": 3}}
    finding = _failure(tmp_path, "python", item)
    assert finding.code == ORACLE_THROUGH_ADAPTER.code
    first, *rest = finding.message.splitlines()
    assert first.endswith('for the oracle\'s action {"guess": 3}.'), first
    assert "1 validation error for GuessAction" in first
    assert rest == [
        "    hint",
        "      Extra inputs are not permitted [type=extra_forbidden, input_value=True]",
    ]
    shown = "\n".join("".join(text for text, _style in line) for line in _finding_lines(finding))
    body = shown.splitlines()[1:]  # below the code line: the message, then the fix
    assert all(line.startswith(" " * 11) for line in body if line.strip()), shown
