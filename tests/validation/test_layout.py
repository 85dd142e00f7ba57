"""The validation package's structure (issue #12): one table of rule modules agreeing with the
rules they register, no import cycle, and no module importing from a layer above it."""

from __future__ import annotations

import ast
from pathlib import Path

import envkit
from envkit.findings import FAMILIES, RULES, Rule

PKG = Path(envkit.__file__).parent / "validation"

# Layers of envkit.validation, top first. A module may import from its own layer or below;
# the rule modules (one layer) may import each other, without a cycle.
LAYERS: list[set[str]] = [
    {"envkit.validation"},
    {
        "envkit.validation.config",
        "envkit.validation.report",
        "envkit.validation.lanes",
        "envkit.validation.lanes.training",
    },
    {"envkit.validation.static", "envkit.validation.runtime"},
    {"envkit.validation.rules", "envkit.validation.probes"},
    {"envkit.validation.rules.*"},
    {"envkit.validation.engine", "envkit.validation.context", "envkit.validation.explore"},
    {"envkit.validation.fuzz"},
]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    for i, layer in enumerate(LAYERS):
        if module in layer:
            return i
        if "envkit.validation.rules.*" in layer and module.startswith("envkit.validation.rules."):
            return i
    raise AssertionError(f"{module} is in no layer of LAYERS: add it")


def _imports() -> dict[str, set[str]]:
    """module -> the envkit.validation modules it imports (anywhere in its body)."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from pkg import submodule` imports the submodule (and, like every import,
                # its parent packages: not counted)
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [s for s in subs if s in modules] or [node.module]
            deps.update(t for t in targets if t in modules and t != name)
        graph[name] = deps
    return graph


def test_no_module_imports_from_a_layer_above() -> None:
    graph = _imports()
    upward = [(m, d) for m, deps in graph.items() for d in deps if _layer(d) < _layer(m)]
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _imports()
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if d.startswith(m + ".") or m.startswith(d + "."):
                continue  # a package and its own submodules
            assert state.get(d) != 1, "import cycle: " + " -> ".join(path + [d])
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


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
