"""Quantization arithmetic against plain Python-integer references."""
import numpy as np
import pytest

from generator.exec import run_golden
from generator.kinds.conv import conv2d
from generator.ref.kernels import requantize
from generator.spec.isa import record_multiplier
from generator.quant.quantize import QuantConfig, QuantError, quantize_multiplier, set_pre_shift
from generator.spec import isa
from generator.frontend.modelgen import Builder
from helpers import compile_small, quantize_input


def _py_requant(acc, m, s, zp, lo, hi):
    v = (acc * m + (1 << (s - 1))) >> s    # Python ints: exact floor shift, i.e. round half up
    return max(lo, min(hi, v + zp))


def test_requantize_matches_python_integers_round_half_up_and_saturation():
    rng = np.random.default_rng(0)
    acc = np.concatenate([rng.integers(-2 ** 40, 2 ** 40, 2000), [-3, -2, -1, 0, 1, 2, 3, 2 ** 46, -2 ** 46]])
    m_pos = rng.integers(2 ** 14, 2 ** 15, acc.size)
    s_pos = rng.integers(1, 48, acc.size)
    m_neg = (m_pos // 10)
    s_neg = s_pos
    got = requantize(acc[:, None], m_pos, s_pos, m_neg, s_neg, True, -5, -128, 127)[:, 0]
    for a, mp, sp, mn, sn, g in zip(acc.tolist(), m_pos.tolist(), s_pos.tolist(), m_neg.tolist(), s_neg.tolist(), got):
        m, s = (mn, sn) if a < 0 else (mp, sp)
        assert g == _py_requant(a, m, s, -5, -128, 127)
    # exact half: 3 * 2^-1 = 1.5 rounds up to 2, -1.5 rounds up to -1
    assert requantize(np.array([[3], [-3]]), [1, 1], [1, 1], [1, 1], [1, 1], False, 0, -128, 127).ravel().tolist() == [2, -1]


def test_requantize_pre_shift_is_a_floor_shift_before_the_multiply():
    rng = np.random.default_rng(1)
    acc = np.concatenate([rng.integers(-2 ** 46, 2 ** 46, 2000), [-2 ** 20 - 1, -2 ** 20, -1, 0, 2 ** 20 - 1]])
    pre = rng.integers(0, 24, acc.size)
    m, s = rng.integers(2 ** 14, 2 ** 15, acc.size), rng.integers(1, 40, acc.size)
    got = requantize(acc[:, None], m, s, m // 3, s, True, 3, -32768, 32767, pre)[:, 0]
    for a, p, mm, ss, g in zip(acc.tolist(), pre.tolist(), m.tolist(), s.tolist(), got):
        v = a >> p                                              # Python ints: floor
        assert g == _py_requant(v, mm // 3 if v < 0 else mm, ss, 3, -32768, 32767)


@pytest.mark.parametrize("mode", ["int8-sym", "int16-sym", "int16-asym"])
def test_pre_shift_is_the_least_that_fits_the_operand_into_one_dsp(mode):
    """Each channel's pre-shift is the smallest that keeps its worst-case (acc + bias) within the 27-bit operand
    of one DSP48E2; the real multiplier M * 2^-(shift + pre_shift) is the one quantize_multiplier gives; int8
    layers of this size need none, int16 ones do."""
    b = Builder([1, 48, 6, 6], seed=8)
    m = b.model([b.leaky(b.conv(b.leaky(b.conv("x", 40, k=3)), 24, k=3))])
    gq, prog, xs = compile_small(m, mode)
    cfg = QuantConfig.from_mode(mode)
    amax = max(-cfg.qmin, cfg.qmax)
    top = 1 << (isa.REQUANT_OPERAND_BITS - 1)
    for n in gq.macro_nodes():
        q = n.attrs["q"]
        worst = np.abs(q["w"]).reshape(len(q["bias"]), -1).sum(axis=1) * amax + np.abs(q["bias"])
        pre = q["pre_shift"]
        assert ((worst >> pre) < top).all()
        assert ((pre == 0) | ((worst >> np.maximum(pre - 1, 0)) >= top)).all()
        assert (pre == 0).all() if mode.startswith("int8") else (pre > 0).all()
        s_in = gq.tensors[n.inputs[0]].scale
        s_out = np.broadcast_to(np.ravel(gq.tensors[n.outputs[0]].deq_scale), pre.shape)
        for c in range(len(pre)):       # q keeps the real multiplier; the record moves the pre-shift into its shift
            assert (int(q["mult_pos"][c]), int(q["shift_pos"][c])) == quantize_multiplier(
                float(s_in * q["s_w"][c] / s_out[c]), "test")
        m, sh = record_multiplier(q["mult_pos"], q["shift_pos"], pre)
        assert np.array_equal(m, q["mult_pos"]) and np.array_equal(sh, q["shift_pos"] - pre) and (sh >= 1).all()
    _, _, ddr, _ = run_golden(prog, gq, quantize_input(gq, xs[0]))   # (its operand check passes)


def test_record_multiplier_moves_the_pre_shift_into_the_shift():
    m, s = record_multiplier([20000, 0, 23456], [20, 1, 6], [5, 9, 5])
    assert m.tolist() == [20000, 0, 23456] and s.tolist() == [15, 1, 1]
    with pytest.raises(ValueError, match="pre-shift of 6 bits exceeds the shift 6"):
        record_multiplier([23456], [6], [6])


def test_pre_shift_refuses_a_shift_not_above_it():
    q = dict(mult_pos=np.array([20000, 20000]), shift_pos=np.array([3, 9]), mult_neg=np.array([0, 0]),
             shift_neg=np.array([1, 1]))
    set_pre_shift(q, np.array([1 << 27, 1 << 33]), "layer L")    # 28 / 34 bits: pre-shift 2 / 8
    assert q["pre_shift"].tolist() == [2, 8] and q["shift_pos"].tolist() == [3, 9]   # (q keeps M, s)
    with pytest.raises(QuantError, match="layer L channel 0: .*pre-shift of 3 bits, more than its multiplier"):
        set_pre_shift(q, np.array([1 << 28, 1 << 20]), "layer L")   # 29 bits: pre-shift 3 >= shift 3


@pytest.mark.parametrize("r", [1e-6, 0.0031, 0.1, 0.5, 0.99999, 1.0, 3.7])
def test_quantize_multiplier_precision(r):
    m, s = quantize_multiplier(r, "test")
    assert 2 ** 14 <= m < 2 ** 15 and 1 <= s <= 63
    assert abs(m * 2.0 ** -s - r) / r <= 2 ** -15


def test_zero_point_folded_into_bias_equals_explicit_subtraction():
    b = Builder([1, 6, 9, 9], seed=4)
    m = b.model([b.leaky(b.conv("x", 10, k=3))])
    gq, prog, xs = compile_small(m, "int8-asym")
    n = gq.macro_nodes()[0]
    q = n.attrs["q"]
    tin = gq.tensors[n.inputs[0]]
    assert q["zp_in"] == tin.zero_point != 0
    x = np.random.default_rng(1).integers(-128, 128, (6, 9, 9))
    folded = conv2d(x.astype(float), q["w"].astype(float), 1, 1, pad_value=q["zp_in"]) + q["bias"][:, None, None]
    wsum = q["w"].reshape(10, -1).sum(1)
    b_real = q["bias"] + q["zp_in"] * wsum                       # = round(b / (s_in * s_w))
    explicit = conv2d((x - q["zp_in"]).astype(float), q["w"].astype(float), 1, 1) + b_real[:, None, None]
    assert np.array_equal(folded, explicit)


def test_concat_inputs_share_scale_and_zero_point():
    b = Builder([1, 4, 8, 8], seed=5)
    a = b.leaky(b.conv("x", 6, k=3, scale=3.0))
    c = b.leaky(b.conv("x", 5, k=1, scale=0.1))
    m = b.model([b.conv(b.concat(a, c), 3, k=1)])
    gq, _, _ = compile_small(m, "int8-asym")
    ta, tc = gq.tensors[a], gq.tensors[c]
    assert ta.region == tc.region and (ta.scale, ta.zero_point) == (tc.scale, tc.zero_point)


def test_modes():
    assert QuantConfig.from_mode("int16-sym").qmax == 32767
    assert QuantConfig.from_mode("int8-asym", per_channel=False).name == "int8-asym-pt"


def test_layer_whose_output_is_never_positive_gets_a_scale_floor():
    """A ReLU layer that is 0 on every calibration input has an empty range: its output scale is raised so the
    real multiplier stays at or below 2^13 (no left shift needed), the layer compiles, and the golden simulator
    matches the independent reference (which derives the same floor) on every DDR region."""
    from generator.ref.int_ref import MAX_REAL_MULT, compare_ddr

    b = Builder([1, 4, 6, 6], seed=5)
    y = b.relu(b.conv("x", 3, k=1))
    m = b.model([y])
    for init in m.graph.initializer:             # bias -100: the conv output is always negative
        if init.name.startswith("b"):
            init.CopyFrom(__import__("onnx").numpy_helper.from_array(np.full(3, -100, np.float32), init.name))
    gq, prog, xs, iref = compile_small(m, "int8-asym", with_ref=True)
    n = gq.macro_nodes()[0]
    q = n.attrs["q"]
    s_in = gq.tensors[n.inputs[0]].scale
    out = gq.tensors[n.outputs[0]]
    assert out.channel_scales is not None          # a graph output: one scale per channel, each with its floor
    r = s_in * q["s_w"] / out.deq_scale.ravel()
    assert r.max() <= MAX_REAL_MULT * (1 + 1e-9)
    assert iref.check_params(gq) == []
    xq = quantize_input(gq, xs[0])
    _, _, ddr, bases = run_golden(prog, gq, xq)
    assert compare_ddr(iref, iref.run(xq), prog, ddr, bases) == []
