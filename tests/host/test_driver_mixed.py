"""Mixed precision on the board side (ISA version 6): the manifest carries each region's precision (``bits``), the
input and heads their region's, ``hardware.precisions`` the precisions the program uses; the driver views every
region with its own element type, quantizes the input at the input's bits and dequantizes each head at its own.
Over the golden-simulator PYNQ device, on the small model with one region made int16 (a second to compile), its
integer heads checked against the layer-level integer reference (generator/ref/layer_ref.py) of the same
quantized graph, and its detections against the generator's decode of those reference heads."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from generator import codegen
from generator.flows.artifacts import write_artifacts
from generator.exec import run_graph
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.flows.pipeline import detections_from_heads
from generator.quant.quantize import calibrate, quantize
from generator.quant.ranges import channel_ranges, collect_histograms
from host.driver import PackageMismatchError, YoloAccelerator
from host.manifest import read_manifest
from host.preprocess import preprocess
from helpers import small_yolo

SIM_TIMEOUT_S = 300.0
#: the region made int16 in each mixed program (the others int8): the head (input int8, head int16: the last layer
#: int8->int16), the input (an int16 im2col input, head int8: the first layer int16->int8)
MIXES = {"int16 head": "conv7", "int16 input": "x"}
#: the programs of the fixture: every region int8, and each of :data:`MIXES`
PROGRAMS = {"int8": None, **MIXES}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """{name: (Compiled, package)} per :data:`PROGRAMS`: the small model's float graph quantized with every region
    int8 or one region int16 (one set of calibration ranges for all), compiled and written as a package."""
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model

    tmp = tmp_path_factory.mktemp("mixed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(calibration, "BUILD", tmp / "build")
        c = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp / "m.onnx", 4301)), progress=False)
    g, hw = c.graph, c.hw
    xs = [np.random.default_rng(k).random(g.tensors[g.inputs[0]].shape).astype(np.float32) for k in range(4)]
    ranges = calibrate(g, xs, progress=False)
    chans = channel_ranges(collect_histograms(g, xs, ranges))
    out = {}
    for what, region in PROGRAMS.items():
        gq = quantize(g, ranges, c.quant, {b: hw.at(b).acc_bits for b in (8, 16)}, channel_ranges=chans,
                      region_bits={region: 16} if region else None)
        cm = dataclasses.replace(c, qgraph=gq, program=codegen.compile_program(gq, hw))
        out[what] = (cm, write_artifacts(cm, tmp / what.replace(" ", "-")))
    return out


@pytest.mark.parametrize("what", list(MIXES))
def test_mixed_manifest_carries_each_regions_precision(programs, what):
    """The manifest of a mixed program: each region's ``bits`` (its DDR bytes at that width), the tensors' their
    region's, ``hardware.precisions`` both; the int8 program's: int8 only."""
    c, pkg = programs[what]
    m = read_manifest(pkg / "manifest.json")
    regs = {r.name: r for r in m.regions}
    assert {k: r.bits for k, r in regs.items()} == {k: r.bits for k, r in c.qgraph.regions.items()}
    assert regs[MIXES[what]].bits == 16 and sorted({r.bits for r in regs.values()}) == [8, 16]
    for r in regs.values():
        assert r.bytes == (r.h + 2 * r.pad) * (r.w + 2 * r.pad) * r.channels * r.bits // 8
    for t in (m.input, *m.heads):
        assert t.bits == regs[t.region].bits and t.dtype == f"int{t.bits}"
    assert m.hardware.precisions == ["int8", "int16"]
    assert "bits" not in json.loads((pkg / "manifest.json").read_text())["hardware"]
    m8 = read_manifest(programs["int8"][1] / "manifest.json")
    assert m8.hardware.precisions == ["int8"] and {r.bits for r in m8.regions} == {8}
    sched = (pkg / "schedule.txt").read_text().splitlines()
    precs = {ln.split()[0]: ln.split()[2] for ln in sched[1:1 + len(c.program.layers)]}
    assert precs == {L.name: (f"int{L.bits_in}" if L.bits_in == L.bits_out else f"int{L.bits_in}->int{L.bits_out}")
                     for L in c.program.layers}
    assert set(precs.values()) >= {"int8->int16" if what == "int16 head" else "int16->int8"}


@pytest.mark.parametrize("what", list(MIXES))
def test_driver_views_each_region_with_its_own_element_type(programs, what):
    """The driver's input array and head views have their region's element type (int8 next to int16); a frame
    run through the golden PYNQ device gives the integer heads of the layer-level reference on the input the
    driver quantized (at the input's bits), and the detections the generator decodes from those heads."""
    c, pkg = programs[what]
    m = json.loads((pkg / "manifest.json").read_text())
    img = np.random.default_rng(7).integers(0, 256, (40, 56, 3), dtype=np.uint8)
    with active(GoldenSimDevice("zcu19eg")) as dev:
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S, thresh=0.001)
        dets = acc.detect(img)
        assert dev.accel.last_error is None
    s = acc.sets[0]
    dt = {8: np.int8, 16: np.int16}
    assert s.x.dtype == dt[m["input"]["bits"]] and [v.dtype for v in s.heads] == [dt[h["bits"]] for h in m["heads"]]
    assert {s.x.dtype, s.heads[0].dtype} == {np.dtype(np.int8), np.dtype(np.int16)}
    t = m["input"]
    xq = preprocess(img, m["net"]["width"], m["net"]["height"], t["scale"], t["zero_point"], t["bits"], t["channels"])
    np.testing.assert_array_equal(s.x, xq)
    wide = s.x if t["bits"] == 16 else s.heads[0]
    assert np.abs(wide.astype(np.int64)).max() > 127          # values an int8 view could not hold
    ref = run_graph("ref", c.qgraph, xq.transpose(2, 0, 1).astype(np.int64))
    heads = {}
    for h, v in zip(m["heads"], s.heads):
        heads[h["name"]] = v.transpose(2, 0, 1).astype(np.int64)
        np.testing.assert_array_equal(heads[h["name"]], ref[h["name"]][0])
    want = detections_from_heads(c, {k: ref[k][0] for k in heads}, img.shape[1], img.shape[0], thresh=0.001)
    assert dets and dets == want


