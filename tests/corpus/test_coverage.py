"""docs/coverage.md is what bench/field_coverage.py makes of the repository's stored inputs (the
class lists, each rule's ``classes``, the field cases, the peers' stored results), and every
class a rule names is a class of those lists. Reads files only; plays nothing."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from envkit.findings import CLASS_ID, RULES
from envkit.validation import rules as _registered  # noqa: F401 - registers every rule

REPO = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location(
    "field_coverage", REPO / "bench" / "field_coverage.py"
)
assert _SPEC is not None and _SPEC.loader is not None
coverage_page = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(coverage_page)  # bench/ is scripts, not a package


def known_classes() -> set[str]:
    classes = json.loads(coverage_page.CLASSES.read_text(encoding="utf-8"))
    bohrin, envdoctor = classes["bohrin"], classes["rl-envdoctor"]
    return (
        {w["id"] for w in bohrin["weaknesses"]}
        | {f"TerminalWrench:{c}" for c in bohrin["terminal_wrench"]["map"]}
        | {f"rl-envdoctor:{coverage_page.slug(c['id'])}" for c in envdoctor["checks"]}
    )


def test_docs_coverage_md_is_up_to_date() -> None:
    assert coverage_page.DOC.read_text(encoding="utf-8") == coverage_page.current(), (
        "docs/coverage.md is stale: run `python bench/field_coverage.py --write`"
    )


def test_every_class_a_rule_names_is_a_published_class() -> None:
    named = {c for rule in RULES.values() for c in rule.classes}
    assert named, "no rule names an external class"
    assert named <= known_classes(), sorted(named - known_classes())


def test_the_page_maps_a_class_to_its_rules_and_cases(tmp_path) -> None:
    """A rule's class shows its code; a field case of that class shows its recorded verdict
    and the peers' stored ones."""
    from tests.corpus.field import FieldCase

    classes = json.loads(coverage_page.CLASSES.read_text(encoding="utf-8"))
    case = FieldCase("k", "defect_x", "defect", "BGW-119", "https://x", "m", "EK505", tmp_path)
    peers = {
        "peers": {"bohrin": "0.3.0", "rl-envdoctor": "0.1.0"},
        "rows": [
            {
                "bed": "field",
                "key": "k/defect_x",
                "kind": "defect",
                "external": "BGW-119",
                "code": "EK505",
                "verdicts": {
                    t: {"tool": t, "verdict": v, "detail": "", "seconds": 1.0}
                    for t, v in (
                        ("envkit", "caught"),
                        ("rl-envdoctor", "caught"),
                        ("bohrin", "missed"),
                    )
                },
            }
        ],
    }
    page = coverage_page.render(classes, peers, [case])
    row = next(line for line in page.splitlines() if line.startswith("| BGW-119 "))
    assert "EK505" in row and "| 1 / 0 | 1/1 | 1/1 | 0/1 |" in row
    assert "| k/defect_x | BGW-119 | defect | found EK505 | caught | missed |" in page
    assert "| field | envkit | 1 of 1 |" in page


@pytest.mark.parametrize("bad", ["BGW-19", "bgw-119", "TerminalWrench:Keyword", "nocolon"])
def test_a_class_id_has_one_shape(bad: str) -> None:
    assert not CLASS_ID.fullmatch(bad)


def test_register_refuses_a_malformed_class() -> None:
    from envkit.findings import Severity, register

    docs = {"summary": "s", "what": "w", "why": "y", "example": "e", "fix": "f"}
    with pytest.raises(ValueError, match="classes holds"):
        register("EK697", "test-only-ek697", Severity.INFO, **docs, classes=("BGW 119",))
    assert "EK697" not in RULES
