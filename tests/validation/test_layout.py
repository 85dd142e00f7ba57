"""The validation package's structure: one table of rule modules agreeing with the rules they
register. Its floors and the absence of import cycles are import-linter contracts in
pyproject.toml (tests/test_house.py runs them)."""

from __future__ import annotations

from envkit.findings import FAMILIES, RULES, Rule


def test_rule_modules_table_matches_what_they_register() -> None:
    """Every rule is defined in exactly one module of MODULES, whose family it belongs to
    (rule modules use a sibling's rule through the module, never by importing its name)."""
    from envkit.validation.rules import MODULES

    owner: dict[str, str] = {}
    for entry in MODULES:
        assert entry.family in FAMILIES
        rules = [v for v in vars(entry.module).values() if isinstance(v, Rule)]
        assert rules, f"{entry.module.__name__} defines no rule"
        for rule in rules:
            assert rule.code[2] == entry.family, (entry.module.__name__, rule.code)
            assert rule.code not in owner, f"{rule.code} in {owner.get(rule.code)} and here"
            owner[rule.code] = entry.module.__name__
    assert sorted(owner) == sorted(RULES), "a rule is registered outside MODULES"
