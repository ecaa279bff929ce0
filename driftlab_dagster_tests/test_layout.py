"""The house rules a reviewer checks by reading, checked by reading the source: no import cycle between the
package's modules, a core that imports neither Dagster nor the command line, no Dagster internals, and no
module too long to hold one job."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "driftlab_dagster"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every module this one imports, at any depth of its code (a lazy import inside a function is still a
    dependency), relative imports resolved; `from pkg import mod` counts as importing `pkg.mod`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return found


GRAPH = {name: {m for m in _imports(name, path) if m in MODULES and m != name} for name, path in MODULES.items()}


def test_no_module_of_the_package_imports_itself_back_through_others():
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for dep in sorted(GRAPH[module]):
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(GRAPH):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("driftlab_dagster.core")))
def test_the_core_imports_neither_dagster_nor_the_command_line(module):
    imported = _imports(module, MODULES[module])
    outside = sorted(m for m in imported
                     if m.startswith("driftlab_dagster.") and not m.startswith("driftlab_dagster.core"))
    assert outside == [], f"{module} reaches outside the core: {outside}"
    assert not any(m == "dagster" or m.startswith(("dagster.", "dagster_")) for m in imported)
    assert "argparse" not in imported


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_dagster_internals(module):
    assert not any(m.startswith("dagster._") for m in _imports(module, MODULES[module]))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_is_short_enough_to_hold_one_job(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]} has {lines} lines (at most {MAX_LINES}): split it by job"
