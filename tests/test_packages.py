"""The generator's packages in layers (issue 44): every import from one ``generator/`` subpackage into another
(module-level and function-level alike) goes down the order of :data:`LAYERS`, so the package graph is a DAG with
that order; the README's architecture section draws it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: lowest first; a package imports only packages before it (one layer may hold several packages that do not
#: import each other)
LAYERS = [("spec",), ("ir",), ("kinds",), ("frontend", "ref"), ("quant",), ("codegen",), ("backends",), ("exec",),
          ("estimate",), ("eval",), ("flows",)]


def package_imports() -> dict:
    """{(from package, to package): [file:line, ...]} over every import between two generator subpackages."""
    edges: dict = {}
    pkgs = {p.name for p in (ROOT / "generator").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    for f in sorted((ROOT / "generator").rglob("*.py")):
        rel = f.relative_to(ROOT).parts
        if "__pycache__" in rel or len(rel) < 3:
            continue
        src = rel[1]
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            for m in names:
                p = m.split(".")
                if p[0] == "generator" and len(p) > 1 and p[1] in pkgs and p[1] != src:
                    edges.setdefault((src, p[1]), []).append(f"{f.relative_to(ROOT)}:{node.lineno}")
    return edges


def test_every_package_has_a_layer():
    pkgs = {p.name for p in (ROOT / "generator").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    placed = {p for layer in LAYERS for p in layer}
    assert pkgs == placed, f"packages without a layer: {sorted(pkgs - placed)}; layers naming none: " \
                           f"{sorted(placed - pkgs)}"


def test_imports_only_go_down_the_layers():
    rank = {p: k for k, layer in enumerate(LAYERS) for p in layer}
    up = [f"{a} -> {b}: {', '.join(where[:3])}" for (a, b), where in sorted(package_imports().items())
          if rank[b] >= rank[a]]
    assert not up, "imports up (or across) the layers:\n" + "\n".join(up)


def test_the_package_graph_is_acyclic():
    edges = package_imports()
    graph: dict = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict = {}

    def visit(n, path):
        state[n] = 1
        for m in graph.get(n, ()):
            if state.get(m) == 1:
                return path + [n, m]
            if m not in state:
                cyc = visit(m, path + [n])
                if cyc:
                    return cyc
        state[n] = 2
        return None

    for n in graph:
        if n not in state:
            cyc = visit(n, [])
            assert cyc is None, "package cycle: " + " -> ".join(cyc)
