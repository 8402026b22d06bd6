"""Resource estimate (generator/estimate/hls_resources.py) and the memory mapping (generator/spec/memories.py): every
board's default configuration fits its part with the instruction ROM of its compiled YOLOv4-tiny program; an oversize
configuration is refused with the numbers; the estimate scales with the PE array; the kernel binds the buffers'
storage as the architecture maps them."""
import re

import pytest

from generator.backends import hls
from generator.backends.hls.block_design import block_design
from generator.estimate import hls_resources
from generator.spec import arch, isa, memories
from generator.spec.board import known_boards, load_board
from generator.exec.rtl import BOARD_32X48
from helpers import board, compiled_model


@pytest.mark.parametrize("name", known_boards())
def test_every_board_fits_with_its_program(name):
    """The HLS kernel of every board file fits its part with the program in its ROM, or (kv260's and ultra96v2's
    XXS buffers: a long program) with an empty ROM, the program fetched from DDR (invoke build's fallback)."""
    b = load_board(name)
    c = compiled_model(name, "int8-asym")
    n = len(c.program.insns)
    if name in ("kv260", "ultra96v2"):
        assert hls_resources.estimate(b, n).over() == ["bram36"]
        n = 0
    e = hls_resources.check(b, n)
    assert e.over() == []
    assert e.dsp48e2 == b.accelerator.tn * b.accelerator.tm + e.dsp_post + b.accelerator.tm + hls_resources.pre_dsp()
    for k, v in e.used().items():   # URAM may stay unused (zcu19eg's pumped block: every kernel memory in BRAM)
        assert 0 < v <= e.capacity[k] or (k == "uram" and v == 0)
    assert sum(m.uram for m in e.memories) <= b.resources.uram


def test_oversize_configuration_is_refused_with_the_numbers(tmp_path, monkeypatch):
    b = board("ultra96v2", tn=32, tm=32)
    with pytest.raises(hls_resources.ResourceError) as ei:
        hls_resources.check(b)
    msg = str(ei.value)
    e = hls_resources.estimate(b)
    assert "ultra96v2" in msg and "xczu3eg" in msg and "Tn=32 x Tm=32" in msg
    assert f"dsp48e2 {e.dsp48e2} / 360 (over)" in msg and e.dsp48e2 > 360
    assert re.search(r"bram36 [\d.]+ / 216", msg)
    # the build refuses it before the compile, and renders nothing
    from generator.flows import build
    from generator.flows.inputs import FlowError
    from generator.flows.request import Target

    def no_compile(*a, **k):
        raise AssertionError("compiled a configuration that does not fit")

    monkeypatch.setattr(build, "compile_request", no_compile)
    with pytest.raises(FlowError, match=r"dsp48e2 \d+ / 360 \(over\)"):
        build.build_flow(Target(board=b), out=tmp_path / "b")
    assert not (tmp_path / "b" / "hls").exists()


def test_estimate_scales_with_the_pe_array():
    e1 = hls_resources.estimate(board("zcu19eg", tn=16, tm=16))
    e2 = hls_resources.estimate(board("zcu19eg", tn=16, tm=32))
    assert e1.dsp_pe == 256 and e2.dsp_pe == 2 * e1.dsp_pe
    assert e2.dsp_post == 2 * e1.dsp_post == 2 * 16 * hls_resources.DSP_PER_REQUANT_LANE == 32
    assert e2.lut > e1.lut and e2.ff > e1.ff
    # the instruction ROM costs BRAM: 1024 x 256 bits as 15 BRAM18 (1K x 18), cheaper than 8 BRAM36 (512 x 72)
    b = load_board("zcu19eg")
    assert hls_resources.estimate(b, 1024).bram36 - hls_resources.estimate(b, 0).bram36 == 7.5


def test_memory_mapping_rules():
    assert memories.bram36_for(1024, 16) == 0.5          # one BRAM18 (1K x 18)
    assert memories.bram36_for(8192, 48) == 12            # 2K x 18, 3 wide x 4 deep (or 8K x 4, 12 wide)
    assert memories.bram36_for(512, 256) == 4             # 512 x 72, 4 wide
    assert memories.uram_for(8192, 48) == 2 and memories.uram_for(4096, 128) == 2
    e = hls_resources.estimate(board(**BOARD_32X48))       # zcu19eg's single-rate 32x48 block
    impl = {m.name: m.impl for m in e.memories}
    assert impl["ACC"] == "uram" and impl["PBUF"] == "lutram" and impl["cmd FIFOs"] == "bram"
    assert impl["token FIFOs"] == "bram" and impl["run FIFOs"] == impl["done FIFOs"] == "lutram"
    no_uram = hls_resources.estimate(load_board("zcu102"))
    assert no_uram.uram == 0 and all(m.impl != "uram" for m in no_uram.memories)


