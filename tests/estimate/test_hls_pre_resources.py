"""PRE in the HLS resource estimate (generator/estimate/hls_resources.py): its two line buffers in block RAM at the
depth the kernel's header gives (accel_kernel_pre.h PRE_LINE_BEATS, compiled with g++ for each beat width) and its
multipliers as DSP48E2 slices, both in the totals that `invoke resources` and the build report print; every number
recomputed here from the header and the slice rule, none pasted."""
import math
import re
import shutil
import subprocess

import pytest

from generator.backends.hls.kernel import KERNEL_DIR
from generator.estimate import hls_resources as hr
from generator.exec import csim
from generator.spec import arch, memories
from generator.spec.board import load_board
from helpers import board

PRE_H = KERNEL_DIR / "accel_kernel_pre.h"


def _header_line_beats(tmp_path, axi_bytes: int) -> int:
    """PRE_LINE_BEATS of accel_kernel_pre.h built for ``axi_bytes``-byte beats (g++, the kernel's ap_types)."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    src = tmp_path / f"beats{axi_bytes}.cpp"
    src.write_text('#include <cstdio>\n#include "accel_kernel_pre.h"\n'
                   'int main() { std::printf("%d\\n", (int)(PRE_LINE_BEATS)); return 0; }\n')
    exe = tmp_path / f"beats{axi_bytes}"
    r = subprocess.run(["g++", "-std=c++14", f"-DPRE_AXI_BYTES={axi_bytes}", "-isystem", str(csim.ap_types_dir()),
                        "-I", str(KERNEL_DIR), str(src), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("name,axi_bits", [("zcu19eg", 256), ("ultra96v2", 128)])
def test_pre_line_buffers_in_block_ram(tmp_path, name, axi_bits):
    """Two line buffers of PRE_LINE_BEATS m_axi words (the header's value), true dual port in block RAM as the
    kernel binds them, at the BRAM cost of memories.bram36_for; in the estimate's memories and BRAM total."""
    text = PRE_H.read_text()
    for v in ("line0", "line1"):
        assert f"BIND_STORAGE variable={v} type=ram_t2p impl=bram" in text
    b = board(name, axi_data_width_bits=axi_bits)
    depth = _header_line_beats(tmp_path, axi_bits // 8)
    assert memories.pre_line_beats(axi_bits // 8) == depth
    e = hr.estimate(b)
    pre = [m for m in e.memories if m.name == "PRE line buffers"]
    assert len(pre) == 1
    m = pre[0]
    assert (m.count, m.depth, m.width, m.tdp, m.impl) == (2, depth, axi_bits, True, "bram")
    assert m.bram36 == 2 * memories.bram36_for(depth, axi_bits, tdp=True) > 0 and m.uram == 0
    rest = sum(x.bram36 for x in memories.bound_kernel_memories(b, 0))
    assert e.bram36 == rest + m.bram36
    assert "PRE line buffers" in e.memory_table()


def test_pre_multipliers_in_the_dsp_total():
    """PRE's products as the kernel computes them (per channel of PRE_PIXELS: pre_h for both rows, pre_v, pre_q;
    the row's address products), each ceil(a / 27) x ceil(b / 18) slices in its cheaper orientation, counted in
    DSP48E2 beside the PE array, requantization and element-wise product; the same on every board."""
    text = PRE_H.read_text()
    body = text[text.index("static inline pre_out_t pre_pixel("):text.index("PRE_ELEMS:")]
    per_channel = {n: len(re.findall(rf"\b{n}\(", body)) for n in ("pre_h", "pre_v", "pre_q")}
    assert per_channel == {"pre_h": 2, "pre_v": 1, "pre_q": 1}
    assert re.search(r"for \(int c = 0; c < 3; c\+\+\)", body) and "#pragma HLS UNROLL" in body
    table = {what: n for what, n, _, _ in hr.PRE_PRODUCTS}
    assert table["horizontal pass"] == 3 * per_channel["pre_h"]
    assert table["vertical pass"] == 3 * per_channel["pre_v"] and table["quantization"] == 3 * per_channel["pre_q"]

    def slices(a, b):
        return min(math.ceil(a / arch.DSP_A_BITS) * math.ceil(b / arch.DSP_B_BITS),
                   math.ceil(b / arch.DSP_A_BITS) * math.ceil(a / arch.DSP_B_BITS))
    want = sum(n * slices(a, b) for _, n, a, b in hr.PRE_PRODUCTS)
    assert hr.pre_dsp() == want
    assert hr.dsp_slices(33, 14) == 2 and hr.dsp_slices(27, 18) == 1          # (a 32-bit unsigned operand: two)
    for name in ("zcu19eg", "ultra96v2"):
        b = load_board(name)
        a = b.accelerator
        e = hr.estimate(b)
        assert e.dsp_pre == want
        assert e.dsp48e2 == a.tn * a.tm + e.dsp_post + e.dsp_emul + want
