"""Seeded random-layer fuzzing (generator/eval/fuzz.py) in the default test run: 200 cases on the golden simulator and
the independent integer reference (every hardware configuration), 36 on the C-simulation (tiny configurations,
Tm != Tn and a Tm that is not a power of two included) and 6 on the RTL (tiny), all bit for bit; the slow tier
runs 15 on the RTL of three configurations (Tm = 24, two HP ports). Also: the tiers cover the space they claim,
and the fuzzer catches planted defects (a wrong multiplier, a wrong bias fold, a corrupted DDR byte)."""
from __future__ import annotations

import numpy as np
import pytest

from generator.eval import fuzz as fz
from generator.exec.rtl import verilator

SEED = 20261123


def _run(cases, executors, configs=None, lines=None):
    log = lines.append if lines is not None else (lambda s: None)
    return fz.fuzz(cases, SEED, executors, configs, progress=False, log=log)


def _fails(outs):
    return [f"case {o.case['index']}: {o.describe()}: {o.detail}" for o in outs if o.status == "fail"]


@pytest.fixture(scope="module")
def golden_ref_outcomes():
    lines = []
    outs = _run(200, ["golden", "ref"], lines=lines)
    return outs, lines


def test_fuzz_golden_vs_independent_reference(golden_ref_outcomes):
    outs, lines = golden_ref_outcomes
    assert len(outs) == 200
    assert not _fails(outs), "\n".join(lines)
    assert lines[-1] == f"{sum(o.status != 'fail' for o in outs)} passed, 0 failed"


def test_fuzz_tier_covers_the_space(golden_ref_outcomes):
    """The seeded tier really runs what the fuzzer claims: every graph kind, quant mode, configuration, kernel
    size, stride 2, both pool sizes, both upsample factors, saturating inputs; refusals stay a minority."""
    outs, _ = golden_ref_outcomes
    ran = [o.case for o in outs if o.status == "pass"]
    assert len(ran) >= 150, f"only {len(ran)} of 200 cases ran"
    convs = [L for c in ran for L in c["layers"] if L["op"] == "conv"]
    assert {c["kind"] for c in ran} >= {"conv", "chain", "concat", "split", "standalone", "fc", "emul"}
    assert {c["layers"][1]["gate"] for c in ran if c["kind"] == "emul"} == {"sam", "se", "square"}
    assert {(c["mode"], c["per_channel"]) for c in ran} == set(fz.QUANT_MODES)
    assert {c["config"] for c in ran} == set(fz.CONFIGS)
    assert {L["k"] for L in convs} == {1, 3, 5, 7} and {L["s"] for L in convs} == {1, 2}
    assert {L["pool"][0] for L in convs if L.get("pool")} == {2, 3}
    assert {L["pool"][1] for L in convs if L.get("pool")} == {1, 2}
    assert {L["up"] for L in convs if L.get("up")} == {2, 4}
    assert max(c["in_shape"][1] for c in ran) > 300 and max(L["oc"] for L in convs) > 300
    assert any(c["saturate"] > 1 for c in ran)
    refused = [o for o in outs if o.status == "refused"]
    # (a layer whose output scale is ~2^40 finer than its accumulator's reach needs a requantization pre-shift its
    # shift cannot give: generator.quant.quantize.set_pre_shift refuses it)
    assert all(o.case["kind"] == "degenerate" or "no tiling fits" in o.detail or "could overflow" in o.detail
               or "requantization needs a pre-shift" in o.detail for o in refused), [o.detail for o in refused]
    assert all(o.status == "refused" for o in outs if o.case["kind"] == "degenerate")


def test_fuzz_csim():
    """12 cases on the C-simulation of the 16x24 configuration (Tm not Tn, not a power of two: one g++ build; the
    8x8 array's C-simulation runs the layer suites of tests/backends/test_hls_csim.py; every configuration: the
    slow test below, more cases: invoke fuzz)."""
    lines = []
    outs = _run(12, ["golden", "ref", "csim"], ["tiny-16x24"], lines=lines)
    assert not _fails(outs), "\n".join(lines)
    assert sum(o.status == "pass" for o in outs) >= 8
    assert {o.case["config"] for o in outs if o.status == "pass"} == {"tiny-16x24"}


@pytest.mark.slow   # (four g++ builds)
def test_fuzz_csim_every_tiny_configuration():
    lines = []
    outs = _run(24, ["golden", "ref", "csim"], lines=lines)    # (invoke fuzz: more)
    assert not _fails(outs), "\n".join(lines)
    assert sum(o.status == "pass" for o in outs) >= 16
    assert {o.case["config"] for o in outs if o.status == "pass"} == {"tiny", "tiny-8x16", "tiny-16x8", "tiny-16x24"}


