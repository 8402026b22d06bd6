"""POST's activation table (generator/spec/isa.py TABLE_ENTRIES): every exported form of each activation fuses into
its convolution, the quantized layer equals the independent integer reference bit for bit and stays close to
onnxruntime, and the table's own error against the float function is what rounding (int8) or linear interpolation
(int16) allows."""
from __future__ import annotations

import numpy as np
import pytest

from generator.eval.act_error import MODES, error_table, table_error
from generator.exec import run_golden
from generator.ref.int_ref import compare_ddr
from generator.ir.activations import TABLE_ACTIVATIONS
from generator.frontend.modelgen import Builder, ort_run
from generator.ir.passes import run_all
from generator.frontend.onnx_loader import load_onnx

#: exported form -> (ONNX opset it needs, the table activation it becomes)
FORMS = {"silu": (13, "silu"), "mish": (13, "mish"), "hardswish_mul": (13, "hardswish"), "Sigmoid": (13, "sigmoid"),
         "Tanh": (13, "tanh"), "HardSigmoid": (13, "hardsigmoid"), "HardSwish": (14, "hardswish"),
         "Softplus": (13, "softplus"), "Elu": (13, "elu"), "Mish": (18, "mish"), "gelu_erf": (13, "gelu"),
         "gelu_tanh": (13, "gelu_tanh"), "gelu_tanh_pow": (17, "gelu_tanh"), "Gelu": (20, "gelu"),
         "gelu_tanh_op": (20, "gelu_tanh"), "Selu": (13, "selu")}


def _model(form):
    b = Builder([1, 6, 12, 12], seed=4, opset=FORMS[form][0])
    y = b.conv(b.act(b.conv("x", 10, k=3), form), 7, k=1)   # a conv reads it: not a host-side output decode
    return b.model([y])


def _check_against_references_and_float(m, mode, min_db):
    """Compile ONNX model ``m`` in ``mode`` (random calibration inputs); assert its parameters equal the independent
    integer reference's, the golden simulator's output equals the layer-level reference's and its DDR the
    independent reference's bit for bit, and its dequantized output is within ``min_db`` SQNR of onnxruntime's.
    Returns the program."""
    from helpers import compile_small, quantize_input, run_both, sqnr_db

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
    assert sqnr_db(want, got) > min_db, sqnr_db(want, got)
    return prog


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
@pytest.mark.parametrize("form", ["silu", "gelu_erf", "Elu", "hardswish_mul"])
def test_wide_pre_activations_use_the_identity_above_the_table(form, mode):
    """Weights 40x larger than the default draw: the pre-activations reach tens of units, as a real YOLOv8n's
    first layers do. The quantizer chooses POST's identity above the table (id_above in the program), the
    golden simulator equals the layer-level and the independent integer references bit for bit, and the output
    stays close to onnxruntime's (the identity keeps the linear side exact)."""
    b = Builder([1, 6, 12, 12], seed=5, opset=FORMS[form][0])
    y = b.conv(b.act(b.conv("x", 10, k=3, scale=40.0 / np.sqrt(54)), form), 7, k=1)
    m = b.model([y])
    prog = _check_against_references_and_float(m, mode, 55 if mode.startswith("int16") else 25)
    assert any(i.op == "POST" and i.f["id_above"] for i in prog.insns)


def test_every_table_activation_has_an_exported_form():
    assert {a for _, a in FORMS.values()} == set(TABLE_ACTIVATIONS)


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
@pytest.mark.parametrize("form", list(FORMS))
def test_exported_form_fuses_and_matches_reference_and_float(form, mode):
    m = _model(form)
    acts = [n.attrs["macro"].act for n in run_all(load_onnx(m)).macro_nodes()]
    assert acts == [FORMS[form][1], "linear"], acts
    _check_against_references_and_float(m, mode, 60 if mode.startswith("int16") else 28)


