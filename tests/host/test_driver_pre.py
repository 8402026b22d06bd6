"""The driver with PRE in the program (issue 45, "frame in, boxes out"): host/driver.py hands the camera frame over
(host/handover.py: copied once into the buffer set's frame buffer, or read in place from a PYNQ buffer) and writes
PRE's registers; the accelerator (the golden-simulator PYNQ device, generator/exec/pynq_golden.py) resizes and
quantizes it (the prologue for a first frame, then main runs whose bands of PRE write the next frame's input). On the
small model compiled with ``pre=(40, 30)``: the INPUT region PRE wrote equals host.pre.pre_run (the definition of
PRE) and the heads and detections equal the golden simulator's run of generator.exec.runtime.build_frame_ddr's image
(generator.exec.run_golden), for frames of several sizes and both pixel orders, one by one and in a stream."""
from __future__ import annotations

import numpy as np
import pytest
from pynq import allocate

from generator.exec import run_golden
from generator.spec import isa
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.flows.artifacts import write_artifacts
from generator.flows.pipeline import detections_from_heads
from host.driver import YoloAccelerator
from host.manifest import read_manifest
from host.pre import MAX_FRAME, pre_geometry, pre_quant, pre_run
from helpers import small_yolo

SIM_TIMEOUT_S = 300.0
N_INSNS = next(o for name, o, _, _ in isa.REGISTERS if name == "n_insns")      # (its register's byte offset)
NOMINAL = (40, 30)
#: frames (H, W): the nominal, an odd width, portrait, 1 x 1, larger than the nominal
SIZES = [(30, 40), (30, 41), (50, 20), (1, 1), (90, 121)]
#: a score threshold that keeps the random model's detections few (the decode is the same at any threshold)
THRESH = 0.5


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(Compiled, package) of the small model with PRE for a 40 x 30 frame."""
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model

    tmp = tmp_path_factory.mktemp("pre")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(calibration, "BUILD", tmp / "build")
        c = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp / "m.onnx", 4517)), progress=False,
                          pre=NOMINAL)
    assert c.program.pre_frame is not None
    return c, write_artifacts(c, tmp / "pkg")


def _frame(h, w, seed):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _check(acc, c, frame, s, bgr):
    """The driver's last run on buffer set ``s`` against the references: PRE's input (host.pre.pre_run), the heads
    (golden run of build_frame_ddr's image) and the detections (the generator's decode of those heads)."""
    m, h, w = acc.manifest, frame.shape[0], frame.shape[1]
    t = m.input
    g = pre_geometry(w, h, m.net.width, m.net.height, m.pre.resize)
    want_x = pre_run(np.ascontiguousarray(frame), g, pre_quant(t.scale, t.zero_point, t.bits, t.format,
                                                               "bgr" if bgr else "rgb"))
    np.testing.assert_array_equal(s.x, want_x)
    heads, _, _, _ = run_golden(c.program, c.qgraph, np.ascontiguousarray(frame), bgr=bgr)
    for hd, v in zip(m.heads, s.heads):
        np.testing.assert_array_equal(v.transpose(2, 0, 1), heads[hd.name])
    return detections_from_heads(c, heads, w, h, thresh=THRESH)


@pytest.mark.parametrize("order", ["rgb", "bgr"])
def test_pre_frames_bit_equal_golden(compiled, order):
    c, pkg = compiled
    m = read_manifest(pkg / "manifest.json")
    assert (m.pre.frame_w, m.pre.frame_h) == NOMINAL and m.input.layout == "NHWC"
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S, thresh=THRESH, frame_order=order)
        s = acc.sets[0]
        border = acc._region_view(s.input, acc.region[m.input.region]).copy()
        n, n_pro = m.n_insns, m.pre.prologue_insns
        for k, (h, w) in enumerate(SIZES):
            f = _frame(h, w, k)
            dets = acc.detect(f)
            assert dets == _check(acc, c, f, s, order == "bgr"), (h, w)
            # two runs: the prologue (after the main program in program.bin), then the main program
            assert [(r["insns"], r["INPUT"]) for r in dev.accel.history[-2:]] == [
                (acc.insn_buf.device_address + 32 * n, s.input.device_address),
                (acc.insn_buf.device_address, s.input.device_address)]
            assert dev.accel.words[N_INSNS] == n and n_pro > 0
            fr, t = dev.accel.frame_history[-1], acc.last_timing
            assert dev.accel.frame_history[-2] == fr
            assert (fr.frame_w, fr.frame_h, fr.pitch, fr.bgr) == (w, h, 3 * w, order == "bgr")
            assert fr.addr == s.frame.buf.device_address and t["copied_bytes"] == 3 * w * h
            assert (fr.addr, 3 * w * h) in dev.flushes and t["pre_ms"] > 0
            assert dev.accel.last_error is None and t["accel_cycles"] > 0
        assert s.frame.buf.size >= 90 * 121 * 3            # grown for the larger frame
        # the host never wrote the INPUT region: its border is still the zero point of the allocation
        now = acc._region_view(s.input, acc.region[m.input.region])
        p = acc.region[m.input.region].pad
        inner = np.zeros(now.shape[:2], bool)
        inner[p:now.shape[0] - p, p:now.shape[1] - p] = True
        np.testing.assert_array_equal(now[~inner], border[~inner])
        assert (border == m.input.zero_point).all()


def test_pre_stream_of_mixed_sizes(compiled):
    c, pkg = compiled
    frames = [_frame(h, w, 10 + k) for k, (h, w) in enumerate([(30, 40), (90, 121), (1, 1), (50, 20), (30, 41)])]
    want = []
    for f in frames:
        heads, _, _, _ = run_golden(c.program, c.qgraph, f)
        want.append(detections_from_heads(c, heads, f.shape[1], f.shape[0], thresh=THRESH))
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S, thresh=THRESH)
        out = list(acc.detect_stream(iter(frames), with_timing=True))
    assert [d for d, _ in out] == want
    assert [t["copied_bytes"] for _, t in out] == [f.size for f in frames]
    # the prologue with frame 0, then run k (computing frame k) with frame k+1's registers, the last with its own
    hist = dev.accel.frame_history
    assert [(fr.frame_w, fr.frame_h) for fr in hist] == [(f.shape[1], f.shape[0]) for f in frames + frames[-1:]]
    fb = [s.frame.buf.device_address for s in acc.sets]
    assert [fr.addr for fr in hist] == [fb[0], fb[1], fb[0], fb[1], fb[0], fb[0]]   # the two sets' frame buffers
    assert len({h["INPUT"] for h in dev.accel.history}) == 1                  # one INPUT buffer (module text)
    assert [h["OUTPUT"] for h in dev.accel.history[1:]] == [acc.sets[k % 2].output.device_address for k in range(5)]


def test_pre_zero_copy_from_a_pynq_buffer(compiled):
    """A frame in a pynq.allocate'd buffer is read in place: its address in the frame register, flushed, nothing
    copied; a crop of a wider buffer keeps its row pitch."""
    c, pkg = compiled
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S, thresh=THRESH)
        s = acc.sets[0]
        buf = allocate(shape=(33, 45, 3), dtype=np.uint8)
        buf[:] = _frame(33, 45, 21)
        dets = acc.detect(buf)
        fr = dev.accel.frame_history[-1]
        assert fr.addr == buf.device_address and fr.pitch == 45 * 3 and acc.last_timing["copied_bytes"] == 0
        assert (buf.device_address, buf.nbytes) in dev.flushes
        assert dets == _check(acc, c, np.asarray(buf), s, False)
        wide = allocate(shape=(31, 52, 3), dtype=np.uint8)
        wide[:] = _frame(31, 52, 22)
        crop = wide[2:, 5:44]                                   # 29 x 39 pixels, rows 52 x 3 bytes apart
        dets = acc.detect(crop)
        fr = dev.accel.frame_history[-1]
        assert (fr.addr, fr.pitch, fr.frame_w, fr.frame_h) == (wide.device_address + (2 * 52 + 5) * 3, 52 * 3, 39, 29)
        assert fr.size == 28 * 52 * 3 + 39 * 3 and (fr.addr, fr.size) in dev.flushes
        assert acc.last_timing["copied_bytes"] == 0 and dets == _check(acc, c, np.asarray(crop), s, False)
        flipped = wide[:20, :30, ::-1]            # not packed R, G, B bytes: copied
        acc.detect(flipped)
        assert acc.last_timing["copied_bytes"] == 20 * 30 * 3 and dev.accel.frame_history[-1].addr == \
            s.frame.buf.device_address


@pytest.mark.parametrize("shape", [(MAX_FRAME[1] + 1, 2), (3, MAX_FRAME[0] + 1), (0, 5)])
def test_pre_frame_it_cannot_take(compiled, shape):
    _, pkg = compiled
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S)
        with pytest.raises(ValueError, match=f"{shape[1]} x {shape[0]}"):
            acc.detect(np.zeros((*shape, 3), np.uint8))
        assert dev.accel.runs == 0
        with pytest.raises(ValueError, match="frame_order"):
            YoloAccelerator(pkg, frame_order="yuv")


def test_golden_device_refuses_a_frame_outside_its_memory(compiled):
    """The golden device passes PRE's registers to the simulator with the frame address as an offset in its memory;
    an address outside it is refused as the hardware does (OUT_OF_RANGE), not read."""
    import dataclasses

    from host.driver import AcceleratorError

    _, pkg = compiled
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(pkg, timeout_s=SIM_TIMEOUT_S)
        s = acc.sets[0]
        acc._pre(_frame(30, 40, 5), s)
        s.pre_frame = dataclasses.replace(s.pre_frame, addr=dev.mem_base - 4096)
        acc._start(s, prologue=True)
        with pytest.raises(AcceleratorError, match="OUT_OF_RANGE"):
            acc._wait(s)
        assert "PRE" in dev.accel.last_error and dev.accel.frame_history[-1].addr == dev.mem_base - 4096
