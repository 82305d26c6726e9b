"""The house rules, read from the source tree's syntax alone (nothing of the project is imported, so this is fast).

- No module of softmax_core/ or explorer_ui/ is over MAX_LINES lines. String data is excused: lines spanned by a
  module-level assignment whose value is a pure literal (a table of strings or numbers that `ast.literal_eval`
  accepts) do not count, so a module that is mostly a literal table is measured by its code.
- Nothing private (a `_name`, not a `__dunder__`) of one project module is used by another — neither as
  `from mod import _name` nor as `mod._name` on an imported module — anywhere in the project: the library, the UI,
  the pages, the tools and the tests.
- No import cycle among the modules of softmax_core/ and explorer_ui/. Every import counts, the ones inside
  functions too: a lazy import only hides a cycle until the function first runs. Imports under
  `if TYPE_CHECKING:` are left out, since they never run.
- The library (softmax_core/, bench_tools/) never imports the UI (explorer_ui/, streamlit).
- softmax_core/ is the drop-in and the ground floor: it imports none of the packages that stand beside it (the
  teaching models, the benchmark harness, the kernel inspector, the tools, the UI); they import it.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
NEIGHBOURS = ("softmax_teaching", "softmax_bench", "kernel_inspector")
PACKAGES = ("softmax_core", *NEIGHBOURS, "explorer_ui", "bench_tools", "classroom_tools", "deploy", "tests")
SIZED = ("softmax_core", *NEIGHBOURS, "explorer_ui")
LIBRARY = ("softmax_core", *NEIGHBOURS, "bench_tools")
UI = ("explorer_ui", "streamlit")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=None)
def _sources() -> dict[str, tuple[Path, ast.Module]]:
    """Every project module by dotted name (pages and app.py by their path, since nothing imports them)."""
    found = {}
    paths = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    paths += sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
    for path in paths:
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(ROOT).parts):
            continue
        found[_module_name(path)] = (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return found


def _is_package(name: str) -> bool:
    path, _ = _sources()[name]
    return path.name == "__init__.py"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The dotted module an ImportFrom reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def _imports(module: str):
    """(target module, imported name or None, line) for each import that runs; targets are project modules."""
    modules = _sources()
    _, tree = modules[module]
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    yield sub, None, node.lineno
                else:
                    yield source, alias.name, node.lineno


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _where(module: str, line: int) -> str:
    path, _ = _sources()[module]
    return f"{path.relative_to(ROOT)}:{line}"


def _code_lines(tree: ast.Module, total: int) -> int:
    data = 0
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if value is None or isinstance(value, ast.Constant) and not isinstance(value.value, str):
            continue
        try:
            ast.literal_eval(value)
        except ValueError:
            continue
        data += node.end_lineno - node.lineno + 1
    return total - data


def test_no_module_is_over_the_line_limit():
    over = []
    for name, (path, tree) in _sources().items():
        if name.split(".")[0] not in SIZED:
            continue
        total = len(path.read_text(encoding="utf-8").splitlines())
        if (lines := _code_lines(tree, total)) > MAX_LINES:
            over.append(f"{path.relative_to(ROOT)}: {lines} lines of code ({total} in all)")
    assert not over, f"modules over {MAX_LINES} lines: " + "; ".join(over)


def test_code_lines_excuse_literal_tables_only():
    tree = ast.parse('TABLE = {\n "a": "x",\n "b": ("y", 2),\n}\nCOUNT = 3\ndef f():\n    return TABLE\n')
    assert _code_lines(tree, 7) == 3
    assert _code_lines(ast.parse("X = f(\n 1,\n)\n"), 3) == 3


def _module_aliases(module: str) -> dict[str, str]:
    """Local names bound to whole project modules: `import a.b as m`, `from a import b` (b a module)."""
    modules = _sources()
    _, tree = modules[module]
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def _attribute_path(node: ast.Attribute) -> list[str] | None:
    parts = [node.attr]
    value = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    parts.append(value.id)
    return parts[::-1]


def _named_attributes(tree: ast.Module, aliases: dict[str, str]):
    """(module, attribute, line) for getattr/setattr/hasattr/delattr(module, "name") and monkeypatch.setattr or
    .delattr(module, "name") calls on an imported project module: a private name reached by its string."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        target, name = node.args[0], node.args[1]
        if called in {"getattr", "setattr", "hasattr", "delattr"} and isinstance(target, ast.Name) \
                and target.id in aliases and isinstance(name, ast.Constant) and isinstance(name.value, str):
            yield aliases[target.id], name.value, node.lineno


def test_private_names_are_told_from_public_and_dunder():
    assert _private("_graph_samples") and not _private("graph_samples") and not _private("__version__")
    tree = ast.parse('from softmax_bench import timers\nmonkeypatch.setattr(timers, "_x", 1)\ngetattr(timers, "y")\n')
    aliases = {"timers": "softmax_bench.timers"}
    assert list(_named_attributes(tree, aliases)) == [("softmax_bench.timers", "_x", 2),
                                                      ("softmax_bench.timers", "y", 3)]


def test_nothing_private_is_used_from_another_module():
    modules = _sources()
    found = []
    for module in modules:
        for target, name, line in _imports(module):
            if name and target != module and target in modules and _private(name):
                found.append(f"{_where(module, line)} imports {target}.{name}")
        aliases = _module_aliases(module)
        for node in ast.walk(modules[module][1]):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            parts = _attribute_path(node)
            if not parts or parts[0] not in aliases:
                continue
            owner = ".".join([aliases[parts[0]]] + parts[1:-1])
            if owner in modules and owner != module:
                found.append(f"{_where(module, node.lineno)} reads {owner}.{node.attr}")
        for owner, name, line in _named_attributes(modules[module][1], aliases):
            if _private(name) and owner in modules and owner != module:
                found.append(f"{_where(module, line)} reaches {owner}.{name} by name")
    assert not found, "private names used across modules:\n" + "\n".join(sorted(set(found)))


def _graph() -> dict[str, set[str]]:
    modules = _sources()
    inner = [m for m in modules if m.split(".")[0] in SIZED]
    return {m: {t for t, _, _ in _imports(m) if t in modules and t != m and t.split(".")[0] in SIZED}
            for m in inner}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = _graph()
    described = []
    for component in _cycles(graph):
        edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
        described.append("; ".join(edges))
    assert not described, "import cycles:\n" + "\n".join(described)


def test_the_library_never_imports_the_ui():
    found = []
    for module in _sources():
        if module.split(".")[0] not in LIBRARY:
            continue
        for target, _, line in _imports(module):
            if target.split(".")[0] in UI:
                found.append(f"{_where(module, line)} imports {target}")
    assert not found, "the library imports the UI:\n" + "\n".join(found)


def test_the_drop_in_imports_nothing_above_it():
    above = set(PACKAGES) - {"softmax_core"} | set(UI)
    found = []
    for module in _sources():
        if module.split(".")[0] != "softmax_core":
            continue
        for target, _, line in _imports(module):
            if target.split(".")[0] in above:
                found.append(f"{_where(module, line)} imports {target}")
    assert not found, "softmax_core imports a package that stands on it:\n" + "\n".join(found)
