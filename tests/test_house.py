"""The house in layers: the floors and cycles (import-linter's contracts in pyproject.toml), and
the measures of envkit/ that may only get better (a ratchet: lower a ceiling when the code
improves, never raise it). ``python tests/test_house.py`` prints the figures."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tests.helpers import ENVKIT_PACKAGE, envkit_sources, shipped_templates

PKG = ENVKIT_PACKAGE

# The targets: bare Any in at most 5 % of functions, at most 12 % of imports inside
# functions (only where they keep `envkit --help` fast or reach an optional extra).
MAX_BARE_ANY_SHARE = 0.05
MAX_INNER_IMPORT_SHARE = 0.12
MAX_MODULE_LINES = 800
MAX_PROGRAM_STRING_LINES = 40


@dataclass
class Measures:
    functions: int = 0
    bare_any: list[str] = field(default_factory=list)
    imports: int = 0
    inner_imports: list[str] = field(default_factory=list)
    oversized: dict[str, int] = field(default_factory=dict)
    program_strings: list[str] = field(default_factory=list)


def _is_any(node: ast.expr | None) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any"
    )


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found.update(id(sub) for sub in ast.walk(node))
    return found


def measure() -> Measures:
    """Walk every module of envkit/ once."""
    m = Measures()
    for path, text, tree in envkit_sources():
        rel = path.relative_to(PKG).as_posix()
        if text.count("\n") > MAX_MODULE_LINES:
            m.oversized[rel] = text.count("\n")
        typing_only = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in typing_only:
                m.imports += 1
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                m.functions += 1
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
                if _is_any(node.returns) or any(p and _is_any(p.annotation) for p in params):
                    m.bare_any.append(f"{rel}:{node.lineno} {node.name}")
                for sub in ast.walk(node):
                    if (
                        sub is not node
                        and isinstance(sub, ast.Import | ast.ImportFrom)
                        and id(sub) not in typing_only
                    ):
                        m.inner_imports.append(f"{rel}:{sub.lineno}")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.count("\n") >= MAX_PROGRAM_STRING_LINES
                and ("import " in node.value or "def " in node.value)
            ):
                m.program_strings.append(f"{rel}:{node.lineno}")
    return m


@cache
def measures() -> Measures:
    """The tree measured once per process, when a test first asks (not at collection)."""
    return measure()


def test_the_floors_and_no_cycles_hold() -> None:
    """import-linter's contracts (pyproject.toml): floors, and no cycles between siblings."""
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(exe)], capture_output=True, text=True, cwd=PKG.parent, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_bare_any_types_few_functions() -> None:
    share = len(measures().bare_any) / measures().functions
    assert share <= MAX_BARE_ANY_SHARE, f"{share:.1%} of functions use a bare Any"


def test_imports_sit_at_the_top() -> None:
    share = len(measures().inner_imports) / measures().imports
    assert share <= MAX_INNER_IMPORT_SHARE, f"{share:.1%} of imports are inside functions"


def test_no_module_is_oversized() -> None:
    assert measures().oversized == {}, measures().oversized


def test_programs_are_modules_not_strings() -> None:
    """A program run in another interpreter lives in envkit/programs/, not in a string."""
    assert measures().program_strings == []


def test_the_suite_collects_without_xdist() -> None:
    """README gives ``scripts/test -p no:xdist`` for a serial run: the suite's ``xdist_group``
    marks must then still be known to ``--strict-markers`` (pytest-xdist registers the mark
    only when it is loaded)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q",
         "tests/importers/test_import.py"],
        cwd=PKG.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "tests collected" in run.stdout


#: Test files allowed to name every shipped template by hand, and why.
HAND_LISTS = {
    "tests/migrate/conftest.py": "the legacy fixtures: one rendering per template of its time",
    "tests/scale/test_k8s.py": "a floor on the catalog's list, which its tests take",
}


def test_template_tests_take_the_shipped_list() -> None:
    """A test over the template family takes its list from the catalog
    (tests/helpers.shipped_templates), so a new template cannot skip it: no literal list,
    tuple or set in a test file names every shipped template, beyond :data:`HAND_LISTS`."""
    shipped = set(shipped_templates())
    tests = PKG.parent / "tests"
    found = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(PKG.parent).as_posix()
        if rel in HAND_LISTS or "/fixtures/" in rel or "/corpus/" in rel:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List | ast.Tuple | ast.Set):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if shipped <= names:
                    found.append(f"{rel}:{node.lineno}")
    assert found == [], found


if __name__ == "__main__":
    m = measures()
    print(f"functions {m.functions}, bare Any {len(m.bare_any)}")
    print(f"  = {len(m.bare_any) / m.functions:.1%}")
    print(f"imports {m.imports}, inside functions {len(m.inner_imports)}")
    print(f"  = {len(m.inner_imports) / m.imports:.1%}")
    print(f"modules over {MAX_MODULE_LINES} lines: {m.oversized}")
    print(f"program strings: {m.program_strings}")
