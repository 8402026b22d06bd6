"""Traffic-aware tiling: the scheduler takes, among the plans within 1.5% of the fastest, the one that moves the
fewest DDR bytes; the compulsory bytes and the I/O lower bound it is measured against."""
import math

import pytest

from generator.codegen.allocate import allocate
from generator.codegen.program import TRAFFIC_TOLERANCE, compile_program, schedule_layer, timed_plans
from generator.codegen.tiling import PARAM_RECORD_BYTES, layer_of
from generator.exec.rtl import TINY
from generator.flows.pipeline import compile_model
from generator.spec.hw import HwConfig
from generator.frontend.modelgen import Builder
from helpers import board, compile_small


def _model(ic, oc, k, h, w, pool=False):
    b = Builder([1, ic, h, w], seed=3)
    y = b.leaky(b.conv("x", oc, k=k))
    return b.model([b.maxpool(y) if pool else y])


#: a 32x32 array with large buffers on zcu19eg (its board file's block before the exploration chose 32x48/M): many
#: plans of one speed there, differing in traffic (on 32x48/M the fastest plans move nearly the same bytes)
ARRAY_32X32_L = dict(tm=32, ibuf_bank_bytes=262144, wbuf_bank_bytes=294912, acc_bank_words=4096, obuf_bytes=262144,
                     axi_data_width_bits=128, hp_ports=1, pump=1)


@pytest.fixture(scope="module")
def yolo():
    c = compile_model(board(**ARRAY_32X32_L), "int8-asym", progress=False)
    layers = [layer_of(c.qgraph, n, c.hw) for n in c.qgraph.macro_nodes()]
    return c, layers, allocate(c.qgraph, layers, c.hw)[0]


def test_every_layer_takes_the_least_traffic_within_the_tolerance(yolo):
    """Each chosen plan is within 1.5% of the fastest timed plan and no timed plan that fast moves fewer bytes;
    on conv_10 the choice matters: plans as fast move up to 2.8 MB or more, the chosen one less than 1.7 MB."""
    c, layers, lay = yolo
    for L in layers:
        plans = timed_plans(c.qgraph, L, c.hw, lay)
        fastest = min(p.cycles for p in plans)
        chosen = schedule_layer(c.qgraph, L, c.hw, lay)
        assert chosen.cycles <= fastest * (1 + TRAFFIC_TOLERANCE), L.name
        near = [p for p in plans if p.cycles <= fastest * (1 + TRAFFIC_TOLERANCE)]
        assert chosen.ddr_bytes == min(p.ddr_bytes for p in near), L.name
        if L.name == "conv_10":
            assert chosen.ddr_bytes < 1.7e6 < 2.8e6 < max(p.ddr_bytes for p in near)


def test_whole_frame_traffic_drops_at_the_same_speed(yolo):
    """Against a speed-only choice (per layer the first of the fastest timed plans in the estimate's order, what
    the scheduler took before it looked at traffic), the frame moves at least 4% fewer bytes and takes at most
    1.5% more cycles; every layer moves at least its compulsory bytes."""
    c, layers, lay = yolo
    fast = []
    for L in layers:
        plans = timed_plans(c.qgraph, L, c.hw, lay)
        fast.append(next(p for p in plans if p.cycles == min(q.cycles for q in plans)))
    chosen = c.program.plans
    assert sum(p.ddr_bytes for p in chosen) <= 0.96 * sum(p.ddr_bytes for p in fast)
    assert sum(p.cycles for p in chosen) <= (1 + TRAFFIC_TOLERANCE) * sum(p.cycles for p in fast)
    for L, p in zip(layers, chosen):
        assert p.ddr_bytes >= L.compulsory_bytes(c.hw.elem_bytes), L.name


def test_compulsory_bytes_from_first_principles():
    """A 3x3 convolution 64 -> 32 channels on 10x12 (pad 1) followed by a 2x2 max-pool: ifmap, weights, parameter
    records, pooled output, each once."""
    gq, prog, _ = compile_small(_model(64, 32, 3, 10, 12, pool=True))
    L = prog.layers[0]
    assert L.compulsory_bytes(1) == 64 * 10 * 12 + 32 * 64 * 9 + 32 * PARAM_RECORD_BYTES + 32 * 5 * 6
    assert L.compulsory_bytes(2) == 2 * (64 * 10 * 12 + 32 * 64 * 9 + 32 * 5 * 6) + 32 * PARAM_RECORD_BYTES


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_no_schedule_beats_the_io_lower_bound(mode):
    """On the TINY buffers, where the communication bound exceeds the compulsory bytes, the 60 best plans of a
    3x3 and a 1x1 convolution by the estimate (and those near it), all timed exactly, move at least the bound."""
    brd = board(**TINY)
    for k, ic, oc in ((3, 128, 96), (1, 256, 128)):
        gq, prog, _ = compile_small(_model(ic, oc, k, 20, 18), mode, brd=brd)
        hw = prog.hw
        for L in prog.layers:
            lb = L.io_lower_bound(hw)
            assert lb > L.compulsory_bytes(hw.elem_bytes)
            s = (2 * (hw.ibuf_words * hw.tn + hw.wbuf_words * hw.tn * hw.tm + hw.acc_words * hw.tm)
                 + hw.obuf_words * hw.tm)
            assert lb >= 2 * L.macs / math.sqrt(max(1, L.K ** 2 / L.S ** 2) * s) * hw.elem_bytes
            for p in timed_plans(gq, L, hw, prog.layout, top=60):
                assert p.ddr_bytes >= lb, (k, p.describe())
