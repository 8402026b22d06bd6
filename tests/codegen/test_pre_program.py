"""PRE in compiled programs (generator/codegen/pre.py): the golden simulator runs a camera frame through PRE and the
network, equal to the layer-level integer reference on host.pre.pre_run's input; the input region is plain NHWC;
a model PRE cannot feed is refused with a clear error; the latency model prices PRE for the nominal frame."""
import numpy as np
import onnx
import pytest

from generator.codegen.program import ScheduleError
from generator.exec import run_golden, run_graph
from generator.exec.rtl import TINY
from generator.frontend.modelgen import Builder
from generator.spec.timing import pre_cycles
from helpers import board, compile_small
from host.pre import pre_geometry, pre_quant, pre_run


def _model(tmp_path, c=3, h=20, w=24, meta=None):
    b = Builder([1, c, h, w], seed=5)
    y = b.leaky(b.conv("x", 16, 3, s=2))
    y = b.leaky(b.conv(y, 8, 3))
    m = b.model([y])
    onnx.helper.set_model_props(m, meta or {})
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("mode,fmt,size,bgr", [("stretch", "rgb01", (50, 37), False),
                                              ("letterbox", "rgb255", (17, 61), True),
                                              ("letterbox_topleft", "bgr255", (97, 13), False)])
@pytest.mark.parametrize("quant", ["int8-asym", "int16-sym"])
def test_frame_through_pre_equals_reference(tmp_path, mode, fmt, size, bgr, quant):
    meta = {"input_resize": mode, "input_format": fmt}
    gq, prog, _ = compile_small(_model(tmp_path, meta=meta), quant, brd=board(**TINY), pre=size)
    assert [i.op for i in prog.prologue] == ["CONFIG", "PRE", "END"] and prog.pre_mode == mode
    bands = [i.f for i in prog.insns if i.op == "PRE"]
    assert [(b["y0"], b["y0"] + b["rows"]) for b in bands] == list(zip(
        [b["y0"] for b in bands], [b["y0"] for b in bands[1:]] + [20])) and bands[0]["y0"] == 0
    t = gq.tensors[gq.inputs[0]]
    r = prog.layout.regions[t.region]
    assert "im2col" not in r and r["channels"] == 3
    frame = np.random.default_rng(1).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    outs, res, _, _ = run_golden(prog, gq, frame, bgr=bgr)
    bits = int(t.dtype[3:])
    q = pre_quant(t.scale, t.zero_point, bits, fmt, "bgr" if bgr else "rgb")
    x_q = pre_run(frame, pre_geometry(size[0], size[1], 24, 20, mode), q).transpose(2, 0, 1).astype(np.int64)
    ref = run_graph("ref", gq, x_q)
    for o in gq.outputs:
        assert np.array_equal(ref[o].reshape(outs[o].shape), outs[o])
    assert prog.pre_cycles >= pre_cycles(prog.hw, prog.prologue[1].f, prog.pre_frame)


def test_pre_refuses_a_one_channel_input(tmp_path):
    with pytest.raises(ScheduleError, match="PRE writes a 3-channel"):
        compile_small(_model(tmp_path, c=1), brd=board(**TINY), pre=(32, 32))


def test_pre_refuses_an_unknown_resize_mode(tmp_path):
    with pytest.raises(ScheduleError, match="input_resize='crop'"):
        compile_small(_model(tmp_path, meta={"input_resize": "crop"}), brd=board(**TINY), pre=(32, 32))


def test_larger_nominal_frame_costs_more_cycles(tmp_path):
    m = _model(tmp_path)
    _, small, _ = compile_small(m, brd=board(**TINY), pre=(24, 20))
    _, big, _ = compile_small(m, brd=board(**TINY), pre=(1280, 720))
    assert big.pre_cycles > small.pre_cycles and big.cycles >= small.cycles


