"""The HLS kernel's OBUF with K = ceil(AXI bytes / Tm) words of Tm lanes per row (``hls_templates/config.h.j2``
OBUF_K, :func:`generator.spec.memories.hls_obuf_k`): C-simulation against the golden simulator where K > 1."""
import zlib

import numpy as np
import pytest

from generator.exec import csim, runtime
from generator.exec.golden import GoldenSim
from generator.frontend.modelgen import Builder
from generator.spec import isa
from helpers import compile_small, quantize_input
from layer_suite import KINDS


def _golden(prog, ddr, bases):
    g = ddr.copy()
    GoldenSim(prog.hw, g, bases).run(prog.blob)
    return g


@pytest.mark.parametrize("tn,tm", [(8, 8), (16, 24)], ids=["K4", "K2-tm24"])
def test_csim_obuf_rows_of_several_words_bit_exact(tmp_path, tn, tm):
    """The kernel's OBUF with K = ceil(AXI bytes / Tm) words per row (generator/spec/memories.py hls_obuf_k) on a
    256-bit m_axi: Tm 8 (K = 4: a beat's 32 elements span four words of a row, or two rows) and Tm 24 (K = 2, a Tm
    that is not a power of two); channel-offset concat, upsampling and SPP layers in int8 and int16 (odd byte
    starts): the C-simulation writes DDR exactly as the golden simulator."""
    from helpers import board
    from generator.exec.rtl import TINY
    from generator.spec.memories import hls_obuf_k
    brd = board(**dict(TINY, tn=tn, tm=tm, axi_data_width_bits=256, hp_ports=2, ibuf_bank_bytes=6144,
                       wbuf_bank_bytes=6 * 1024 * tm // 8))
    assert hls_obuf_k(tm, 32) == {8: 4, 24: 2}[tm]
    exe = csim.compile_kernel(brd, tmp_path / "k")
    for kind, mode in [("concat", "int8-asym"), ("upsample", "int16-sym"), ("spp", "int8-asym"),
                       ("conv3x3_s2", "int16-asym")]:
        build, ic = KINDS[kind]
        b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
        outs = build(b)
        gq, prog, xs = compile_small(b.model(list(outs if isinstance(outs, tuple) else (outs,))), mode, True, brd)
        ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
        gold = _golden(prog, ddr, bases)
        out, info = csim.run_csim(exe, ddr, bases, prog.blob, tmp_path / f"{kind}-{mode}")
        assert info["status"] == 0, (kind, mode, isa.status_names(info["status"]))
        diff = np.flatnonzero(out != gold)
        assert diff.size == 0 and not np.array_equal(gold, ddr), \
            f"{kind} {mode}: {diff.size} DDR bytes differ, first at {diff[:8]}"