def test_mixed_heads_dequantize_to_the_int8_programs(programs):
    """The int16 head of the mixed program, dequantized by the driver at its own scale, is the int8 program's head
    within half an int8 step (its rounding, plus the int16 one's) of each channel wherever the int8 head is not
    clipped (same float graph, ranges and first layer; only the last layer's requantization grid differs)."""
    img = np.random.default_rng(8).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    got = {}
    for what in ("int8", "int16 head"):
        c, pkg = programs[what]
        with active(GoldenSimDevice("zcu19eg")):
            acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S)
            acc.detect(img)
        h = acc.manifest.heads[0]
        got[what] = ((acc.sets[0].heads[0].astype(np.float64) - h.zero_point) * np.asarray(h.scale), h)
    step = np.asarray(got["int8"][1].scale, np.float64)
    q8 = got["int8"][0] / step + got["int8"][1].zero_point
    inside = (q8 > -127.5) & (q8 < 126.5)
    assert inside.mean() > 0.9
    assert np.all(np.abs(got["int16 head"][0] - got["int8"][0])[inside] <= (0.51 * step * np.ones_like(q8))[inside])


def test_bitstream_without_a_programs_precision_is_refused(programs):
    """A bitstream whose hw_info lacks int16 refuses the mixed package (field ``precision``, both lists named) before
    any run; the int8 program loads on it."""
    with active(GoldenSimDevice("zcu19eg", precisions=["int8"])) as dev:
        with pytest.raises(PackageMismatchError) as e:
            YoloAccelerator(programs["int16 head"][1])
        assert dev.accel.runs == 0
        YoloAccelerator(programs["int8"][1]).close()
    assert (e.value.field, e.value.package, e.value.hardware) == ("precision", "int8/int16", "int8")
    assert "precision = int8/int16" in str(e.value) and "precision = int8:" in str(e.value)


def test_compile_precision_option_package_detects_as_invoke_detect(tmp_path, monkeypatch):
    """A package of ``compile_model(precision="Conv_2=int16")`` (the head int16, the rest int8): the driver's
    detections over the golden PYNQ device are those `invoke detect` computes (golden simulator on the generator's
    DDR image, the generator's decode)."""
    from generator.exec import run_golden
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model, quantize_image

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    c = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp_path / "m.onnx", 4302)), progress=False,
                      precision="Conv_2=int16")
    pkg = write_artifacts(c, tmp_path / "pkg")
    m = read_manifest(pkg / "manifest.json")
    assert m.heads[0].bits == 16 and m.input.bits == 8 and m.hardware.precisions == ["int8", "int16"]
    img = np.random.default_rng(9).integers(0, 256, (50, 60, 3), dtype=np.uint8)
    heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, img))
    with active(GoldenSimDevice("zcu19eg")):
        dets = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S, thresh=0.01).detect(img)
    assert dets and dets == detections_from_heads(c, heads, img.shape[1], img.shape[0], thresh=0.01)
