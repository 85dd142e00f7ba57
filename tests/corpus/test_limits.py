"""A rule's documented limits and its corpus agree: each defect of a rule's corpus that the
rule misses (``KNOWN_MISSES``) or leaves to another rule (``REPORTED_AS``), and each near-miss
it reports anyway (``KNOWN_NOISE``), is named among the rule's known limits (``envkit
validate --explain CODE``, docs/rules.md), and a rule documents no limit its corpus does not
show. Reads the corpora; plays nothing."""

from __future__ import annotations

from envkit.findings import RULES
from envkit.validation import rules as _registered  # noqa: F401 - registers every rule
from tests.corpus.corpus import KNOWN_MISSES, KNOWN_NOISE, REPORTED_AS, cases
from tests.corpus.field import field_cases


def test_every_known_miss_is_a_documented_limit_of_its_rule() -> None:
    by_key = {c.key: c for c in cases()}
    listed = set(KNOWN_MISSES) | set(REPORTED_AS) | set(KNOWN_NOISE)
    assert listed <= set(by_key), listed - set(by_key)
    assert all(by_key[k].kind == "nearmiss" for k in KNOWN_NOISE), "KNOWN_NOISE is near-misses"
    missing = sorted(
        {by_key[k].code for k in listed} - {code for code, rule in RULES.items() if rule.limits}
    )
    assert missing == [], f"rules with known misses but no `limits=`: {missing}"


def test_documented_limits_come_from_a_corpus() -> None:
    """A rule's known limits come from a corpus: its own (tests/corpus/<rule-name>), or the
    field corpus of the external classes it names (tests/corpus/field)."""
    with_corpus = {c.code for c in cases()}
    field_classes = {c.external for c in field_cases()}
    with_corpus |= {code for code, r in RULES.items() if set(r.classes) & field_classes}
    documented = {code for code, rule in RULES.items() if rule.limits}
    assert documented <= with_corpus, documented - with_corpus


def test_a_case_reported_as_another_rule_is_one_its_rule_names() -> None:
    """A defect counts as found by another rule only when its own rule names that rule
    (``reported_as``) beside its known limits."""
    by_name = {r.name: r for r in RULES.values()}
    for key, (codes, _why) in REPORTED_AS.items():
        rule = by_name[key.split("/")[0]]
        assert set(codes) <= set(rule.reported_as), f"{key}: {rule.code} does not name {codes}"
    named = {c for r in RULES.values() for c in r.reported_as}
    assert named <= set(RULES), named - set(RULES)
