"""Per-layer mixed precision (generator/quant/precision.py, auto_precision.py): the --precision spec, the rules that
give each DDR region one precision, the automatic choice, and the compiled program of a real detector: the int16
layers' instructions in int16, the references bit-exact with the golden simulator, the latency model's price."""
from __future__ import annotations

import numpy as np
import pytest

from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import load_onnx
from generator.ir import passes
from generator.quant.auto_precision import choose, free_int16, worst_sqnr
from generator.quant.precision import layer_bits, parse_precision, region_bits, widened_layers
from generator.quant.quantize import QuantConfig, QuantError, calibrate, quantize
from helpers import compiled_model, run_both


def test_spec_parses_every_form_and_names_a_bad_item():
    s = parse_precision("auto:22, int8, /model.22/*=int16, conv_0=int8")
    assert (s.auto, s.target_db, s.default) == (True, 22.0, 8)
    assert s.overrides == (("/model.22/*", 16), ("conv_0", 8))
    assert parse_precision(None).uniform and parse_precision("").text == ""
    assert parse_precision("int16").text == "int16" and not parse_precision("auto").uniform
    for bad, needle in (("int12", "'int12'"), ("auto:x", "auto:x"), ("=int16", "no layer pattern"),
                        ("conv_*=fp16", "'fp16'"), ("auto:0", "SQNR target")):
        with pytest.raises(QuantError, match=needle.replace("*", r"\*")):
            parse_precision(bad)


@pytest.fixture(scope="module")
def net():
    """conv a -> (conv b, conv c) -> concat -> conv d; e = conv(a * sigmoid(conv(a))) (a product); outputs d, e."""
    b = Builder([1, 3, 12, 12], seed=5)
    a = b.leaky(b.conv("x", 8, k=3))
    cat = b.concat(b.leaky(b.conv(a, 6, k=1)), b.leaky(b.conv(a, 4, k=3)))
    d = b.conv(cat, 5, k=1)
    gate = b.act(b.conv(a, 8, k=1), "Sigmoid")
    e = b.conv(b.op("Mul", [a, gate], [1, 8, 12, 12]), 4, k=1)
    g = passes.run_all(load_onnx(b.model([d, e])))
    rng = np.random.default_rng(2)
    xs = [rng.random((1, 3, 12, 12)).astype(np.float32) for _ in range(3)]
    return g, calibrate(g, xs, progress=False), xs


def _layer(g, kind=None, reads=None):
    for n in g.macro_nodes():
        if (kind is None or n.attrs["macro"].kind == kind) and (reads is None or reads in n.inputs):
            return n


def test_regions_take_their_widest_writer_and_products_one_precision(net):
    g, _, _ = net
    names = [n.name for n in g.macro_nodes()]
    # one writer of the concatenation in int16: the whole concatenated region is int16 (its other writer too)
    cat_writer = next(n for n in g.macro_nodes() if g.tensors[n.outputs[0]].region != n.outputs[0]
                      and n.attrs["macro"].kind == "conv")
    rb = region_bits(g, {cat_writer.name: 16}, 8)
    reg = g.tensors[cat_writer.outputs[0]].region
    assert rb[reg] == 16 and sum(b == 16 for b in rb.values()) == 1
    assert rb[g.tensors[g.inputs[0]].region] == 8
    # the other writers of that region were asked int8 and are widened: named, with the region
    others = [n.name for n in g.macro_nodes() if n.name != cat_writer.name
              and any(g.tensors[o].region == reg for o in n.outputs)]
    asked = {n.name: 8 for n in g.macro_nodes()} | {cat_writer.name: 16}
    assert others and widened_layers(g, asked, rb) == [(k, reg) for k in others]
    assert widened_layers(g, asked | {k: 16 for k in others}, rb) == []
    # the product's gate in int16 widens its other factor (the first conv's output) to int16
    emul = _layer(g, "emul")
    gate_writer = next(n for n in g.macro_nodes() if emul.inputs[1] in n.outputs)
    rb = region_bits(g, {gate_writer.name: 16}, 8)
    assert {rb[g.tensors[i].region] for i in emul.inputs} == {16}
    # the spec's overrides apply by shell pattern, later items win; an unmatched pattern is refused by name
    lb = layer_bits(g, parse_precision(f"int16,{names[0]}=int8"), 8)
    assert lb[names[0]] == 8 and all(lb[k] == 16 for k in names[1:])
    with pytest.raises(QuantError, match="nomatch"):
        layer_bits(g, parse_precision("nomatch*=int16"), 8)


def test_auto_chooses_until_the_target_and_the_heads_first(net):
    g, ranges, xs = net
    gq = quantize(g, ranges, QuantConfig.from_mode("int8-asym"), 48)
    heads = free_int16(gq)
    assert heads and all(not any(i in n.outputs for m in gq.macro_nodes() for i in m.inputs)
                         for n in gq.macro_nodes() if n.name in heads)
    base = worst_sqnr(g, gq, xs[:2])
    target = min(base.values()) + 6.0      # 6 dB above the int8 network's lowest layer
    chosen, rep = choose(g, gq, xs, target)
    assert set(heads) <= set(chosen) and len(chosen) > len(heads)
    after = worst_sqnr(g, gq, xs[:2], exact=chosen)
    assert rep["lowest_db"] == pytest.approx(min(after.values()), abs=0.01)
    assert min(after.values()) > min(base.values())
    assert choose(g, gq, xs, 1.0)[0] == heads   # a target int8 already meets: nothing beyond the free heads


def test_mixed_program_of_yolov4_tiny_runs_bit_exact_and_costs_cycles():
    """Two layers' outputs in int16 in the int8 YOLOv4-tiny: every instruction of theirs and of their readers at
    the right precision, the golden simulator's heads equal to the layer-level reference's, and the latency model
    pricing the int16 readers (more cycles than uniform int8)."""
    from generator.flows.pipeline import compile_model

    base = compiled_model()
    names = [n.name for n in base.qgraph.macro_nodes()]
    c = compile_model(progress=False, precision=f"{names[0]}=int16,{names[5]}=int16")
    g = c.qgraph
    wide = set(g.metadata["precision"]["int16_layers"])
    assert {names[0], names[5]} <= wide
    prog = c.program
    for L, (a, b) in zip(prog.layers, prog.ranges):
        for ins in prog.insns[a:b]:
            if ins.op in ("POST", "STORE"):
                assert ins.f["prec"] == (L.bits_out == 16), (L.name, ins.op)
            if ins.op == "COMPUTE" or (ins.op == "LOAD" and ins.f["buf"] < 2):
                assert ins.f["prec"] == (L.bits_in == 16), (L.name, ins.op)
    assert prog.cycles > base.program.cycles
    x = np.random.default_rng(1).random(g.tensors[g.inputs[0]].shape).astype(np.float32)
    gold, ref, _ = run_both(g, prog, x)   # (the layer-level reference: the stored, bias-corrected parameters)
    assert gold.keys() == ref.keys() and all(np.array_equal(gold[k], ref[k]) for k in gold)
