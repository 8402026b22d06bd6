"""One error status everywhere: every bad-program case of :data:`generator.spec.isa.STATUS_BITS`, built from a small real
program (a 1x1 convolution compiled for the TINY configuration, 28 instructions), run on every executor:

* the golden simulator (``SimError.status``),
* the HLS kernel's C-simulation (rendered and compiled with g++ once per session, one run per case),
* the RTL under cocotb + Verilator (one build per session, shared with tests/exec/test_rtl.py; one run per case),
* the fake PYNQ device whose accelerator is the golden simulator, through the PYNQ driver (``AcceleratorError``);

all must report exactly the same status word, the RTL must stop by itself (ap_done, no timeout), and where the
error precedes the program's first STORE ("pristine" cases) no executor may have written DDR.

The DDR range checks use the buffer sizes the driver allocates (each base region's size rounded up to a page),
written to the ``*_size`` registers of every executor."""
from __future__ import annotations

import json
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from generator.backends import hls

from generator.spec import isa
from host.manifest import page_round
from host.registers import SIZE_REGS

from generator.exec import runtime
from generator.flows.artifacts import manifest
from generator.flows.pipeline import Compiled
from generator.quant.quantize import QuantConfig
from generator.exec.golden import GoldenSim, SimError
from generator.exec.rtl import TINY
from helpers import board, compile_small, quantize_input, shared_executor
from generator.frontend.modelgen import Builder
from layer_suite import KINDS

pytest.importorskip("cocotb_tools")
from generator.exec.rtl import verilator  # noqa: E402

pytestmark = pytest.mark.skipif(verilator() is None, reason="verilator not installed (run ./setup.sh)")

MODE, PER_CHANNEL = "int8-asym", True


@pytest.fixture(scope="module")
def base():
    """The good program, its DDR image, base addresses and buffer sizes (the 1x1-convolution layer case)."""
    brd = board(**TINY)
    build, ic = KINDS["conv1x1"]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(b"conv1x1") % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), MODE, PER_CHANNEL, brd)
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    sizes = {k: page_round(prog.layout.sizes[k]) for k in isa.BASE_REGS}
    GoldenSim(prog.hw, ddr.copy(), bases, sizes).run(prog.blob)      # the good program runs
    return dict(board=brd, gq=gq, prog=prog, ddr=ddr, bases=bases, sizes=sizes)


@pytest.fixture(scope="session")
def csim_exe():
    """The C-simulation executor of TINY (one g++ build for every case, shared with the other test modules)."""
    return shared_executor("csim", board(**TINY))


@pytest.fixture(scope="session")
def rtl():
    """The RTL executor of TINY (one Verilator build, shared with tests/exec/test_rtl.py)."""
    return shared_executor("rtl", board(**TINY), "tiny")


# ------------------------------------------------------------------------------------------------ the cases
def _insns(prog):
    return [isa.Insn(i.op, dict(i.f)) for i in prog.insns]


def _patch(prog, k, **fields):
    ins = _insns(prog)
    ins[k].f.update(fields)
    return isa.encode_program(ins)


def _raw(prog, k, byte, value, mask=0xFF):
    """Instruction k's byte ``byte`` set to ``value`` (bits of ``mask``), bypassing the encoder's checks."""
    raw = bytearray(prog.blob)
    i = k * isa.INSN_BYTES + byte
    raw[i] = (raw[i] & ~mask & 0xFF) | value
    return bytes(raw)


def _before_end(prog, extra):
    ins = _insns(prog)
    return isa.encode_program(ins[:-1] + extra + ins[-1:])


def _first(prog, op, **match):
    return next(k for k, i in enumerate(prog.insns) if i.op == op and all(i.f[f] == v for f, v in match.items()))


