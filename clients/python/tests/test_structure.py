"""The client's modules import one another without a cycle, counting imports inside functions too
(a lazy import still ties two modules together)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cogen_client"


def relative_imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(alias.name for alias in node.names)
    return out


def test_no_import_cycle():
    graph = {p.stem: relative_imports(p) for p in PACKAGE.glob("*.py")}
    state = {}

    def visit(module, path):
        if state.get(module) == 1:
            raise AssertionError("import cycle: " + " -> ".join(path + [module]))
        if state.get(module) == 2:
            return
        state[module] = 1
        for dep in sorted(graph.get(module, ())):
            visit(dep, path + [module])
        state[module] = 2

    for module in sorted(graph):
        visit(module, [])


def test_the_check_sees_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from .a import f\n")
    assert relative_imports(tmp_path / "a.py") == {"b"}
    assert relative_imports(tmp_path / "b.py") == {"a"}
