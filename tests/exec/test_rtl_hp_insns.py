"""Each distinct LOAD and STORE of YOLOv4-tiny 64x64's int8 program, alone on the RTL (CONFIG, the instruction with
its token fields cleared, END), against the latency model's cycles for it (generator/spec/timing.py
``insn_cycles``), on the 16x32 with a 256-bit m_axi over two HP ports and a 512-bit one over four
(generator/exec/rtl.py ``small-2hp`` / ``small-4hp``): the splitters' read slot, stages and tails
(generator/spec/hp_timing.py) calibrated per instruction. Slow: a Verilator build per configuration and about 90
runs each."""
from __future__ import annotations

import numpy as np
import pytest

from generator.codegen.emit import config_insn
from generator.spec import isa
from generator.spec.timing import insn_cycles

pytest.importorskip("cocotb_tools")
from generator.exec import RtlExecutor  # noqa: E402
from generator.exec.rtl import board_config  # noqa: E402

TOKENS = ("pop_prev", "pop_next", "push_prev", "push_next")
#: RTL - model bounds (cycles) per configuration: a LOAD of IBUF multi-beat pixel runs through the splitters runs
#: 9-10 over, which the model does not price (docs/rtl.md, "Four HP ports"); alone, a STORE on two ports runs 3-4
#: over (HP_SPLIT_WRITE_STAGES was fitted on whole frames, where STOREs overlap POSTs), on four within 2
BOUNDS = {"small-2hp": {"LOAD": (-2, 10), "STORE": (-2, 4)}, "small-4hp": {"LOAD": (-2, 10), "STORE": (-2, 2)}}


@pytest.mark.slow
@pytest.mark.parametrize("cfg", ["small-2hp", "small-4hp"])
def test_each_load_and_store_alone_against_the_model(cfg):
    from generator.flows.pipeline import compile_model
    from generator.flows.rtl_frame import model_at_resolution

    brd = board_config("zcu19eg", cfg)
    prog = compile_model(brd, "int8-asym", model=model_at_resolution(64), progress=False).program
    hw = prog.hw
    bases, cur = {}, 0
    for k in isa.BASE_REGS:
        bases[k] = cur
        cur += -(-prog.layout.sizes[k] // 4096) * 4096
    ddr = np.zeros(cur, np.uint8)
    ex = RtlExecutor(brd, f"zcu19eg-{cfg}")
    base = ex.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), isa.make("END")]), case="insns/base")
    seen, off = set(), []
    for k, ins in enumerate(prog.insns):
        if ins.op not in BOUNDS[cfg]:
            continue
        f = {a: (0 if a in TOKENS else v) for a, v in ins.f.items() if a != "opcode"}
        sig = (ins.op, tuple(sorted((a, v) for a, v in f.items() if a not in ("ddr_offset", "dst_word"))),
               f.get("ddr_offset", 0) % hw.axi_bytes, f.get("ddr_offset", 0) % 4096)
        if sig in seen:
            continue
        seen.add(sig)
        one = isa.make(ins.op, **f)
        r = ex.run(None, ddr, bases, blob=isa.encode_program([config_insn(hw), one, isa.make("END")]),
                   case=f"insns/i{k}")
        assert r.status == 0 and not r.timeout, (k, ins.op, r.status)
        off.append((ins.op, k, r.cycles - base.cycles - insn_cycles(hw, one)))
    bounds = BOUNDS[cfg]
    assert all(any(o == op for o, _, _ in off) for op in bounds), f"the program lacks one of {list(bounds)}"
    bad = [(op, k, d) for op, k, d in off if not bounds[op][0] <= d <= bounds[op][1]]
    assert not bad, f"{cfg}: (op, instruction, RTL - model cycles) beyond {bounds}: {bad}"