def _cases():
    """name -> (program builder(base) -> blob, status bit name, pristine: the error precedes the first STORE)."""
    P = isa.BUFFERS
    return {
        "illegal_opcode": (lambda b: _raw(b["prog"], 3, 0, 0xF, 0x0F), "ILLEGAL_OPCODE", True),
        "unused_bits": (lambda b: _raw(b["prog"], 4, isa.INSN_BYTES - 1, 0x80), "ILLEGAL_OPCODE", True),
        "flag_without_neighbour": (lambda b: _patch(b["prog"], 1, pop_prev=1), "ILLEGAL_OPCODE", True),
        "config_missing": (lambda b: b["prog"].blob[isa.INSN_BYTES:], "CONFIG_MISSING", True),
        "config_tn": (lambda b: _patch(b["prog"], 0, tn=16), "CONFIG_MISMATCH", True),
        "config_id": (lambda b: _patch(b["prog"], 0, config_id=b["prog"].hw.config_id ^ 1), "CONFIG_MISMATCH", True),
        # an int16 LOAD (its own prec) into the int16 bank's first word past its end, inside the int8 bank
        "ibuf_load_int16": (lambda b: _patch(b["prog"], _first(b["prog"], "LOAD", buf=P["IBUF"]), prec=1,
                                             dst_word=b["prog"].hw.at(16).ibuf_words), "OUT_OF_RANGE", True),
        "isa_version": (lambda b: _patch(b["prog"], 0, isa_version=isa.ISA_VERSION + 1), "ISA_VERSION_MISMATCH", True),
        "ddr_load": (lambda b: _patch(b["prog"], _first(b["prog"], "LOAD", buf=P["IBUF"]),
                                      ddr_offset=b["sizes"]["INPUT"]), "OUT_OF_RANGE", True),
        "ddr_store": (lambda b: _patch(b["prog"], _first(b["prog"], "STORE"), ddr_offset=b["sizes"]["OUTPUT"] - 1),
                      "OUT_OF_RANGE", True),
        "ibuf_load": (lambda b: _patch(b["prog"], _first(b["prog"], "LOAD", buf=P["IBUF"]),
                                       dst_word=b["prog"].hw.ibuf_words), "OUT_OF_RANGE", True),
        "wbuf_load": (lambda b: _patch(b["prog"], _first(b["prog"], "LOAD", buf=P["WBUF"]),
                                       dst_word=b["prog"].hw.wbuf_words), "OUT_OF_RANGE", True),
        "pbuf_load": (lambda b: _patch(b["prog"], _first(b["prog"], "LOAD", buf=P["PBUF"]),
                                       dst_word=b["prog"].hw.pbuf_entries - 1), "OUT_OF_RANGE", True),
        "ibuf_compute": (lambda b: _patch(b["prog"], _first(b["prog"], "COMPUTE"), ibuf_word=b["prog"].hw.ibuf_words),
                         "OUT_OF_RANGE", True),
        "cols_compute": (lambda b: _patch(b["prog"], _first(b["prog"], "COMPUTE"), in_cols=1), "OUT_OF_RANGE", True),
        "acc_compute": (lambda b: _patch(b["prog"], _first(b["prog"], "COMPUTE"), oh=b["prog"].hw.acc_words),
                        "OUT_OF_RANGE", True),
        "wbuf_compute": (lambda b: _patch(b["prog"], _first(b["prog"], "COMPUTE"), wbuf_word=b["prog"].hw.wbuf_words),
                         "OUT_OF_RANGE", True),
        "acc_post": (lambda b: _patch(b["prog"], _first(b["prog"], "POST"), oh=b["prog"].hw.acc_words),
                     "OUT_OF_RANGE", True),
        "obuf_store": (lambda b: _patch(b["prog"], _first(b["prog"], "STORE"), src_pitch=255), "OUT_OF_RANGE", True),
        # POST's PBUF row: pbuf_oc a multiple of the row pitch (isa.lane_pitch(Tm)), its groups within the rows
        "pbuf_post_pitch": (lambda b: _patch(b["prog"], _first(b["prog"], "POST"), pbuf_oc=1), "OUT_OF_RANGE", True),
        "pbuf_post_rows": (lambda b: _patch(b["prog"], _first(b["prog"], "POST"), pbuf_oc=b["prog"].hw.pbuf_index),
                           "OUT_OF_RANGE", True),
        "missing_end": (lambda b: b["prog"].blob[:-isa.INSN_BYTES], "NO_END", False),
        "token_underflow": (lambda b: _patch(b["prog"], 1, pop_next=1), "WATCHDOG", True),
        "token_overflow": (lambda b: _before_end(b["prog"], [isa.make("SYNC", push_next=1)]
                                                 * (isa.TOKEN_QUEUE_DEPTH + 1)), "TOKEN_OVERFLOW", False),
        "tokens_left": (lambda b: _before_end(b["prog"], [isa.make("SYNC", push_next=1)]), "TOKENS_LEFT", False),
        "partial_insn": (lambda b: b["prog"].blob + bytes(isa.INSN_BYTES // 2), "PARTIAL_INSN", True),
    }


CASES = _cases()


# ------------------------------------------------------------------------------------------------ executors
def run_golden(b, blob):
    ddr = b["ddr"].copy()
    try:
        GoldenSim(b["prog"].hw, ddr, b["bases"], b["sizes"]).run(blob)
    except SimError as e:
        assert e.insn is None or f"instruction {e.insn}:" in str(e), f"the message does not name instruction {e.insn}: {e}"
        return e.status, ddr
    return 0, ddr


def run_csim(b, blob, exe, wd):
    run = exe.run(b["prog"], b["ddr"], b["bases"], b["sizes"], blob=blob)
    return run.status, run.ddr


def run_rtl(b, blob, rtl, name):
    fast = len(blob) > 1 << 16          # the token-overflow program (2 MB): no DDR read latency, or it takes minutes
    run = rtl.run(b["prog"], b["ddr"], b["bases"], b["sizes"], blob=blob, case=f"cases/status-{name}",
                  timeout_cycles=2_000_000, rd_latency=0 if fast else None)
    assert not run.timeout, "a bad program must stop the RTL (ap_done), not hang it"
    if run.status != isa.status_of("PARTIAL_INSN"):       # (refused by the loader: no run)
        assert run.detail["ctrl"] >> isa.CTRL_BITS["ap_done"] & 1
    return run.status, run.ddr


def write_package(b, blob, d: Path) -> Path:
    """A deployment package of the program ``blob`` (no YOLO heads: statuses only)."""
    prog = b["prog"]
    c = Compiled(graph=None, qgraph=b["gq"], program=prog, hw=prog.hw, quant=QuantConfig.from_mode(MODE, PER_CHANNEL),
                 board=b["board"], model_path=Path(), seconds={})
    m = manifest(c)
    m["heads"], m["n_insns"] = [], len(blob) // isa.INSN_BYTES
    d.mkdir(parents=True, exist_ok=True)
    (d / "manifest.json").write_text(json.dumps(m))
    (d / "program.bin").write_bytes(blob)
    (d / "weights.bin").write_bytes(prog.weights)
    return d


def run_pynq(b, blob, d: Path):
    """The driver over the golden-simulator PYNQ device: register programming (base addresses, sizes, program),
    start, wait, status check. Returns (status, whether the device memory changed during the run)."""
    from generator.exec.pynq_golden import GoldenSimDevice, active
    from host.driver import AcceleratorError, YoloAccelerator

    dev = GoldenSimDevice(b["board"], mem_bytes=8 << 20)
    with active(dev):
        try:
            acc = YoloAccelerator(write_package(b, blob, d), timeout_s=120.0)
        except AcceleratorError as e:         # refused before any run (PARTIAL_INSN)
            return e.status, False
        s = acc.sets[0]
        assert dev.accel.size_history == [] and all(s.sizes[k] == b["sizes"][k] for k in isa.BASE_REGS)
        before = dev.mem.copy()
        acc._start(s)
        try:
            acc._wait(s)
            status = 0
        except AcceleratorError as e:
            assert e.bits == isa.status_names(e.status)
            status = e.status
        assert dev.accel.size_history[-1] == s.sizes
        return status, not np.array_equal(before, dev.mem)


# ------------------------------------------------------------------------------------------------ the test
@pytest.mark.parametrize("case", list(CASES))
def test_bad_program_status_on_every_executor(base, csim_exe, rtl, tmp_path, case):
    make, want, pristine = CASES[case]
    blob = make(base)
    bit = isa.status_of(want)
    got, changed, secs = {}, {}, {}
    t = time.time()
    got["golden"], out = run_golden(base, blob)
    changed["golden"] = not np.array_equal(out, base["ddr"])
    secs["golden"], t = time.time() - t, time.time()
    got["csim"], out = run_csim(base, blob, csim_exe, tmp_path / "csim")
    changed["csim"] = not np.array_equal(out, base["ddr"])
    secs["csim"], t = time.time() - t, time.time()
    got["rtl"], out = run_rtl(base, blob, rtl, case)
    changed["rtl"] = not np.array_equal(out, base["ddr"])
    secs["rtl"], t = time.time() - t, time.time()
    got["pynq"], changed["pynq"] = run_pynq(base, blob, tmp_path / "pkg")
    secs["pynq"] = time.time() - t
    print(f"{case}: " + ", ".join(f"{k} {isa.status_names(v)} {secs[k]:.1f} s" for k, v in got.items()))
    bad = {k: isa.status_names(v) for k, v in got.items() if v != bit}
    assert not bad, f"{case}: expected [{want}], got {bad}"
    if pristine:
        wrote = [k for k, v in changed.items() if v]
        assert not wrote, f"{case}: the refused program wrote DDR on {wrote}"


@pytest.mark.parametrize("case", list(CASES))
def test_bad_program_status_csim(base, csim_exe, tmp_path, case):
    """The threaded C-simulation alone against the golden simulator (the fast subset of the test above: no RTL
    build), same status word, no DDR write in the pristine cases."""
    make, want, pristine = CASES[case]
    blob = make(base)
    g, _ = run_golden(base, blob)
    c, out = run_csim(base, blob, csim_exe, tmp_path / "csim")
    assert g == c == isa.status_of(want), f"{case}: golden {isa.status_names(g)}, csim {isa.status_names(c)}"
    if pristine:
        assert np.array_equal(out, base["ddr"]), f"{case}: the refused program wrote DDR in the C-simulation"


def _record_patch(b, **fields) -> np.ndarray:
    """The DDR image with the layer's first PBUF record (channel 0) changed: ``fields`` of isa.PARAM_RECORD."""
    ddr = b["ddr"].copy()
    at = b["bases"]["WEIGHTS"] + next(iter(b["prog"].layout.params.values()))
    rec = {n: (t, off) for n, t, off in isa.PARAM_RECORD}
    for name, v in fields.items():
        t, off = rec[name]
        n = np.dtype(t).itemsize
        ddr[at + off:at + off + n] = np.frombuffer(int(v).to_bytes(n, "little", signed=np.dtype(t).kind == "i"),
                                                   np.uint8)
    return ddr


#: ARITH_OVERFLOW (golden simulator and HLS kernel only: the RTL does not check it, isa.STATUS_BITS): PBUF records
#: the compiler never emits, and the boundary case that is fine
ARITH_CASES = {
    "operand_outside_27_bits": (dict(bias=1 << 40, pre_shift=13), "ARITH_OVERFLOW"),
    "operand_pre_shifted_within": (dict(bias=1 << 40, pre_shift=15), None),
    "pre_shift_over_63": (dict(pre_shift=64), "ARITH_OVERFLOW"),
    "shift_zero": (dict(shift_pos=0, shift_neg=0), "ARITH_OVERFLOW"),
}


@pytest.mark.parametrize("case", list(ARITH_CASES))
def test_requantization_overflow_golden_and_csim(base, csim_exe, case):
    """A PBUF record whose requantization operand (acc + bias) >> pre_shift leaves 27 bits, or whose shifts leave
    their range: ARITH_OVERFLOW from the golden simulator and the C-simulation alike; a large bias pre-shifted into
    range runs, and both write the same DDR."""
    fields, want = ARITH_CASES[case]
    ddr = _record_patch(base, **fields)
    try:
        GoldenSim(base["prog"].hw, gold := ddr.copy(), base["bases"], base["sizes"]).run(base["prog"].blob)
        g = 0
    except SimError as e:
        g = e.status
    run = csim_exe.run(base["prog"], ddr, base["bases"], base["sizes"], blob=base["prog"].blob)
    bit = isa.status_of(want) if want else 0
    assert g == run.status == bit, f"{case}: golden {isa.status_names(g)}, csim {isa.status_names(run.status)}"
    if want is None:
        assert np.array_equal(gold, run.ddr) and not np.array_equal(gold, base["ddr"])


def test_status_table_is_complete_and_rendered(base, tmp_path):
    """One bit per condition, bits 0-3 unchanged since ISA version 1, the table in the HLS header, the SV package
    and the manifest the driver reads."""
    from generator.backends.rtl import render_package

    sb = isa.STATUS_BITS
    assert [sb[n] for n in ("ILLEGAL_OPCODE", "CONFIG_MISMATCH", "ISA_VERSION_MISMATCH", "OUT_OF_RANGE")] == [0, 1, 2, 3]
    assert len(set(sb.values())) == len(sb) and max(sb.values()) < 32
    hdr = (tmp_path / "h")
    hls.render(board(**TINY), hdr)
    text = (hdr / "isa.h").read_text()
    pkg = render_package(board(**TINY))
    for n, v in sb.items():
        assert f"#define STATUS_{n}_BIT {v}" in text
        assert f"localparam int ST_{n} = {v};" in pkg
    assert f"#define TOKEN_QUEUE_DEPTH {isa.TOKEN_QUEUE_DEPTH}" in text
    assert f"localparam int TOKEN_QUEUE_DEPTH = {isa.TOKEN_QUEUE_DEPTH};" in pkg
    m = json.loads((write_package(base, base["prog"].blob, tmp_path / "pkg") / "manifest.json").read_text())
    assert m["status_bits"] == sb and all(r in m["registers"] for r in SIZE_REGS.values())


def test_compiler_checks_tokens_against_the_fifo_depth(base):
    """The compiler refuses a program whose tokens, counted in program order, would overflow a FIFO of
    isa.TOKEN_QUEUE_DEPTH or be left at END; its own programs pass (peak counts are small)."""
    from generator.codegen import ScheduleError, check_tokens

    prog = base["prog"]
    peak = check_tokens(prog.insns)
    assert 0 < max(peak.values()) <= 2
    ins = _insns(prog)
    with pytest.raises(ScheduleError, match="tokens left|must be 0"):
        check_tokens(ins[:-1] + [isa.make("SYNC", push_next=1)] + ins[-1:])
    with pytest.raises(ScheduleError, match="TOKEN_QUEUE_DEPTH"):
        check_tokens(ins[:-1] + [isa.make("SYNC", push_next=1)] * (isa.TOKEN_QUEUE_DEPTH + 1) + ins[-1:])
