"""The repository layout rules of the project (issue 13), checked on the source as it is.

* no function over 80 lines and no module over 450 lines (generator/, host/, tests/, tasks.py; the RTL's files and
  the HLS kernel's headers and templates: no file over 450 lines);
* no import cycle between the generator's modules (module-level and function-level imports alike);
* ``host/`` never imports the generator, onnx or onnxruntime (it runs on a PYNQ image without them);
* README's layout table names every top-level folder and every generator subpackage that exists, and nothing
  that does not; every repository path written in backticks in README.md and docs/*.md exists.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450


def _sources():
    files = list((ROOT / "generator").rglob("*.py")) + list((ROOT / "host").rglob("*.py"))
    files += list((ROOT / "tests").rglob("*.py")) + [ROOT / "tasks.py"]
    return sorted(f for f in files if "__pycache__" not in f.parts)


def test_no_long_modules_or_functions():
    long = []
    for f in _sources():
        src = f.read_text()
        rel = f.relative_to(ROOT)
        if src.count("\n") > MAX_MODULE_LINES:
            long.append(f"{rel}: {src.count(chr(10))} lines (module limit {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{rel}:{node.lineno} {node.name}: {n} lines (function limit {MAX_FUNCTION_LINES})")
    assert not long, "\n".join(long)


def test_rtl_one_unit_per_file():
    """rtl/: every file under the module limit, one module per file, and accel_top.sv only instantiates and wires
    (no always block: all logic sits in the units)."""
    bad = []
    for f in sorted((ROOT / "rtl").glob("*.sv")):
        src = f.read_text()
        if src.count("\n") > MAX_MODULE_LINES:
            bad.append(f"{f.name}: {src.count(chr(10))} lines")
        if len(re.findall(r"^\s*module\s+\w+", src, re.M)) != 1:
            bad.append(f"{f.name}: not exactly one module")
    top = (ROOT / "rtl" / "accel_top.sv").read_text()
    if re.search(r"\balways(_ff|_comb|_latch)?\b", top):
        bad.append("accel_top.sv: holds logic (an always block)")
    assert not bad, "\n".join(bad)


def test_hls_kernel_files_under_the_module_limit():
    """hls_templates/: every static kernel header and every template under the module limit (the kernel is one
    header per module's operations, accel_kernel_*.h, besides accel_kernel.h)."""
    files = sorted((ROOT / "hls_templates" / "kernel").glob("*.h")) + sorted((ROOT / "hls_templates").glob("*.j2"))
    assert len(files) > 8
    long = [f"{f.relative_to(ROOT)}: {f.read_text().count(chr(10))} lines" for f in files
            if f.read_text().count("\n") > MAX_MODULE_LINES]
    assert not long, "\n".join(long)


def _module_name(f: Path) -> str:
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph(package: str = "generator") -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (``from a.b import c`` counts as a.b.c when that is a
    module, else a.b; relative imports resolved)."""
    files = {_module_name(f): f for f in (ROOT / package).rglob("*.py") if "__pycache__" not in f.parts}
    graph = {}
    for mod, f in files.items():
        is_pkg = f.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for n in names:
                while n and n not in files:
                    n = n.rpartition(".")[0]
                if n and n != mod and n != package:
                    deps.add(n)
        graph[mod] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d)
                if c:
                    return c
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def test_find_cycle_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_in_generator():
    graph = import_graph("generator")
    assert len(graph) > 30
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_host_is_self_contained():
    bad = []
    for f in (ROOT / "host").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            bad += [f"{f.relative_to(ROOT)}: imports {m}" for m in mods
                    if m.split(".")[0] in ("generator", "onnx", "onnxruntime", "tasks")]
    assert not bad, "\n".join(bad)


def _layout_table() -> list[str]:
    text = (ROOT / "README.md").read_text()
    sec = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", sec, re.M)


def test_readme_layout_table_matches_tree():
    listed = {p.rstrip("/") for p in _layout_table()}
    ignore = {".git", ".venv", "build", "out", ".ci", "__pycache__", ".pytest_cache"}
    top = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in ignore and not p.name.endswith(".egg-info")
           and not p.name.startswith(".")}
    subpkgs = {f"generator/{p.name}" for p in (ROOT / "generator").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    missing = (top | subpkgs) - listed
    assert not missing, f"folders missing from README's layout table: {sorted(missing)}"
    stale = {p for p in listed if not (ROOT / p.split(" ")[0]).exists()}
    assert not stale, f"README's layout table names paths that do not exist: {sorted(stale)}"


_PATH_RE = re.compile(r"`((?:generator|host|rtl|tests|hls_templates|boards|notebooks|overlay|docs)/[\w./-]*)`")


@pytest.mark.parametrize("doc", ["README.md"] + sorted(p.relative_to(ROOT).as_posix()
                                                      for p in (ROOT / "docs").glob("*.md")))
def test_documented_paths_exist(doc):
    text = (ROOT / doc).read_text()
    missing = sorted({p for p in _PATH_RE.findall(text) if "<" not in p and "*" not in p
                      and not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"{doc} names paths that do not exist: {missing}"