def test_bands_run_after_the_input_is_read(tmp_path):
    """Every band comes after the last LOAD of the INPUT buffer (in the LOAD module's program order)."""
    gq, prog, _ = compile_small(_model(tmp_path), brd=board(**TINY), pre=(64, 48))
    inp = prog.prologue[1].f["base_reg"]
    last = max(k for k, i in enumerate(prog.insns) if i.op == "LOAD" and i.f["base_reg"] == inp)
    assert min(k for k, i in enumerate(prog.insns) if i.op == "PRE") > last


def test_stream_of_frames_through_the_pipeline(tmp_path):
    """Frame k's heads come out of the run whose registers hold frame k + 1 (its bands write the next input):
    prologue(f0), main(next f1) -> heads(f0), main(next f2) -> heads(f1), each equal to a frame run alone."""
    from generator.exec import GoldenExecutor, run_golden
    from generator.exec.runtime import build_frame_ddr, read_tensor

    gq, prog, _ = compile_small(_model(tmp_path, meta={"input_resize": "letterbox"}), brd=board(**TINY),
                                pre=(40, 30))
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for w, h in ((40, 30), (13, 77), (64, 9))]
    alone = [run_golden(prog, gq, f)[0] for f in frames]
    gold = GoldenExecutor()
    ddr, bases, fr = build_frame_ddr(prog, frames[0])
    ddr = gold.run(prog, ddr, bases, blob=prog.prologue_blob, frame=fr, check=True).ddr
    for k in range(2):                  # the next frame goes where the frame area of the image is
        nxt = build_frame_ddr(prog, frames[k + 1])
        img = np.concatenate([ddr[:nxt[2].addr], nxt[0][nxt[2].addr:]])
        ddr = gold.run(prog, img, bases, frame=nxt[2], check=True).ddr
        for o in gq.outputs:
            assert np.array_equal(read_tensor(prog, gq, ddr, bases, o), alone[k][o])


def _without_bands(prog):
    """(instructions, layer ranges) of ``prog`` with its PRE bands taken out."""
    keep = [k for k, i in enumerate(prog.insns) if i.op != "PRE"]
    new = {k: n for n, k in enumerate(keep)}
    at = lambda k: next(new[j] for j in range(k, len(prog.insns)) if j in new)   # noqa: E731
    return [prog.insns[k] for k in keep], [(at(a), at(b) if b < len(prog.insns) else len(keep)) for a, b in prog.ranges]


@pytest.mark.parametrize("size", [(810, 1080), (1920, 1080)])
def test_bands_cost_the_network_nothing(size):
    """The next frame's PRE bands fill the LOAD module's idle time only. Timed with the RTL's command queues (a band
    holds the LOAD queue; the fetch, in program order, stops for every module while one queue is full, so it can
    run far behind the LOAD module), YOLOv4-tiny on zcu19eg with its bands takes, layer by layer, the cycles of the
    same program without them (within 1%; the rows left over run before END). (Bands placed in the unbounded
    queues' idle time made conv_4 1.42x slower, as the RTL measured.)"""
    from generator.codegen.program import CycleMemo
    from generator.flows.pipeline import compile_model
    from generator.spec.arch import RTL_QUEUES
    from generator.spec.timing_engine import ModuleTimer

    prog = compile_model("zcu19eg", "int8-asym", progress=False, pre=size).program
    memo = CycleMemo(prog.hw, prog.pre_frame)

    def layers(insns, ranges):
        t = ModuleTimer(prog.hw, insns, cost=memo, overlap=True, cmd_depth=RTL_QUEUES["MQ_DEPTH"])
        t.run()
        ends = [int(max(t.end[k] for k in range(a, b) if insns[k].module == "store")) for a, b in ranges]
        return [e - p for e, p in zip(ends, [0] + ends[:-1])]

    assert sum(i.op == "PRE" for i in prog.insns) > 10
    with_bands, alone = layers(prog.insns, prog.ranges), layers(*_without_bands(prog))
    for i, (a, b) in enumerate(zip(with_bands[:-1], alone[:-1])):
        assert a <= b * 1.01 + 64, f"layer {i}: {a} cycles with the bands, {b} without"