def test_kernel_binds_the_estimated_storage(tmp_path):
    b = load_board("zcu104")                # (its 32 x 32: WBUF in LUTRAM, ACC in URAM)
    hls.render(b, tmp_path)
    src = (tmp_path / "accel.cpp").read_text()
    # every buffer (obuf too: post -> store) is a memory port onto the block design's RAMs, none inside an IP
    got = dict(re.findall(r"BLOCK_DESIGN_MEMORY (\w+) type=\w+ impl=(\w+)", src))
    assert got == memories.storage_binding(b) and got["wbuf"] == "lutram" and got["acc"] == "uram"
    assert "obuf" in got and "BIND_STORAGE" not in src


@pytest.mark.parametrize("name", known_boards())
def test_block_design_structure_is_counted(name, tmp_path):
    """The block design's memories and FIFOs (what vivado_bd.tcl instantiates, block_design) are the
    estimate's: one RAM per bank (WBUF: per bank and row, OBUF, PBUF, TBUF: per lane; OBUF's lanes at least a beat's
    bytes), lanes side by side in one word, each
    mapped as its group; the 14 stream FIFOs at the kernel's depths (token queues at isa.TOKEN_QUEUE_DEPTH)."""
    from generator.spec import isa
    b = load_board(name)
    a = b.accelerator
    e = hls_resources.estimate(b)
    by = {m.name: m for m in e.memories}
    bd = block_design(b)
    for m in bd["memories"]:
        g = by[m["name"]]
        assert (len(m["ports"]), m["depth"], m["width"], m["impl"]) == (g.count, g.depth, g.width, g.impl)
        assert 2 ** m["addr_lsb"] >= m["width"] // 8
    assert by["IBUF"].count == 2 * a.tn and by["IBUF"].width == 16          # one memory per bank and lane
    assert by["WBUF"].count == 2 * a.tm and by["WBUF"].width == 16 * a.tn
    assert by["ACC"].count == 2 and by["ACC"].width == a.tm * max(a.acc_bits_int8, a.acc_bits_int16)
    assert by["PBUF"].count == by["TBUF"].count == a.tm
    k = -(-a.axi_data_width_bits // 8 // a.tm)          # OBUF: k words of Tm lanes per row, k x Tm >= a beat's bytes
    assert (by["OBUF"].count, by["OBUF"].depth) == (k * a.tm, -(-(a.obuf_bytes // a.tm) // k))
    # PBUF / TBUF: one memory per lane of the raw 16-byte record (pbuf[PBUF_ROWS][TM], lanes partitioned)
    assert by["PBUF"].width == by["TBUF"].width == 128 and by["TBUF"].depth == isa.TBUF_ROWS
    assert by["PBUF"].depth * a.tm >= a.pbuf_entries > (by["PBUF"].depth - 1) * a.tm
    # IBUF (LOAD writes two rows a cycle, COMPUTE reads the pixel pair) and ACC are true dual port, the rest simple
    assert {m.name for m in e.memories if m.tdp} == {"IBUF", "ACC", "PRE line buffers"}   # (PRE's: inside the IP)
    assert [m["tdp"] for m in bd["memories"]] == [int(m["name"] in ("IBUF", "ACC")) for m in bd["memories"]]
    fifos = [m for m in e.memories if memories.is_fifo(m)]
    assert sum(m.count for m in fifos) == len(bd["streams"]) == 14
    tok = by["token FIFOs"]
    assert tok.count == 4 and tok.depth == isa.TOKEN_QUEUE_DEPTH
    assert by["cmd FIFOs"].count == 3 and by["cmd FIFOs"].depth == arch.CMD_QUEUE_DEPTH
    # each FIFO costs its memory and its control logic
    assert e.bram36 == sum(m.bram36 for m in e.memories) and by["cmd FIFOs"].bram36 == 3 * 4
    no_fifo_lut = e.lut - sum(m.lut for m in fifos) - 14 * hls_resources.LUT_PER_FIFO
    assert no_fifo_lut > 0
    # the rendered kernel states each block-design memory with its count and shape
    hls.render(b, tmp_path)
    src = (tmp_path / "accel.cpp").read_text()
    for m in bd["memories"]:
        assert re.search(f"BLOCK_DESIGN_MEMORY {m['var']} type=\\w+ impl={m['impl']} memories={len(m['ports'])} "
                         f"depth={m['depth']} width={m['width']}\n", src), m["var"]


def test_rtl_binding_keeps_the_per_lane_shapes():
    """The RTL's ram_style follows the mapping rule over its own per-lane memories, not the block design's wide
    words (which map the 32x48 block's IBUF to URAM instead): the 32x48's ACC lanes go to URAM, the rest of its
    lanes and PRE's line buffers (``PRE_LB``) to block RAM. zcu19eg's pumped 32x40 block (the board file's: two
    copies of every IBUF and ACC lane memory, WBUF's two banks in one memory per row) fits in block RAM alone."""
    from generator.backends.rtl import RAM_STYLES, ram_styles
    b = board(**BOARD_32X48)
    lanes = memories.storage_binding(b, per_lane=True)
    assert lanes == {"ibuf": "bram", "wbuf": "bram", "acc": "uram", "obuf": "bram", "pbuf": "lutram", "tbuf": "lutram"}
    assert ram_styles(b) == {**{k.upper(): RAM_STYLES[v] for k, v in lanes.items()}, "PRE_LB": RAM_STYLES["bram"]}
    assert memories.storage_binding(b)["ibuf"] == "uram"
    pumped = load_board("zcu19eg")
    assert pumped.accelerator.pump == 2
    lanes = memories.storage_binding(pumped, per_lane=True)
    assert lanes == {"ibuf": "bram", "wbuf": "bram", "acc": "bram", "obuf": "bram", "pbuf": "lutram", "tbuf": "lutram"}
    assert ram_styles(pumped) == {**{k.upper(): RAM_STYLES[v] for k, v in lanes.items()}, "PRE_LB": RAM_STYLES["bram"]}


def test_true_dual_port_memories_take_the_tdp_shapes_and_never_lutram():
    """A true-dual-port memory has no 512 x 72 / 512 x 36 simple-dual-port shape (UG573: RAMB36E2 36 bits, RAMB18E2
    18 bits wide per port in TDP) and is never LUTRAM (distributed RAM writes through one port, UG974
    XPM_MEMORY_DPDISTRAM): the HLS kernel's IBUF banks cost what the TDP shapes give, and an IBUF shallow enough for
    LUTRAM is block RAM in the estimate, the block design and the kernel's storage binding (SDP LUTRAM stays)."""
    assert memories.bram36_for(512, 72) == 1 and memories.bram36_for(512, 72, tdp=True) == 2
    assert memories.bram36_for(512, 36, tdp=True) == 1              # 1K x 36 (or two 1K x 18 halves)
    b = board("ultra96v2", tn=16, tm=16, ibuf_bank_bytes=32768)
    ibuf = next(m for m in hls_resources.estimate(b).memories if m.name == "IBUF")
    # 2 x 16 lane memories of 2048 x 16: one BRAM36 as 2K x 18 (or two BRAM18 halves as 1K x 18) each
    assert ibuf.tdp and ibuf.impl == "bram" and ibuf.count == 32 and ibuf.bram36 == 32
    small = board("zcu19eg", ibuf_bank_bytes=2048)                  # 64 rows per lane: rule 1 would say LUTRAM
    raw = {m.name: m for m in memories.bind(memories.kernel_memories(small), small.resources.uram)}
    assert raw["IBUF"].impl == "lutram"
    got = {m.name: m for m in memories.bound_kernel_memories(small)}
    # 64 lane memories of 64 x 16: half a BRAM36 (one BRAM18, 1K x 18) each
    assert got["IBUF"].impl == "bram" and got["IBUF"].lut == 0 and got["IBUF"].bram36 == 64 / 2
    assert memories.storage_binding(small)["ibuf"] == "bram"
    bd = {m["name"]: m for m in block_design(small)["memories"]}
    assert bd["IBUF"]["primitive"] == "block" and bd["PBUF"]["primitive"] == "distributed"   # SDP LUTRAM stays
    assert hls_resources.estimate(small).bram36 == sum(m.bram36 for m in got.values()) + \
        sum(m.bram36 for m in hls_resources.pre_memories(small))


def test_byte_enabled_lutram_takes_primitives_per_granule():
    """The RTL's byte-enabled LUTRAM (WBUF, PBUF, TBUF: 8-bit write enables) costs what its primitives take per
    granule (UG574): at 64 words two RAM64M8 (7 bits each, 8 LUTs) per byte, at 32 words one RAM32M16 (14 bits);
    kv260's 32 x 16 WBUF (16 memories of 64 words x 512 bits, both 32-word banks in one) is 2,048 RAM64M8 = 16,384
    LUTs (Yosys mapped kv260's 32 x 32 WBUF, 32 such memories, to 4,096 RAM64M8: ``invoke resources --board kv260
    --rtl``). WBUF banks share one memory unless they are
    33-64 words deep (two LUTRAMs of 64 words cost the same LUTs as one of 128 and need no multiplexer inside)."""
    assert memories.lutram_luts(64, 512, 8) == 64 * 16 and memories.lutram_luts(32, 512, 8) == 64 * 8
    assert memories.lutram_luts(64, 512) == 512                       # (no granule: one LUT per bit)
    wbuf = next(m for m in memories.lane_memories(load_board("kv260")) if m.name == "WBUF")
    assert (wbuf.count, wbuf.depth, wbuf.granule) == (16, 64, 8)
    assert wbuf.count * memories.lutram_luts(wbuf.depth, wbuf.width, wbuf.granule) == 2048 * 8
    assert [memories.wbuf_one_memory(w) for w in (16, 32, 33, 64, 65, 144)] == [True, True, False, False, True, True]
