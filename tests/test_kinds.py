"""The accelerator layer kinds as vertical slices (issue 44): every kind of the registry (generator/kinds/) implements
the whole :class:`generator.kinds.base.LayerKind` interface, its cores compute what a plain loop computes, and no
code outside generator/kinds/ branches on a Macro layer's kind name."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from generator.ir.graph import GraphError, MacroAttrs
from generator.kinds import KINDS, kind_of
from generator.kinds.base import LayerKind

ROOT = Path(__file__).resolve().parent.parent

#: code that may compare a ``kind`` with a Macro kind's name, and why
ALLOWED = {
    "generator/kinds/": "the registry itself",
    "generator/ir/passes/": "the graph passes that create the Macro nodes (below the registry: they pattern-match "
                            "the kinds they build)",
    "generator/eval/fuzz_space.py": "the fuzzer's case kinds (conv, chain, emul, ...), not Macro kinds",
}


def kind_branches(src: str) -> list[int]:
    """Line numbers of the comparisons of a ``kind`` (a name ``kind`` or an attribute ``.kind``) with a string of
    the registry's kind names (``m.kind == "conv"``, ``L.kind in ("copy", "emul")``, ``kind != "emul"``). Other
    "kinds" compared with other strings (darknet sections ``l.kind == "convolutional"``, libclang cursor kinds,
    numpy dtype kinds, path kinds) are not Macro kinds and not reported."""
    out = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left] + list(node.comparators)
        on_kind = any(isinstance(s, ast.Name) and s.id == "kind" or isinstance(s, ast.Attribute) and s.attr == "kind"
                      for s in sides)
        names = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
        if on_kind and names & set(KINDS):
            out.append(node.lineno)
    return out


def test_the_branch_scanner_finds_kind_branches():
    src = ('if m.kind == "conv": pass\nif L.kind in ("copy", "emul"): pass\nok = kind != "emul"\n'
           'if l.kind == "convolutional": pass\nif c.kind == K.CALL_EXPR: pass\n')
    assert kind_branches(src) == [1, 2, 3]


def test_no_kind_branch_outside_the_kinds():
    bad = []
    for f in sorted((ROOT / "generator").rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        if "__pycache__" in rel or any(rel.startswith(a) for a in ALLOWED):
            continue
        bad += [f"{rel}:{line}" for line in kind_branches(f.read_text())]
    assert not bad, "branches on a Macro kind's name (dispatch through generator.kinds.kind_of):\n" + "\n".join(bad)


def test_every_kind_implements_the_interface():
    abstract = {name for name, v in vars(LayerKind).items() if getattr(v, "__isabstractmethod__", False)}
    assert len(abstract) >= 15
    assert set(KINDS) == {"conv", "copy", "emul"}
    for name, kind in KINDS.items():
        cls = type(kind)
        assert kind.name == name and isinstance(kind, LayerKind) and not inspect.isabstract(cls), name
        missing = sorted(a for a in abstract if getattr(cls, a) is getattr(LayerKind, a))
        assert not missing, f"{name}: {missing}"
        assert isinstance(kind.has_weights, bool) and kind.operands in (1, 2), name
        assert kind.pad_fill in ("zero_point", "min", None), name
        assert kind_of(name) is kind and kind_of(MacroAttrs(kind=name)) is kind


def test_kind_of_names_an_unknown_kind():
    with pytest.raises(GraphError, match="'depthwise' is not one of conv, copy, emul"):
        kind_of(MacroAttrs(kind="depthwise"))


def _loop_conv(x, w, stride, pads, pad_value):
    """Plain-loop convolution (cross-correlation), int64 or float64 [OC, OH, OW]."""
    pt, pl, pb, pr = pads
    xp = np.full((x.shape[0], x.shape[1] + pt + pb, x.shape[2] + pl + pr), pad_value, np.float64)
    xp[:, pt:pt + x.shape[1], pl:pl + x.shape[2]] = x
    oc, _, k, _ = w.shape
    oh, ow = (xp.shape[1] - k) // stride + 1, (xp.shape[2] - k) // stride + 1
    out = np.zeros((oc, oh, ow))
    for o in range(oc):
        for y in range(oh):
            for xx in range(ow):
                out[o, y, xx] = np.sum(xp[:, y * stride:y * stride + k, xx * stride:xx * stride + k] * w[o])
    return out


@pytest.mark.parametrize("name", sorted(KINDS))
def test_cores_against_plain_loops(name):
    """Each kind's integer core minus its zero-point terms is its float core on the zero-point-free values, and both
    equal a plain-loop computation of the layer (a 3x3 stride-2 convolution with asymmetric padding, a copy, a
    product with a broadcast factor); the accumulator bound holds on extreme and random inputs."""
    rng = np.random.default_rng(7)
    kind = kind_of(name)
    m = MacroAttrs(kind=name, kernel=3, stride=2, pads=(1, 0, 1, 2)) if name == "conv" else MacroAttrs(kind=name)
    x = rng.integers(-128, 128, (4, 7, 6))
    xb = rng.integers(-128, 128, (4, 1, 1))
    W = rng.integers(-127, 128, (5, 4, 3, 3)) if kind.has_weights else None
    za, zb, oc = 3, -5, 5 if kind.has_weights else 4
    acc = kind.int_acc(m, x, xb, W, za, zb)
    shifted = acc - za * kind.zp_terms(W, oc)[:, None, None]
    flt = kind.float_core(m, (x - za).astype(np.float64), (xb - zb).astype(np.float64),
                          None if W is None else W.astype(np.float64), np.zeros(oc))
    want = {"conv": lambda: _loop_conv(x - za, W, 2, (1, 0, 1, 2), 0),
            "copy": lambda: x - za, "emul": lambda: (x - za) * (xb - zb)}[name]()
    assert acc.dtype == np.int64 and np.array_equal(shifted, want) and np.array_equal(flt, want)
    B = rng.integers(-1000, 1000, oc) if kind.has_weights else -za * kind.zp_terms(None, oc)   # (the real bias)
    bound = kind.acc_bound(W, B, 128, za, zb, oc)
    for xv in (np.full_like(x, -128), np.full_like(x, 127), x):
        for bv in (np.full_like(xb, -128), xb):
            assert np.all(np.abs(kind.int_acc(m, xv, bv, W, za, zb) + B[:, None, None]) <= bound[:, None, None])


def test_kinds_import_only_spec_ir_and_numpy():
    """generator/kinds/ sits right above generator/ir/ (tests/test_packages.py): besides the standard library it
    imports only generator.spec, generator.ir, itself and numpy."""
    bad = []
    for f in sorted((ROOT / "generator" / "kinds").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            bad += [f"{f.name}: {n}" for n in names if n.split(".")[0] not in ("abc", "__future__", "numpy")
                    and not n.startswith(("generator.spec", "generator.ir", "generator.kinds"))]
    assert not bad, bad
