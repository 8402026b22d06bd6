"""One parsed source file of the HLS rule checker: its tokens and its ``#pragma HLS`` lines (outside the
preprocessor's skipped ranges)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from generator.backends.hls.lint.clang_ast import skipped_ranges


@dataclass
class Pragma:
    """One ``#pragma HLS <directive> <args>`` line: byte offset and line number in the file."""
    directive: str
    args: list
    offset: int
    line: int


class SourceFile:
    """The tokens (``tokens``, their byte ``offsets``) and HLS pragmas (``pragmas``) of ``path`` in the
    translation unit ``tu``."""

    def __init__(self, tu, path: Path):
        self.tu, self.path = tu, path
        self.name = str(path)
        f = ci.File.from_name(tu, self.name)
        size = path.stat().st_size
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, f, 0),
                                            ci.SourceLocation.from_offset(tu, f, size))
        self.tokens = list(tu.get_tokens(extent=rng))
        self.offsets = [t.location.offset for t in self.tokens]
        skipped = skipped_ranges(tu, path)
        self.pragmas = self._pragmas(skipped)

    def op_location(self, lhs, op) -> tuple[int, int] | None:
        """(line, column) of the operator token ``op`` right after the expression ``lhs``, if it is there (not
        inside a macro expansion)."""
        lhs_end = lhs.extent.end
        if lhs_end.file is None or lhs_end.file.name != self.name:
            return None
        i = bisect.bisect_left(self.offsets, lhs_end.offset)
        for t in self.tokens[i:i + 2]:
            if t.spelling == op:
                return t.location.line, t.location.column
        return None

    def _pragmas(self, skipped) -> list[Pragma]:
        out = []
        toks = self.tokens
        for i, t in enumerate(toks):
            if t.spelling != "#" or i + 2 >= len(toks):
                continue
            line = t.location.line
            if toks[i + 1].spelling != "pragma" or toks[i + 1].location.line != line:
                continue
            if toks[i + 2].spelling.upper() != "HLS" or toks[i + 2].location.line != line:
                continue
            off = t.location.offset
            if any(a <= off < b for a, b in skipped):
                continue
            words = []
            j = i + 3
            while j < len(toks) and toks[j].location.line == line:
                words.append(toks[j].spelling)
                j += 1
            if words:
                out.append(Pragma(words[0].upper(), words[1:], off, line))
        return out

