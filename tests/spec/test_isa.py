"""ISA encoding, decoding and disassembly; the golden simulator's error behaviour."""
import numpy as np
import pytest

from generator.exec import run_golden
from generator.spec import isa
from generator.spec.hw import HwConfig
from generator.exec.golden import GoldenSim, SimError
from helpers import board, compile_small
from generator.frontend.modelgen import Builder


@pytest.mark.parametrize("op", list(isa.FORMATS))
def test_encode_decode_roundtrip_random_fields(op):
    rng = np.random.default_rng(isa.OPCODES[op])
    for _ in range(50):
        f = {}
        for name, width in isa.HEADER[1:] + isa.FORMATS[op]:
            if (op, name) in isa.SIGNED_FIELDS:
                f[name] = int(rng.integers(-(1 << (width - 1)), 1 << (width - 1)))
            else:
                f[name] = int(rng.integers(0, 1 << width, dtype=np.uint64))
        ins = isa.make(op, **f)
        raw = isa.encode(ins)
        assert len(raw) == isa.INSN_BYTES
        back = isa.decode(raw)
        assert back.op == op and back.f == ins.f


def test_field_positions_are_little_endian_from_bit_0():
    raw = isa.encode(isa.make("LOAD", push_next=1, rows=3))
    word = int.from_bytes(raw, "little")
    assert word & 0xF == isa.OPCODES["LOAD"]
    assert (word >> 7) & 1 == 1                      # push_next is header bit 7
    name_pos = {n: p for n, p, _ in isa.LAYOUTS["LOAD"]}
    assert (word >> name_pos["rows"]) & 0xFFF == 3


def test_out_of_range_field_and_unknown_names_are_errors():
    with pytest.raises(isa.IsaError, match="rows=4096 does not fit"):
        isa.make("LOAD", rows=4096)
    with pytest.raises(isa.IsaError, match="unknown field"):
        isa.make("STORE", bogus=1)
    with pytest.raises(isa.IsaError, match="unknown opcode"):
        isa.make("FOO")


def test_illegal_opcode_and_dirty_unused_bits_are_rejected():
    with pytest.raises(isa.IsaError, match="illegal opcode 15"):
        isa.decode(bytes([15]) + bytes(isa.INSN_BYTES - 1))
    raw = bytearray(isa.encode(isa.make("END")))
    raw[-1] = 0x80
    with pytest.raises(isa.IsaError, match="unused bits"):
        isa.decode(bytes(raw))


def test_disassembler_names_fields():
    text = isa.disasm(isa.make("LOAD", buf=1, base_reg=3, ddr_offset=0x40, pop_next=1), 5)
    assert "LOAD" in text and "buf=WBUF" in text and "base_reg=OUTPUT" in text and "0x40" in text
    assert "[pop_next]" in text and text.strip().startswith("5:")


def _small_program(bits=8):
    b = Builder([1, 4, 8, 8], seed=1)
    m = b.model([b.leaky(b.conv("x", 8, k=3))])
    return compile_small(m, "int8-asym" if bits == 8 else "int16-sym")


def test_golden_sim_refuses_other_configuration_and_isa_version():
    gq, prog, xs = _small_program()
    other = HwConfig.from_board(board(tm=16), 8)
    with pytest.raises(SimError, match=f"CONFIG for a Tn={prog.hw.tn} Tm={prog.hw.tm} .* this one is Tn=32 Tm=16"):
        GoldenSim(other, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS}).run(prog.blob)
    insns = list(prog.insns)
    insns[0] = isa.make("CONFIG", **{**{k: v for k, v in insns[0].f.items() if k != "opcode"}, "isa_version": 99})
    with pytest.raises(SimError, match="ISA version 99"):
        GoldenSim(prog.hw, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS}).run(isa.encode_program(insns))


def test_golden_sim_reports_illegal_opcode_and_deadlock():
    gq, prog, xs = _small_program()
    blob = bytearray(prog.blob)
    blob[isa.INSN_BYTES * 3] = 0x0F        # opcode 15 in instruction 3
    with pytest.raises(SimError, match="instruction 3: illegal opcode"):
        GoldenSim(prog.hw, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS}).run(bytes(blob))
    dead = [prog.insns[0], isa.make("COMPUTE", pop_prev=1, oh=1, ow=1, og=1, ig=1, kh=1, kw=1, stride=1,
                                     in_cols=1), isa.make("END")]
    with pytest.raises(SimError, match="deadlock"):
        GoldenSim(prog.hw, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS}).run(isa.encode_program(dead))


def test_missing_dependency_token_corrupts_data_like_hardware():
    """Dropping the write-after-read tokens lets loads overwrite banks still in use: the simulator must then
    produce different results (it orders modules by time, not program order)."""
    from helpers import quantize_input

    b = Builder([1, 40, 24, 24], seed=2)
    m = b.model([b.leaky(b.conv("x", 40, k=3))])
    gq, prog, xs = compile_small(m, "int8-asym", True, board(ibuf_bank_bytes=4096, pump=1))
    xq = quantize_input(gq, xs[0])
    good, _, _, _ = run_golden(prog, gq, xq)
    import copy
    bad = copy.deepcopy(prog)
    n_pops = 0
    for i in bad.insns:
        if i.op == "LOAD" and i.f["pop_next"]:
            i.f["pop_next"] = 0
            n_pops += 1
        if i.op == "COMPUTE":
            i.f["push_prev"] = 0
    assert n_pops > 0
    out, _, _, _ = run_golden(bad, gq, xq)
    assert any(not np.array_equal(good[k], out[k]) for k in good)


