"""Every command prints its data through the one sink, ``envkit.cli._output.Output``.

The JSON of ``rules``, ``skills list`` and ``templates`` is pinned byte for byte to
``json.dumps(payload, indent=2)`` plus a newline (what ``Output.data`` prints), and a scan of
``envkit/cli`` fails when a command prints JSON its own way again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import envkit.cli

CLI_DIR = Path(envkit.cli.__file__).parent
# Printing JSON outside `Output.data`: rich's print_json, or json.dumps in a command module.
_OWN_JSON = re.compile(r"print_json\(|json\.dumps\(")
# Modules whose owners switch them to `Output.data` separately; empty this set once they have.
_PENDING: set[str] = set()


def _expected(payload: object) -> str:
    return json.dumps(payload, indent=2) + "\n"


def test_rules_json_is_output_data(cli) -> None:
    import envkit.validation.rules  # noqa: F401 - registers every rule
    from envkit.validation.report import rfc008_table, rules_table

    assert cli("rules", "--format", "json").stdout == _expected(rules_table())
    assert cli("rules", "--rfc008", "--format", "json").stdout == _expected(rfc008_table())


def test_skills_list_json_is_output_data(cli) -> None:
    from envkit.skills import list_skills

    expected = [
        {
            "name": s.name,
            "description": s.description,
            "files": list(s.files),
            "body_lines": s.body_lines,
        }
        for s in list_skills()
    ]
    assert cli("skills", "list", "--json").stdout == _expected(expected)


def test_templates_json_is_output_data(cli) -> None:
    from envkit.catalog import list_templates

    expected = [
        {
            "name": t.name,
            "description": t.description,
            "options": {
                k: {"default": o.default, "help": o.help, "choices": list(o.choices)}
                for k, o in t.options.items()
            },
        }
        for t in list_templates()
    ]
    assert cli("templates", "--json").stdout == _expected(expected)


@pytest.mark.parametrize(
    "path", sorted(p for p in CLI_DIR.glob("*.py") if p.name != "_output.py"), ids=lambda p: p.name
)
def test_commands_print_json_only_through_output(path: Path) -> None:
    hits = [
        f"{path.name}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _OWN_JSON.search(line)
    ]
    if path.name in _PENDING:
        pytest.skip(f"{path.name} is switched to Output.data by its owner")
    assert not hits, "print JSON with `_output.Output(fmt).data(payload)`:\n" + "\n".join(hits)