def _bound_lsb(act, r, domain=(-8.0, 8.0)):
    """The largest error POST may make, in output steps, derived from the function's derivatives (numerical, on the
    test's own grid): the output's rounding (0.5), the input's rounding to the table's grid (max|f'| s_t / 2), and in
    int16 the linear interpolation over segments of 256 s_t (w^2 / 8 max|f''|, and w |jump of f'| / 4 at a kink)
    plus the rounding of base, delta and the interpolation (1.5)."""
    from generator.eval.act_error import PARAMS

    a, b = PARAMS.get(act, (0.0, 0.0))
    x = np.linspace(*domain, 400001)
    y = TABLE_ACTIVATIONS[act](x, a, b)
    d1 = np.abs(np.diff(y) / np.diff(x))
    d2 = np.abs(np.diff(d1) / np.diff(x)[1:])
    s_t, s_o = r["in_scale"], r["out_scale"]
    bound = 0.5 + d1.max() * s_t / 2 / s_o + 0.01   # (both roundings may reach their half step together)
    if r["mode"].startswith("int16"):
        # a segment across a kink (SELU at 0, slope gamma * alpha to gamma) errs up to w * |slope jump| / 4
        kink = np.abs(np.diff(d1)).max()
        bound += (256 * s_t) ** 2 / 8 * np.percentile(d2, 99.9) / s_o + 256 * s_t * kink / 4 / s_o + 1.5
    return bound


def test_table_error_is_within_what_rounding_and_interpolation_allow():
    """Every table activation over [-8, 8], through POST as the compiler builds it: the error stays within the
    bound derived from the function's own derivatives (input and output rounding; int16: interpolation), int16's
    SQNR far above int8's."""
    rows = error_table()
    assert {r["mode"] for r in rows} == set(MODES) and len(rows) == 2 * len(TABLE_ACTIVATIONS)
    for r in rows:
        assert r["max_lsb"] <= _bound_lsb(r["act"], r), r
        assert r["sqnr_db"] > (45 if r["mode"] == "int8-asym" else 75), r


@pytest.mark.parametrize("act", ["silu", "gelu", "hardswish", "elu"])
def test_identity_above_the_table_keeps_a_wide_range_exact(act):
    """A pre-activation range reaching 200 (a real YOLOv8n's first layers reach 90): the table covers the curved
    part and POST's identity the rest, so int16 stays within a few output steps everywhere; a plain table over the
    whole range would spread 256 segments over 220 units (segments of 0.86: SiLU's interpolation error alone
    0.86^2 / 8 * 0.5 = 0.046, hundreds of output steps)."""
    r = table_error(act, "int16-sym", domain=(-20.0, 200.0))
    assert r["identity"] and r["max_lsb"] <= _bound_lsb(act, r, (-20.0, 200.0)) and r["max_lsb"] < 4, r
    assert r["sqnr_db"] > 85, r


def test_table_domain_cuts_flat_ends_and_finds_the_identity():
    """The policy on its own: Sigmoid's flat ends are cut where it comes within a quarter step of 0 and 1
    (checked against the closed form), SiLU's identity starts where |x sigmoid(-x)| falls below it."""
    from generator.ref.tables import flat_trimmed, identity_start

    sig = TABLE_ACTIVATIONS["sigmoid"]
    tol = 1e-3
    lo, hi = flat_trimmed(lambda x: sig(x, 0, 0), -30.0, 30.0, tol)
    edge = np.log(1 / tol - 1)        # sigmoid(x) = 1 - tol
    assert abs(hi - edge) < 0.05 and abs(lo + edge) < 0.05, (lo, hi, edge)
    x0 = identity_start(lambda x: TABLE_ACTIVATIONS["silu"](x, 0, 0), 50.0, tol)
    assert x0 is not None and abs(x0 / (1 + np.exp(x0)) - tol) < 2e-4, x0
    assert identity_start(lambda x: sig(x, 0, 0), 50.0, tol) is None


def test_a_too_steep_table_is_refused():
    """A delta beyond int16 (a segment rising by more than 32767 output steps) is a clear error, not a wrap."""
    from types import SimpleNamespace

    from generator.quant.quantize import QuantError, activation_table

    with pytest.raises(QuantError, match="int16 delta"):
        activation_table(SimpleNamespace(act="tanh", alpha=0.0, beta=0.0), 1.0, 0, 1e-6, 0, 16)
    # a segment crossing the output's bound keeps the function's slope (POST's clamp saturates it): ELU is the
    # identity above 0, so with equal scales the last segment rises by its full 256 input steps, not to qmax
    t = activation_table(SimpleNamespace(act="elu", alpha=1.0, beta=0.0), 0.01, 0, 0.01, 0, 16)
    assert tuple(t[255]) == (32512, 256)


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
