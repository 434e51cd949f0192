"""The package's shape, checked: the import graph of ``python/gbnf_sampler`` has no cycle and at
most two imports that run back up the pipeline, no module or function grows past a screenful,
and function-local imports only load optional third-party packages (never a module of ours, which
is how import circles hide)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "gbnf_sampler"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
MAX_UPWARD_IMPORTS = 2
EXTENSIONS = ("_core", "_cuda")  # compiled modules (no .py file)

# The pipeline's floors, bottom first: a module may import from its own floor or below. The
# first matching prefix decides (dotted names relative to gbnf_sampler).
FLOORS: list[tuple[str, ...]] = [
    ("_core", "_cuda", "errors", "limits", "validation"),
    ("syntax", "regex"),
    ("schema",),
    ("grammar", "json_schema"),
    ("vocab", "kernels", "cuda", "torch"),
    ("compiled",),
    ("matcher",),
    ("structural",),
    ("llama", "hf", "engines", "sglang", "vllm", "vllm_processor"),
    ("serve",),
    ("cli", "doctor"),
    ("__init__", "__main__"),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _floor(module: str) -> int:
    for i, names in enumerate(FLOORS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return i
    raise AssertionError(f"module {module!r} has no floor in FLOORS: add it")


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if module == "__init__":
        package = []
    base = package[: len(package) - (node.level - 1)] if node.level else []
    return ".".join([*base, *(node.module.split(".") if node.module else [])])


def _edges(modules: dict[str, Path]) -> list[tuple[str, str, int, bool]]:
    """(importer, imported module of ours, line, inside a function) for every import of ours."""
    out = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        local = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level:
                base = _resolve(module, path, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}" if base else alias.name
                    ours = sub in modules or sub in EXTENSIONS
                    targets.append(sub if ours else base or "__init__")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                )
                for name in names:
                    if name and name.startswith("gbnf_sampler"):
                        rest = name.removeprefix("gbnf_sampler").lstrip(".")
                        targets.append(rest or "__init__")
            for target in targets:
                out.append((module, target, node.lineno, id(node) in local))
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for importer, imported, _, _ in _edges(modules):
        # A package's __init__ importing its own modules is how packages work; a module
        # importing its own package's __init__ back is the cycle we look for.
        if imported in modules and imported != importer:
            graph[importer].add(imported)
    assert _cycles(graph) == []


def test_few_upward_imports() -> None:
    modules = _modules()
    upward = [
        f"{importer} -> {imported} (line {line})"
        for importer, imported, line, _ in _edges(modules)
        if imported in modules and _floor(imported) > _floor(importer)
    ]
    assert len(upward) <= MAX_UPWARD_IMPORTS, upward


def test_function_local_imports_are_optional_dependencies_only() -> None:
    modules = _modules()
    local = [
        f"{importer} -> {imported} (line {line})"
        for importer, imported, line, inside in _edges(modules)
        if inside
    ]
    assert local == []


@pytest.mark.parametrize("module", sorted(_modules()))
def test_module_and_function_sizes(module: str) -> None:
    path = _modules()[module]
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_MODULE_LINES, f"{path.name} has {text.count(chr(10))} lines"
    long = [
        f"{f.name} ({f.end_lineno - f.lineno + 1} lines)"
        for f in ast.walk(ast.parse(text))
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.end_lineno is not None
        and f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_floors_cover_every_module() -> None:
    for module in _modules():
        _floor(module)  # raises for a module nobody placed
