"""The repository layout rules of the project (issue 13), checked on the source as it is.

* no function over 80 lines and no module over 450 lines (generator/, host/, tests/, tasks.py; the RTL's files: no
  file over 450 lines, no SystemVerilog ``function`` / ``task`` over 80); every file of hls_templates/ (the kernel's
  headers, the .j2 templates, the .tcl, the block design's .v) within 400 lines, no C++ function over 80 lines in the
  kernel's headers and the .h / .cpp templates (a brace scanner, :func:`c_functions`, checked on an example here);
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
MAX_KERNEL_FILE_LINES = 400   # hls_templates/: every file (issue 44)


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


def test_test_module_names_are_unique():
    """pytest imports the test folders' modules (no packages) by basename: two ``test_x.py`` in different folders
    make the second an "import file mismatch" error on a clean clone."""
    seen: dict = {}
    for f in sorted((ROOT / "tests").rglob("*.py")):
        if "__pycache__" not in f.parts and f.name != "__init__.py":
            seen.setdefault(f.name, []).append(str(f.relative_to(ROOT)))
    dup = {k: v for k, v in seen.items() if len(v) > 1}
    assert not dup, f"test modules sharing a basename: {dup}"


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


def test_hls_template_files_within_400_lines():
    """hls_templates/: every file (the kernel's headers, the .j2 templates, the .tcl, bd/*.v) within 400 lines."""
    files = sorted(f for f in (ROOT / "hls_templates").rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    kinds = {f.name.split(".", 1)[1] for f in files}
    assert {"h", "cpp.j2", "h.j2", "tcl.j2", "v"} <= kinds, kinds
    long = [f"{f.relative_to(ROOT)}: {f.read_text().count(chr(10))} lines (limit {MAX_KERNEL_FILE_LINES})"
            for f in files if f.read_text().count("\n") > MAX_KERNEL_FILE_LINES]
    assert not long, "\n".join(long)


def _long_routines(files, scan) -> list[str]:
    out = []
    for f in files:
        for name, first, last in scan(f):
            if last - first + 1 > MAX_FUNCTION_LINES:
                out.append(f"{f.relative_to(ROOT)}:{first} {name}: {last - first + 1} lines "
                           f"(function limit {MAX_FUNCTION_LINES})")
    return out


def test_no_long_cpp_functions_in_the_kernel():
    """The kernel's headers (hls_templates/kernel/*.h) and the C++ templates (*.h.j2, *.cpp.j2, *.cpp): no function
    over 80 lines."""
    t = ROOT / "hls_templates"
    files = sorted(t.rglob("*.h")) + sorted(t.rglob("*.cpp")) + sorted(t.rglob("*.h.j2")) + sorted(t.rglob("*.cpp.j2"))
    n = sum(len(c_functions(f.read_text(), f.suffix == ".j2")) for f in files)
    assert n > 60, f"the scanner found only {n} functions in {len(files)} files"
    long = _long_routines(files, lambda f: c_functions(f.read_text(), jinja=f.suffix == ".j2"))
    assert not long, "\n".join(long)


def test_no_long_sv_functions_or_tasks():
    """rtl/*.sv and the rtl/templates' SystemVerilog: no ``function`` / ``task`` over 80 lines."""
    files = sorted((ROOT / "rtl").glob("*.sv")) + sorted((ROOT / "rtl" / "templates").glob("*.sv.j2"))
    assert sum(len(sv_routines(f.read_text())) for f in files) > 3
    long = _long_routines(files, lambda f: sv_routines(f.read_text()))
    assert not long, "\n".join(long)


_C_EXAMPLE = """\
// a { comment } with braces
#define BODY(x) { return x; }
#if 0
#endif
namespace ns {
struct S {
    int v = 1;
    static int get(int a = 2) { return a; }
public:
    S() : v(3) {}
};
}
static const int T[] = {1, 2};
template <int N>
static inline int two(
    int a, const char *s = "} {",
    char c = '{') {
    auto f = [&](int y) { return y + a; };
    /* } */
    return f(N) + (s[0] == c);
}
void {{ top }}_load(int q) {
{% for r in regs %}
    q += {{ r }};
{% endfor %}
}
"""


def test_c_function_scanner_on_an_example():
    """The C++ scanner: names and line spans of every definition in a small source mixing what the kernel holds
    (comments, literals and macros with braces, a namespace, a struct's methods, an initializer, a template with a
    multi-line header, a lambda, Jinja tags)."""
    assert c_functions(_C_EXAMPLE, jinja=True) == [("get", 8, 8), ("S", 10, 10), ("two", 15, 21),
                                                   ("{{ top }}_load", 22, 26)]
    with pytest.raises(ValueError, match="unbalanced"):
        c_functions("void f() {\n#if A\n  if (a) {\n#endif\n}\n")
    with pytest.raises(ValueError, match="unterminated"):
        c_functions("void f() { /* }\n")


def test_sv_routine_scanner_on_an_example():
    src = ("module m;\n  // function fake(); endfunction\n  function automatic logic [3:0] f(input logic a);\n"
           "    return 4'b1;\n  endfunction\n  task t;\n    $display(\"task x\");\n  endtask\nendmodule\n")
    assert sv_routines(src) == [("f", 3, 5), ("t", 6, 8)]
    with pytest.raises(ValueError, match="without endtask"):
        sv_routines("task t;\n")


# ---------------------------------------------------------------------------------------------- C++ / SV scanners
_ACCESS_RE = re.compile(r"^\s*(?:(?:public|private|protected)\s*:\s*)+")
_SCOPE_RE = re.compile(r"^(?:template\s*<[^{]*>\s*)?(?:typedef\s+)?(?:namespace|struct|class|union|enum|extern)\b")
_FUNC_END_RE = re.compile(r"\)\s*(?:const|volatile|noexcept|override|final|&&?|->\s*[\w:<>, *&]+|\s)*$")
_C_CLOSERS = {"//": ("\n", " "), "/*": ("*/", " "), '"': ('"', " "), "'": ("'", " ")}
_JINJA_CLOSERS = {"{{": ("}}", "_"), "{%": ("%}", " "), "{#": ("#}", " ")}


def _fill(text: str, a: int, b: int, ch: str = " ") -> str:
    """text[a:b] with every character but newlines replaced by ``ch`` (offsets and line numbers kept)."""
    return re.sub(r"[^\n]", ch, text[a:b])


def _literal_end(text: str, opener: str, close: str, j: int) -> int:
    """Index just past the ``close`` of the comment / literal / tag whose body starts at ``j`` (a quote escaped by
    an odd run of backslashes does not close a literal); ValueError when there is none."""
    while True:
        k = text.find(close, j)
        if k < 0:
            if opener == "//":
                return len(text)
            raise ValueError(f"unterminated {opener!r} at offset {j - len(opener)}")
        if opener in ('"', "'") and (len(text[j:k]) - len(text[j:k].rstrip("\\"))) % 2:
            j = k + 1
            continue
        return k if opener == "//" else k + len(close)


def code_only(text: str, jinja: bool = False, sv: bool = False) -> str:
    """``text`` (C / C++, or SystemVerilog when ``sv``) of the same length and line breaks with comments, string
    (C: and character) literals blanked, C preprocessor lines (with their continuations) blanked, and with
    ``jinja`` the Jinja tags: ``{{ expr }}`` filled with ``_`` (an identifier to the scanner: ``{{ top }}_load`` is a
    name), ``{% %}`` and ``{# #}`` blanked. Raises ValueError on an unterminated comment, literal or tag."""
    closers = {"//": _C_CLOSERS["//"], "/*": _C_CLOSERS["/*"], '"': _C_CLOSERS['"']} if sv else dict(_C_CLOSERS)
    if jinja:
        closers = {**_JINJA_CLOSERS, **closers}
    out, i, line_start = [], 0, True
    while i < len(text):
        if line_start and text[i] == "#" and not sv:
            end = i
            while True:   # the directive and its backslash continuations
                end = text.find("\n", end + 1)
                if end < 0 or text[end - 1] != "\\":
                    end = len(text) if end < 0 else end
                    break
            out.append(_fill(text, i, end))
            i = end
            continue
        opener = next((o for o in closers if text.startswith(o, i)), None)
        if opener is None:
            line_start = text[i] == "\n" or (line_start and text[i] in " \t")
            out.append(text[i])
            i += 1
            continue
        end = _literal_end(text, opener, closers[opener][0], i + len(opener))
        out.append(_fill(text, i, end, closers[opener][1]))
        line_start = False
        i = end
    return "".join(out)


def _match_brace(code: str, i: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``code[i]``; ValueError when there is none."""
    depth = 0
    for k in range(i, len(code)):
        depth += {"{": 1, "}": -1}.get(code[k], 0)
        if depth == 0:
            return k
    raise ValueError(f"unbalanced '{{' at offset {i}")


def _function_name(head: str) -> re.Match | None:
    """The name (group 1) before the first top-level parameter list of a function header, operators included."""
    depth = 0
    for k, c in enumerate(head):
        if c == "(" and depth == 0:
            return re.search(r"(operator\s*[^\s(]+|~?\w+)\s*$", head[:k])
        depth += {"(": 1, ")": -1}.get(c, 0)
    return None


def c_functions(text: str, jinja: bool = False) -> list[tuple[str, int, int]]:
    """The function definitions of C / C++ source ``text`` (``jinja``: a Jinja template of it) as (name, first line,
    last line), 1-based, from the line of the function's name to its closing brace: functions in namespaces,
    structs, classes and ``extern "C"`` blocks included, lambdas counted in the function holding them. A brace
    scanner on :func:`code_only`'s output, not a compiler: a ``{`` opens a function body when the text since the
    previous ``;``, ``{`` or ``}`` of its scope ends with a parameter list (and qualifiers); any other ``{`` opens a
    scope (namespace, struct, ...) or an initializer. Raises ValueError on unbalanced braces."""
    code = code_only(text, jinja)
    if code.count("{") != code.count("}"):
        raise ValueError(f"unbalanced braces: {code.count('{')} '{{', {code.count('}')} '}}'")
    found = []

    def scan(lo: int, hi: int):
        i = start = lo
        while i < hi:
            if code[i] in ";}":
                start = i + 1
            elif code[i] == "{":
                raw = code[start:i]
                head = _ACCESS_RE.sub("", raw).strip()
                end = _match_brace(code, i)
                if _SCOPE_RE.match(head) and "=" not in head and not head.endswith(")"):
                    scan(i + 1, end)
                elif _FUNC_END_RE.search(head):
                    m = _function_name(raw)
                    at = start + (m.start(1) if m else len(raw) - len(raw.lstrip()))
                    name = text[at:start + m.end(1)] if m else "?"
                    found.append((name, code.count("\n", 0, at) + 1, code.count("\n", 0, end) + 1))
                i, start = end, end + 1
            i += 1

    scan(0, len(code))
    return found


def sv_routines(text: str) -> list[tuple[str, int, int]]:
    """The ``function`` / ``task`` definitions of SystemVerilog source ``text`` as (name, first line, last line),
    1-based, from the keyword to its ``endfunction`` / ``endtask``; comments and strings ignored. Raises ValueError
    on a routine without its end."""
    code = code_only(text, sv=True)
    found = []
    for m in re.finditer(r"\b(function|task)\b", code):
        end = re.compile(rf"\bend{m.group(1)}\b").search(code, m.end())
        if end is None:
            raise ValueError(f"{m.group(1)} at line {code.count(chr(10), 0, m.start()) + 1} without end{m.group(1)}")
        name = re.match(r"[^(;]*?(\w+)\s*[(;]", code[m.end():end.start()], re.S)
        found.append((name.group(1) if name else "?", code.count("\n", 0, m.start()) + 1,
                      code.count("\n", 0, end.start()) + 1))
    return found


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


_SRC_PATH_RE = re.compile(r"\b((?:generator|host|rtl|hls_templates|boards|tests)/[\w./-]*\w\.(?:py|sv|v|h|j2|tcl|yaml))\b")
_SRC_MODULE_RE = re.compile(r"\b(generator(?:\.[a-z_]\w*)+)")


def test_paths_named_in_kernel_and_rtl_sources_exist():
    """Every repository file path (``generator/spec/isa.py``, ``rtl/store.sv``, ...) and generator module
    (``generator.spec.isa``, a trailing attribute allowed) the kernel, the templates, bd/*.v and rtl/ name in their
    comments exists (issue 44: comments named ``generator/isa.py`` and ``generator/hls.py`` long after they moved)."""
    files = [f for d in ("hls_templates", "rtl") for f in (ROOT / d).rglob("*") if f.is_file()
             and "__pycache__" not in f.parts]
    stale = set()
    for f in files:
        text = f.read_text()
        stale |= {f"{f.relative_to(ROOT)}: {p}" for p in _SRC_PATH_RE.findall(text) if not (ROOT / p).exists()}
        for m in _SRC_MODULE_RE.findall(text):
            parts = m.split(".")
            if not any((ROOT / "/".join(parts[:k])).with_suffix(".py").exists() or (ROOT / "/".join(parts[:k])).is_dir()
                       for k in (len(parts), len(parts) - 1) if k > 1):
                stale.add(f"{f.relative_to(ROOT)}: {m}")
    assert not stale, "\n".join(sorted(stale))

