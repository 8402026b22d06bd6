"""Running the HLS rule checker: parse each source with libclang (:func:`clang_args`), check it, and the command
line (``python -m generator.backends.hls.lint``)."""
from __future__ import annotations

import argparse
import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import clang.cindex as ci

from generator.backends.hls.lint.analysis import Analysis, LoopRecord
from generator.backends.hls.lint.checker import Checker, Violation
from generator.backends.hls.lint.source import SourceFile
from generator.backends.hls.lint.stubs import write_stubs


#: the command line's description (the first sentence of the package docstring)
DESCRIPTION = ("Checker of the Vitis HLS coding rules the kernel must follow, on the C++ as clang parses it "
               "(libclang), not on regular expressions.")


class LintError(RuntimeError):
    """The sources do not parse (libclang error diagnostics), or a source is missing."""


@functools.lru_cache(maxsize=None)
def compiler_include() -> list[str]:
    """The wheel's libclang has no resource headers (stddef.h, ...): borrow the installed gcc's."""
    for cc in ("g++", "gcc"):
        exe = shutil.which(cc)
        if exe:
            try:
                d = subprocess.run([exe, "-print-file-name=include"], capture_output=True, text=True,
                                   timeout=10).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if d and Path(d, "stddef.h").is_file():
                return ("-isystem", d)
    return ()


def clang_args(include_dirs, defines, stub_dir) -> list[str]:
    """libclang arguments: C++14, the compiler's headers, the stubs in ``stub_dir`` with ``__SYNTHESIS__`` (if
    not None), then ``include_dirs`` and ``defines``."""
    args = ["-x", "c++", "-std=c++14", *compiler_include()]
    if stub_dir is not None:
        args += ["-D__SYNTHESIS__", f"-I{stub_dir}"]
    args += [f"-I{d}" for d in include_dirs]
    args += [f"-D{d}" for d in defines]
    return args


def check(sources: list[Path], include_dirs=(), defines=(), stubs: bool = True) -> list[Violation]:
    """Check ``sources`` (C++ files) against the rules of the module docstring; returns the violations sorted by
    file and line. ``include_dirs`` / ``defines`` (``"NAME"`` or ``"NAME=V"``) are passed to the parser; with
    ``stubs`` (default) the stub headers and ``__SYNTHESIS__`` come first, else the real headers must be on
    ``include_dirs``. Raises LintError when a source is missing or has parse errors."""
    out: list[Violation] = []
    index = ci.Index.create()
    with tempfile.TemporaryDirectory(prefix="hls_lint_") as tmp:
        stub_dir = write_stubs(tmp) if stubs else None
        args = clang_args([str(d) for d in include_dirs], list(defines), stub_dir)
        for src in sources:
            src = Path(src).resolve()
            tu = _parse(index, src, args)
            out += Checker(SourceFile(tu, src)).run()
            out += Analysis(tu, src).run().violations
    return sorted(set(out), key=lambda v: (v.file, v.line, v.rule, v.message))


def _parse(index, src: Path, args):
    if not src.is_file():
        raise LintError(f"{src}: no such file")
    tu = index.parse(str(src), args=args, options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errs = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errs:
        d = errs[0]
        loc = f"{d.location.file}:{d.location.line}" if d.location.file else str(src)
        raise LintError(f"{loc}: {d.spelling} ({len(errs)} parse error(s))")
    return tu


def analyse_folder(folder, include_dirs=(), defines=()) -> tuple[list[LoopRecord], list[Violation]]:
    """The port analysis of a rendered kernel folder (its ``*.cpp`` but the testbenches, each with the headers it
    includes, on the synthesis path with the stub headers): (every pipelined loop reachable from a top, as
    :class:`generator.backends.hls.lint.analysis.LoopRecord`, in source order; the violations of the port rules).
    Raises LintError when a source does not parse or the folder has none."""
    folder = Path(folder).resolve()
    srcs = sorted(q for q in folder.glob("*.cpp") if not _is_testbench(q))
    if not srcs:
        raise LintError(f"{folder}: no kernel source (*.cpp)")
    loops, vs = [], set()
    index = ci.Index.create()
    with tempfile.TemporaryDirectory(prefix="hls_ports_") as tmp:
        args = clang_args([str(folder), *map(str, include_dirs)], list(defines), write_stubs(tmp))
        for src in srcs:
            an = Analysis(_parse(index, src, args), src).run()
            loops += an.loops
            vs |= an.violations
    return sorted(loops, key=lambda r: (r.file, r.line, r.top)), sorted(vs, key=lambda v: (v.file, v.line, v.rule))


def _is_testbench(p: Path) -> bool:
    n = p.stem.lower()
    return n.startswith("tb") or n.endswith("_tb") or "test" in n


def main(argv=None) -> int:
    """``python -m generator.backends.hls.lint DIR...``: check each rendered kernel folder; exit status 1 on any
    violation (one line each, ``file:line: rule: message``), 0 when clean."""
    ap = argparse.ArgumentParser(prog="python -m generator.backends.hls.lint",
                                 description=DESCRIPTION)
    ap.add_argument("paths", nargs="+", help="folders (their *.cpp and *_kernel*.h) or C++ files")
    ap.add_argument("-I", dest="include", action="append", default=[], help="include folder")
    ap.add_argument("-D", dest="define", action="append", default=[], help="macro NAME or NAME=VALUE")
    ap.add_argument("--real-headers", action="store_true",
                    help="parse with the headers on -I instead of the stubs (no __SYNTHESIS__)")
    ap.add_argument("--loops", action="store_true",
                    help="print each folder's pipelined loops (requested and analysed II, the memory at the bound, "
                         "depth) before the violations")
    a = ap.parse_args(argv)
    if a.loops:
        try:
            for p in (Path(x) for x in a.paths if Path(x).is_dir()):
                print(f"{p}:\n| loop | function | requested II | analysed II | limited by | depth |\n|---|---|---:|---:|---|---:|")
                for lp in analyse_folder(p)[0]:
                    lim = f"{lp.limit} ({lp.storage}: {lp.reads} R, {lp.writes} W)" if lp.limit else ""
                    print(f"| {lp.label} | {lp.function} | {lp.requested_ii} | {lp.ii} | {lim} | {lp.depth} |")
        except LintError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    sources, incs = [], list(a.include)
    for p in map(Path, a.paths):
        if p.is_dir():
            # the top functions (*.cpp) and the kernel they include (*_kernel.h: its functions are only checked
            # in their own file, so the header is a source too)
            sources += sorted(q for q in p.glob("*.cpp") if not _is_testbench(q))
            sources += sorted(p.glob("*_kernel*.h"))
            incs.append(str(p))
        else:
            sources.append(p)
            incs.append(str(p.parent))
    try:
        vs = check(sources, incs, a.define, stubs=not a.real_headers)
    except LintError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for v in vs:
        print(v)
    return 1 if vs else 0
