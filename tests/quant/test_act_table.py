"""POST's activation table (generator/spec/isa.py TABLE_ENTRIES): every exported form of each activation fuses into
its convolution, the quantized layer equals the independent integer reference bit for bit and stays close to
onnxruntime, and the table's own error against the float function is what rounding (int8) or linear interpolation
(int16) allows."""
from __future__ import annotations

import numpy as np
import pytest

from generator.eval.act_error import MODES, error_table, table_error
from generator.exec import run_golden
from generator.exec.int_ref import compare_ddr
from generator.exec.kernels import TABLE_ACTIVATIONS
from generator.frontend.modelgen import Builder, ort_run
from generator.ir.passes import run_all
from generator.frontend.onnx_loader import load_onnx

#: exported form -> (ONNX opset it needs, the table activation it becomes)
FORMS = {"silu": (13, "silu"), "mish": (13, "mish"), "hardswish_mul": (13, "hardswish"), "Sigmoid": (13, "sigmoid"),
         "Tanh": (13, "tanh"), "HardSigmoid": (13, "hardsigmoid"), "HardSwish": (14, "hardswish"),
         "Softplus": (13, "softplus"), "Elu": (13, "elu"), "Mish": (18, "mish"), "gelu_erf": (13, "gelu"),
         "gelu_tanh": (13, "gelu_tanh"), "gelu_tanh_pow": (17, "gelu_tanh"), "Gelu": (20, "gelu"),
         "gelu_tanh_op": (20, "gelu_tanh")}


def _model(form):
    b = Builder([1, 6, 12, 12], seed=4, opset=FORMS[form][0])
    y = b.conv(b.act(b.conv("x", 10, k=3), form), 7, k=1)   # a conv reads it: not a host-side output decode
    return b.model([y])


def test_every_table_activation_has_an_exported_form():
    assert {a for _, a in FORMS.values()} == set(TABLE_ACTIVATIONS)


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
@pytest.mark.parametrize("form", list(FORMS))
def test_exported_form_fuses_and_matches_reference_and_float(form, mode):
    from helpers import compile_small, quantize_input, run_both, sqnr_db

    m = _model(form)
    acts = [n.attrs["macro"].act for n in run_all(load_onnx(m)).macro_nodes()]
    assert acts == [FORMS[form][1], "linear"], acts
    gq, prog, xs, iref = compile_small(m, mode, with_ref=True)
    assert iref.check_params(gq) == []
    x = xs[0]
    gold, ref, _ = run_both(gq, prog, x)
    out = gq.outputs[0]
    assert np.array_equal(gold[out], ref[out])
    xq = quantize_input(gq, x)
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
    t = gq.tensors[out]
    got = (gold[out].astype(np.float64) - t.zero_point) * t.deq_scale
    want = ort_run(m, x)[m.graph.output[0].name][0]
    assert sqnr_db(want, got) > (60 if mode.startswith("int16") else 28), sqnr_db(want, got)


def test_table_error_is_rounding_in_int8_and_interpolation_in_int16():
    """int8 looks every input up directly: the error is the output's rounding alone (at most half a step); int16
    interpolates 256 segments: a few steps at most, SQNR far above int8's."""
    rows = error_table()
    assert {r["mode"] for r in rows} == set(MODES) and len(rows) == 2 * len(TABLE_ACTIVATIONS)
    for r in rows:
        if r["mode"] == "int8-asym":
            assert r["max_lsb"] <= 0.5 + 1e-6 and r["sqnr_db"] > 45, r
        else:
            assert r["max_lsb"] < 16 and r["sqnr_db"] > 75, r


def test_a_too_steep_table_is_refused():
    """A delta beyond int16 (a segment rising by more than 32767 output steps) is a clear error, not a wrap."""
    from types import SimpleNamespace

    from generator.quant.quantize import QuantError, activation_table

    with pytest.raises(QuantError, match="int16 delta"):
        activation_table(SimpleNamespace(act="tanh", alpha=0.0, beta=0.0), 1.0, 0, 1e-6, 0, 16)
    assert table_error("sigmoid", "int8-asym")["max_lsb"] <= 0.5 + 1e-6


def _chain_model(erf_div=1.4142135623730951, leak=False):
    """GELU's exported chain on a conv output, with its divisor ``erf_div`` (sqrt 2: GELU); ``leak``: the Erf's
    output is also read by a second convolution."""
    b = Builder([1, 4, 8, 8], seed=2, opset=13)
    x = b.conv("x", 6, k=3)
    shp = b.shapes[x]
    e = b.unary("Erf", b.op("Div", [x, b.const(np.array(erf_div, np.float32))], shp))
    y = b.op("Mul", [b.op("Mul", [x, b.op("Add", [e, b.const(np.array(1.0, np.float32))], shp)], shp),
                     b.const(np.array(0.5, np.float32))], shp)
    outs = [b.conv(y, 5, k=1)] + ([b.conv(e, 3, k=1)] if leak else [])
    return b.model(outs)


def test_a_chain_is_an_activation_only_when_its_value_is_one():
    """The element-wise chain is recognized by value: GELU's is fused into the convolution; the same chain with
    another divisor, or whose Erf output another node reads, is not an activation and its Erf is refused."""
    from generator.ir.graph import GraphError

    acts = [n.attrs["macro"].act for n in run_all(load_onnx(_chain_model())).macro_nodes()]
    assert acts == ["gelu", "linear"]
    for m in (_chain_model(erf_div=1.3), _chain_model(leak=True)):
        with pytest.raises(GraphError, match=r"Erf x 1"):
            load_onnx(m)