def test_timing_engine_alone_counts_what_the_golden_simulator_counts():
    """The scheduler times programs with the timing engine alone (codegen imports no executor): the same cycles,
    start and end of every instruction as the golden simulator; a deadlock is reported with its status bit."""
    import ast
    from generator import ROOT_DIR
    from generator.spec.timing_engine import ModuleTimer, TokenError, program_cycles

    gq, prog, xs = _small_program()
    res = GoldenSim(prog.hw, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS}).run(prog.blob,
                                                                                           functional=False)
    timer = ModuleTimer(prog.hw, prog.insns)
    assert timer.run() == res.cycles == program_cycles(prog.hw, prog.insns)
    assert np.array_equal(timer.start, res.start) and np.array_equal(timer.end, res.end)
    assert timer.busy == res.busy and timer.stall == res.stall
    dead = [prog.insns[0], isa.make("COMPUTE", pop_prev=1, oh=1, ow=1, og=1, ig=1, kh=1, kw=1, stride=1,
                                     in_cols=1), isa.make("END")]
    with pytest.raises(TokenError, match="deadlock") as err:
        program_cycles(prog.hw, dead)
    assert err.value.status == "WATCHDOG"
    for f in (ROOT_DIR / "generator" / "codegen").glob("*.py"):
        nodes = list(ast.walk(ast.parse(f.read_text())))
        mods = [n.module or "" for n in nodes if isinstance(n, ast.ImportFrom)]
        mods += [a.name for n in nodes if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in mods if m.startswith("generator.exec")], f"{f.name} imports an executor"


def test_lane_pitch_and_the_arrays_the_rtl_builds():
    """isa.lane_pitch: the power of two at or above the lane count; arch.array_error: non-power-of-two Tm only as
    a multiple of 8 of at least the m_axi bytes whose bypass window fits two IBUF words, m_axi >= 128 bits."""
    from generator.spec.arch import array_error
    assert [isa.lane_pitch(n) for n in (1, 2, 3, 8, 24, 48, 64, 1536)] == [1, 2, 4, 8, 32, 64, 64, 2048]
    with pytest.raises(ValueError):
        isa.lane_pitch(0)
    assert not any(array_error(tn, tm, 128) for tn, tm in ((32, 48), (16, 24), (32, 40), (8, 8), (16, 8), (8, 16)))
    assert "power of two" in array_error(24, 32, 128)                  # Tn: the adder trees
    assert "multiple of 8" in array_error(32, 20, 128)
    assert "multiple of 8" in array_error(32, 12, 128) and "multiple of 8" in array_error(32, 8 + 4, 256)
    assert "two IBUF words" in array_error(8, 24, 128)                 # 8 - 8 + 24 > 16
    assert "128 bits" in array_error(32, 48, 64)


def test_golden_sim_flags_acc_reads_in_another_column_parity_on_a_pumped_array():
    """A double-pumped array (pump 2) keeps odd tile columns' ACC words in a second copy (rtl/buffers.sv): the
    golden simulator refuses a POST or an accumulating COMPUTE that reads a word at another column parity than
    the COMPUTE that wrote it (ow 4 written, ow 3 read: word 3 is column 3 written, column 0 read), and accepts the
    same reads single-pumped or in the writer's geometry."""
    from generator.exec.acc_layout import AccLayoutError

    def sim(pump):
        hw = HwConfig.from_board(board(pump=pump), 8)
        g = GoldenSim(hw, np.zeros(1 << 16, np.uint8), {k: 0 for k in isa.BASE_REGS})
        g.pbuf["shift_pos"], g.pbuf["shift_neg"] = 1, 1      # (a valid requantization for the POSTs)
        return g

    conv = dict(oh=2, ow=4, og=1, ig=1, kh=1, kw=1, stride=1, in_cols=4, acc_init=1)
    post = dict(oh=2, ow=4, og=1, out_rows=2, out_cols=4, pool_k=1, pool_s=1, up=1)
    for pump in (1, 2):
        s = sim(pump)
        s._compute(0, isa.make("COMPUTE", **conv).f)
        s._compute(1, isa.make("COMPUTE", **dict(conv, acc_init=0)).f)      # the writer's geometry: fine
        s._post(2, isa.make("POST", **post).f)
        bad = [("COMPUTE", s._compute, dict(conv, ow=3, in_cols=3, acc_init=0)),
               ("POST", s._post, dict(post, ow=3, out_cols=3))]
        for op, run, f in bad:
            if pump == 1:
                run(3, isa.make(op, **f).f)
            else:
                with pytest.raises(AccLayoutError, match=f"instruction 3: {op} reads ACC word 3 in a column of "
                                                         f"parity 0, written at parity 1"):
                    run(3, isa.make(op, **f).f)