@pytest.mark.slow   # (a Verilator build of its own; the default tier's RTL coverage: tests/exec/test_rtl.py)
@pytest.mark.skipif(verilator() is None, reason="verilator not installed (run ./setup.sh)")
def test_fuzz_rtl_tiny():
    """6 cases on the RTL of the fuzzer's tiny configuration (one Verilator build); two more configurations and
    more cases: the next test."""
    lines = []
    outs = _run(6, ["golden", "ref", "rtl"], ["tiny"], lines=lines)
    assert not _fails(outs), "\n".join(lines)
    assert sum(o.status == "pass" for o in outs) >= 4


@pytest.mark.slow   # (three Verilator builds, about 4 minutes: invoke test --slow)
@pytest.mark.skipif(verilator() is None, reason="verilator not installed (run ./setup.sh)")
def test_fuzz_rtl():
    lines = []
    configs = ["tiny", "tiny-16x24", "tiny-16x32-2hp"]     # the last on two HP ports (rtl/axi_hp_split.sv)
    outs = _run(15, ["golden", "ref", "rtl"], configs, lines=lines)   # (invoke fuzz: more)
    assert not _fails(outs), "\n".join(lines)
    assert sum(o.status == "pass" for o in outs) >= 10
    assert {o.case["config"] for o in outs if o.status == "pass"} == set(configs)


# ------------------------------------------------------------------------------ the fuzzer catches defects
def _first_case(kind, executors=("golden", "ref")):
    for k in range(200):
        c = fz.draw_case(SEED, k, list(fz.CONFIGS), list(executors))
        if c["kind"] == kind and c["layers"][0]["act"] == "leaky":
            return c
    raise AssertionError(kind)


def test_fuzzer_catches_a_wrong_multiplier(monkeypatch):
    from generator.quant import quantize

    case = _first_case("conv")
    assert fz.Fuzzer(["golden", "ref"]).run_case(case).status == "pass"
    real = quantize.quantize_multiplier
    monkeypatch.setattr(quantize, "quantize_multiplier", lambda r, w: (lambda m, s: (m + 1, s))(*real(r, w)))
    o = fz.Fuzzer(["golden", "ref"]).run_case(case)
    assert o.status == "fail" and "mult_pos" in o.detail


def test_fuzzer_catches_a_wrong_bias_fold(monkeypatch):
    """Bias folded with the wrong sign of the zero point: golden and the stored-parameter reference agree with
    each other, only the independent reference sees it."""
    from generator.quant import quantize

    case = dict(_first_case("conv"), mode="int8-asym")
    real = quantize.quantize

    def bad(g, ranges, cfg, acc_bits):
        gq = real(g, ranges, cfg, acc_bits)
        for n in gq.macro_nodes():
            q = n.attrs["q"]
            if q["w"] is not None:
                q["bias"] = q["bias"] + 2 * q["zp_in"] * q["w"].reshape(len(q["bias"]), -1).sum(axis=1)
        return gq

    monkeypatch.setattr(quantize, "quantize", bad)
    o = fz.Fuzzer(["golden", "ref"]).run_case(case)
    assert o.status == "fail" and "bias" in o.detail


def test_fuzzer_catches_a_corrupted_region(monkeypatch):
    """One DDR byte changed after the golden simulator ran: compare_ddr names the region."""
    from generator.exec import golden

    case = _first_case("conv")
    real = golden.GoldenSim.run

    def run(self, blob, *a, **k):
        res = real(self, blob, *a, **k)
        out_base = self.base[3]
        self.ddr[out_base] = np.uint8(self.ddr[out_base] ^ 0x40)
        return res

    monkeypatch.setattr(golden.GoldenSim, "run", run)
    o = fz.Fuzzer(["golden", "ref"]).run_case(case)
    assert o.status == "fail" and "region" in o.detail and "differ" in o.detail


def test_reproducer_reruns_the_same_case():
    c = fz.draw_case(SEED, 17, list(fz.CONFIGS), ["golden", "ref"])
    assert fz.draw_case(SEED, 17, list(fz.CONFIGS), ["golden", "ref"]) == c
    line = fz.reproducer(c, ["golden", "ref"], list(fz.CONFIGS))
    assert line == (f"invoke fuzz --seed {SEED} --case 17 --executors golden,ref "
                    f"--configs {','.join(fz.CONFIGS)}")
