"""The package's shape: no import circles, no private imports across modules, small
modules, every module importable, and pyproject listing every package."""
from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"jaxmedusa": ROOT / "jaxmedusa", "jaxmedusa_cli": ROOT / "cli"}
MAX_LINES = 460  # the developers' guide: one concept per module, "about 450 lines" at most


def _modules() -> dict[str, Path]:
    """{dotted module name: file} of every module of the two packages."""
    out = {}
    for top, folder in PACKAGES.items():
        for f in sorted(folder.rglob("*.py")):
            parts = list(f.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([top] + parts)] = f
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """[(imported module, imported names, line, inside a function)] of one module; names
    that are submodules count as imports of the submodule."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    found.append((a.name, [], child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")
                    up = up[: len(up) - (child.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [a.name for a in child.names]
                subs = [n for n in names if f"{base}.{n}" in MODULES]
                for n in subs:
                    found.append((f"{base}.{n}", [], child.lineno, in_function))
                rest = [n for n in names if n not in subs]
                if rest or not subs:
                    found.append((base, rest, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def _graph() -> dict[str, set[str]]:
    g = {m: set() for m in MODULES}
    for m, f in MODULES.items():
        for target, _, _, _ in _imports(m, f):
            while target and target not in MODULES:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target != m:
                g[m].add(target)
    return g


def test_every_module_imports():
    for m in MODULES:
        importlib.import_module(m)


def test_import_graph_is_acyclic():
    g = _graph()
    state, stack = {}, []

    def dfs(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(g[m]):
            if state.get(n) == "open":
                cycle = stack[stack.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                dfs(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(g):
        if m not in state:
            dfs(m)


def test_the_cycle_check_can_fail():
    """The same DFS finds a planted cycle (so a pass above means something)."""
    g = _graph()
    g["jaxmedusa.core.pytree"].add("jaxmedusa.solver.simulate")  # simulate imports core.pytree (via core)
    seen, found = {}, []

    def dfs(m, path):
        seen[m] = "open"
        for n in g[m]:
            if seen.get(n) == "open":
                found.append(n)
            elif n not in seen:
                dfs(n, path + [n])
        seen[m] = "done"

    for m in sorted(g):
        if m not in seen:
            dfs(m, [m])
    assert found


def test_no_function_local_imports_of_the_package_and_no_private_imports():
    problems = []
    for m, f in MODULES.items():
        for target, names, line, in_function in _imports(m, f):
            ours = target.split(".")[0] in PACKAGES
            if ours and in_function:
                problems.append(f"{f.relative_to(ROOT)}:{line}: function-local import of {target}")
            if ours and target != m:
                private = [n for n in names if n.startswith("_") and n != "__version__"]
                if private:
                    problems.append(f"{f.relative_to(ROOT)}:{line}: private name(s) {private} of {target}")
    assert not problems, "\n".join(problems)


def test_no_module_is_too_long():
    long = {str(f.relative_to(ROOT)): n for f in MODULES.values() if (n := len(f.read_text().splitlines())) > MAX_LINES}
    assert not long, long


def test_pyproject_lists_every_package():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    folders = {m for m, f in MODULES.items() if f.name == "__init__.py"}
    assert listed == folders


def test_every_package_says_what_it_is():
    for m, f in MODULES.items():
        if f.name == "__init__.py":
            doc = ast.get_docstring(ast.parse(f.read_text()))
            assert doc and len(doc) > 40, f"{f.relative_to(ROOT)} has no docstring"


def test_the_repository_carries_its_own_documentation():
    """Nothing cites files outside the repository (the shared folder, a DESIGN.md)."""
    bad = []
    for f in list(ROOT.glob("*.md")) + list(ROOT.rglob("*.py")) + list((ROOT / "docs").rglob("*.md")) \
            + list((ROOT / "studies").rglob("*")):
        if ".venv" in f.parts or not f.is_file() or f.suffix in (".parquet",):
            continue
        text = f.read_text(errors="ignore")
        for needle in ("DESIGN.md", "../shared", "/work/shared", "seeds/0"):
            if needle in text and f.name != "test_architecture.py":
                bad.append(f"{f.relative_to(ROOT)}: {needle}")
    assert not bad, bad
