"""HLS C-simulation (generator/exec/csim.py): the g++ C-simulation of the rendered kernel (the same accel.cpp Vitis HLS
gets) leaves the whole DDR image exactly as the golden simulator does, for every layer kind x quantization mode on the
real and the tiny (tiling) board; POST's identity above the activation table's window (id_above) drawn at the
instruction level; int8 issues half the DSP multiplies of int16; ThreadSanitizer; the co-simulation
build; ROM mode; the identification probe; the build report. Error status bits: tests/exec/test_status.py."""
import dataclasses
import subprocess
import zlib

import numpy as np
import pytest

from generator.backends import hls
from generator.flows.hls_report import report_md
from generator.exec import csim, program_executor, runtime
from generator.exec.golden import GoldenSim
from generator.spec import isa
from host.registers import HW_INFO_MODES
from helpers import compile_small, quantize_input, tiered
from generator.frontend.modelgen import Builder
from layer_suite import BOARDS, KINDS, MODES

MODES24 = sum(1 << b for b in HW_INFO_MODES.values()) << 24   # hw_info: int8 and int16 supported


@pytest.fixture(scope="session")
def kernel(tmp_path_factory):
    """kernel(board_key) -> compiled C-sim binary (empty ROM), built once per hardware configuration."""
    cache = {}

    def get(key):
        if key not in cache:
            cache[key] = csim.compile_kernel(BOARDS[key](), tmp_path_factory.mktemp(f"hls_{key}"))
        return cache[key]
    return get


@pytest.fixture(scope="module")
def executors(tmp_path_factory):
    """executors(board_key) -> (golden, csim) program executors of generator.exec, the C-simulation built once per
    hardware configuration."""
    cache = {}

    def get(key):
        if key not in cache:
            cache[key] = (program_executor("golden"),
                          program_executor("csim", BOARDS[key](), work=tmp_path_factory.mktemp(f"csim_{key}")))
        return cache[key]
    return get


def _layer(kind, mode, pc, brd, precision=None):
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), mode, pc, BOARDS[brd](), precision=precision)
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    return prog, ddr, bases


def _golden(prog, ddr, bases):
    g = ddr.copy()
    GoldenSim(prog.hw, g, bases).run(prog.blob)
    return g


def test_int8_issues_half_the_dsp_multiplies_of_int16(kernel, tmp_path):
    """The kernel's structure, counted in C-simulation: the same conv layer (even output width) issues
    Tn*Tm multiplies per PE-array step in both modes, and int8 covers two output pixels per multiply, so it
    issues exactly half the DSP multiplies of int16 for the same MACs."""
    counts = {}
    for mode in ("int8-asym", "int16-sym"):
        b = Builder([1, 16, 10, 12], seed=9)
        m = b.model([b.leaky(b.conv("x", 16, k=3))])
        gq, prog, xs = compile_small(m, mode, True, BOARDS["tiny"]())
        ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
        _, info = csim.run_csim(kernel("tiny"), ddr, bases, prog.blob, tmp_path / mode)
        assert info["status"] == 0
        lanes = sum(i.f["oh"] * i.f["ow"] * i.f["og"] * i.f["ig"] * i.f["kh"] * i.f["kw"]
                    for i in prog.insns if i.op == "COMPUTE" and not i.f["bypass"]) * prog.hw.tn * prog.hw.tm
        counts[mode] = (info["dsp_muls"], lanes)
    assert counts["int16-sym"][0] == counts["int16-sym"][1]           # one multiply per MAC lane
    assert counts["int8-asym"][1] == counts["int16-sym"][1]           # same work
    assert 2 * counts["int8-asym"][0] == counts["int16-sym"][0]       # half the multiplies


# ------------------------------------------------------------------------------------------------ C-simulation
@pytest.mark.parametrize("brd", list(BOARDS))
@pytest.mark.parametrize("mode,pc", MODES, ids=[f"{m}-{'pc' if p else 'pt'}" for m, p in MODES])
@pytest.mark.parametrize("kind", list(KINDS))
def test_csim_bit_exact_with_golden(executors, kind, mode, pc, brd):
    prog, ddr, bases = _layer(kind, mode, pc, brd)
    golden, csim_exec = executors(brd)
    gold = golden.run(prog, ddr, bases, check=True).ddr
    run = csim_exec.run(prog, ddr, bases)
    assert run.status == 0, isa.status_names(run.status)
    assert not np.array_equal(gold, ddr)      # the program wrote something
    diff = np.flatnonzero(run.ddr != gold)
    assert diff.size == 0, f"{diff.size} DDR bytes differ from the golden simulator, first at {diff[:8]}"


@pytest.mark.parametrize("brd", list(BOARDS))
@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_csim_mixed_precision_bit_exact_with_golden(executors, kind, mode, brd):
    """Every other layer in the other precision (each instruction at its own prec): DDR as the golden simulator's."""
    prog, ddr, bases = _layer(kind, mode, True, brd, precision="alternate")
    golden, csim_exec = executors(brd)
    gold = golden.run(prog, ddr, bases, check=True).ddr
    run = csim_exec.run(prog, ddr, bases)
    assert run.status == 0, isa.status_names(run.status)
    diff = np.flatnonzero(run.ddr != gold)
    assert diff.size == 0, f"{diff.size} DDR bytes differ from the golden simulator, first at {diff[:8]}"


@pytest.mark.parametrize("mode,wbuf", tiered([("int8-asym", 64), ("int16-sym", 128)], [("int8-asym", 64)]))
def test_csim_one_tap_accumulation_bit_exact(tmp_path, mode, wbuf):
    """COMPUTEs of one tap accumulating into ACC (ig x kh x kw = 1, acc_init = 0: each output word read and written
    in the same step, the kernel's PE_RMW loop of one output pixel per iteration): a TINY array whose WBUF holds one
    weight word per bank makes the scheduler split a 1x1 convolution's 32 input channels into ig = 1 COMPUTEs; the
    C-simulation writes DDR exactly as the golden simulator."""
    from helpers import board
    from generator.exec.rtl import TINY
    brd = board(**dict(TINY, wbuf_bank_bytes=wbuf))
    b = Builder([1, 32, 8, 7], seed=3)
    gq, prog, xs = compile_small(b.model([b.leaky(b.conv("x", 16, k=1))]), mode, True, brd)
    rmw = [i for i in prog.insns if i.op == "COMPUTE" and not i.f["bypass"] and not i.f["acc_init"]
           and i.f["ig"] * i.f["kh"] * i.f["kw"] == 1]
    assert len(rmw) >= 6
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    gold = _golden(prog, ddr, bases)
    exe = csim.compile_kernel(brd, tmp_path / "k")
    out, info = csim.run_csim(exe, ddr, bases, prog.blob, tmp_path / "run")
    assert info["status"] == 0, isa.status_names(info["status"])
    diff = np.flatnonzero(out != gold)
    assert diff.size == 0 and not np.array_equal(gold, ddr), f"{diff.size} DDR bytes differ, first at {diff[:8]}"


def _identity_above(prog, seed: int):
    """``prog`` with POST's identity above the table's window drawn on every POST (isa.ID_SHIFT_MAX): on a table POST
    id_above on, id_shift 0..15 in turn, zp_id in the precision's range or (every third) anywhere in its field, and
    zp_out raised so that requantized values pass qmax; on the others the same fields (to be ignored)."""
    rng = np.random.default_rng(seed)
    qr = 1 << (prog.hw.bits - 1)
    out, k = [], 0
    for ins in prog.insns:
        if ins.op == "POST":
            f = dict(ins.f, id_above=1, id_shift=k % (isa.ID_SHIFT_MAX + 1),
                     zp_id=int(rng.integers(-(1 << 15), 1 << 15) if k % 3 == 2 else rng.integers(-qr, qr)))
            if f["act"] & isa.ACTIVATIONS["table"]:
                f["zp_out"] = int(min((1 << 15) - 1, f["zp_out"] + rng.integers(qr // 8, qr // 2)))
            ins, k = isa.Insn("POST", f), k + 1
        out.append(ins)
    return dataclasses.replace(prog, insns=out)


@pytest.mark.parametrize("mode", ["int8-asym", "int16-sym"])
def test_csim_identity_above_table_window(executors, mode):
    """POST's identity above the activation table's window (``id_above``, ``id_shift``, ``zp_id``) on the table
    layers (SiLU, Mish, Sigmoid, HardSwish) of the TINY board, every POST drawn at the instruction level: the
    C-simulation writes DDR exactly as the golden simulator, and the identity changed the golden simulator's output
    (against the same program with id_above off)."""
    prog, ddr, bases = _layer("table_acts", mode, True, "tiny")
    golden, csim_exec = executors("tiny")
    for seed in (1, 2):
        var = _identity_above(prog, seed)
        gold = golden.run(var, ddr, bases, check=True).ddr
        off = dataclasses.replace(var, insns=[isa.Insn(i.op, dict(i.f, id_above=0)) if i.op == "POST" else i
                                              for i in var.insns])
        assert not np.array_equal(gold, golden.run(off, ddr, bases).ddr), "the identity changed nothing"
        run = csim_exec.run(var, ddr, bases)
        assert run.status == 0, isa.status_names(run.status)
        diff = np.flatnonzero(run.ddr != gold)
        assert diff.size == 0, f"seed {seed}: {diff.size} DDR bytes differ from the golden simulator, first at {diff[:8]}"


@pytest.fixture(scope="module")
def slow_post_kernel(tmp_path_factory):
    """The TINY C-simulation built with -fsanitize=thread (ThreadSanitizer: a data-race report makes the binary exit
    66, which run_csim raises as HlsError) and every POST slowed to 30 us per OBUF word written
    (ACCEL_CSIM_SLOW_POST_US), so that STOREs run beside POSTs."""
    d = tmp_path_factory.mktemp("slow_post")
    hls.render(BOARDS["tiny"](), d / "k")
    return csim.compile_csim(d / "k", d / "csim_tsan", extra=["-fsanitize=thread", "-g", "-O1",
                                                              "-DACCEL_CSIM_SLOW_POST_US=30"])


def test_csim_threads_clean_under_thread_sanitizer(slow_post_kernel, tmp_path):
    """The threaded C-simulation (fetch, load, compute, store, post as std::threads over bounded FIFOs) built with
    -fsanitize=thread runs a layer bit-exact with no data-race report: the buffers shared by two modules and DDR
    are ordered by the dependency tokens (OBUF, post -> store: by the progress reports) alone; the POST slowed
    down (30 us per OBUF word), so that STOREs run beside POSTs. (ThreadSanitizer exits non-zero, 66, on any
    report.) The next test runs more layers on the same build."""
    import os
    exe = slow_post_kernel
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    gold = _golden(prog, ddr, bases)
    img, insn_addr = csim.place_program(ddr, prog.blob)
    (tmp_path / "in.bin").write_bytes(img.tobytes())
    args = [str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")] + \
        [str(int(bases[k])) for k in isa.BASE_REGS] + [str(insn_addr), str(len(prog.insns)), "1"]
    env = dict(os.environ, TSAN_OPTIONS="exitcode=66 halt_on_error=0")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert "ThreadSanitizer" not in r.stderr and r.returncode == 0, r.stderr[-4000:]
    assert "status=0x0 " in r.stdout and "beats_beside_post=0" not in r.stdout, r.stdout
    out = np.fromfile(tmp_path / "out.bin", np.uint8)[:ddr.size]
    assert np.array_equal(out, gold)


@pytest.mark.parametrize("kind", ["conv3x3_s1", "concat", "upsample", "spp"])
def test_csim_store_runs_beside_a_slow_post(slow_post_kernel, tmp_path, kind):
    """POST beside STORE: the store module hands each POST to the post module and runs the STOREs after it while
    the POST still writes OBUF, each segment gated on the words the POST has reported written. With the POST slowed
    down, STORE beats are written while POSTs run (the instrumentation count) and DDR is still the golden
    simulator's, every byte. (With the gate removed from store_beats, ``wait = false``, this fails: 3,102 bytes
    differ on conv3x3_s1, the STOREs read OBUF words the POST has not written yet.) The build is ThreadSanitizer's:
    a data-race report fails the run."""
    prog, ddr, bases = _layer(kind, "int8-asym", True, "tiny")
    gold = _golden(prog, ddr, bases)
    out, info = csim.run_csim(slow_post_kernel, ddr, bases, prog.blob, tmp_path)
    assert info["status"] == 0, isa.status_names(info["status"])
    stores = sum(i.op == "STORE" for i in prog.insns)
    assert info["beats_beside_post"] >= stores, info     # overlapped (at least a beat per STORE)
    diff = np.flatnonzero(out != gold)
    assert diff.size == 0, f"{diff.size} DDR bytes differ from the golden simulator, first at {diff[:8]}"


def test_cosim_testbench_separate_ports_and_depths(tmp_path):
    """The co-simulation build of a TINY single-layer program: each m_axi port's depth= is the program's (the
    program's beats; the end of the regions LOADs read / STOREs write). Its testbench built and run: the next test
    (slow) and, on a PRE program, test_cosim_testbench_covers_pre_writes_and_frame."""
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    _cosim_depths(prog, ddr, bases, tmp_path)


@pytest.mark.slow   # (a g++ build of its own; the separate-ports testbench is built in the default tier on PRE)
def test_cosim_testbench_separate_ports_run_bit_exact(tmp_path):
    """The co-simulation testbench of a TINY single-layer program gives every m_axi port its own buffer of its
    depth (no overlapping pointers), and the run is bit-exact with the golden simulator."""
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    _cosim_depths(prog, ddr, bases, tmp_path)
    exe = csim.compile_csim(tmp_path, extra=["-DACCEL_TB_SEPARATE_PORTS"])
    out, info = csim.run_csim(exe, ddr, bases, None, tmp_path / "run")
    assert info["status"] == 0
    assert np.array_equal(out, _golden(prog, ddr, bases))


def _cosim_depths(prog, ddr, bases, tmp_path):
    """Render the co-simulation build of ``prog`` into ``tmp_path`` and check its ports' depths."""
    r = hls.render_cosim(BOARDS["tiny"](), prog, ddr, bases, tmp_path)
    d, axi = r["depths"], prog.hw.axi_bytes
    assert d["insns"] == -(-len(prog.blob) // axi)
    loads = {isa.BASE_REG_NAMES[i.f["base_reg"]] for i in prog.insns if i.op == "LOAD"}
    stores = {isa.BASE_REG_NAMES[i.f["base_reg"]] for i in prog.insns if i.op == "STORE"}
    assert d["load"] * axi >= max(bases[k] + prog.layout.sizes[k] for k in loads) > (d["load"] - 1) * axi
    assert d["store"] * axi >= max(bases[k] + prog.layout.sizes[k] for k in stores) > (d["store"] - 1) * axi
    src = (tmp_path / "accel.cpp").read_text()
    assert f"port=insns bundle=gmem offset=slave depth={d['insns']} " in src
    assert f"port=ddr bundle=load_gmem offset=off depth={d['load']} " in src
    assert f"port=ddr bundle=store_gmem offset=off depth={d['store']} " in src
    assert "-DACCEL_TB_SEPARATE_PORTS" in (tmp_path / "run_hls.tcl").read_text()


def test_cosim_testbench_covers_pre_writes_and_frame(tmp_path):
    """The co-simulation build of a PRE program (PRE reads the frame and writes the network input on the load
    module's port): the load port's depth= reaches the end of INPUT (what PRE writes) and of the frame (what it
    reads, placed after the regions), run_hls.tcl passes the frame registers, and the separate-ports testbench
    keeps PRE's writes (the load buffer's changed words in the output image): bit-exact with host.pre.pre_run and
    the golden simulator. Without the frame registers the depths are refused."""
    from types import SimpleNamespace

    from generator.eval.pre_cases import pre_case
    from generator.exec import GoldenExecutor
    from generator.exec.rtl import TINY
    from generator.spec.hw import HwConfig
    from helpers import board

    brd = board(**TINY)
    hw = HwConfig.from_board(brd, 8)
    c = pre_case(hw, 37, 23, 24, 16, "letterbox", pitch=3 * 37 + 5, seed=3)
    prog = SimpleNamespace(hw=hw, layout=SimpleNamespace(sizes=c.sizes), insns=isa.decode_program(c.blob),
                           blob=c.blob)
    with pytest.raises(hls.HlsError, match="frame"):
        hls.port_depths(prog, c.bases)
    r = hls.render_cosim(brd, prog, c.ddr, c.bases, tmp_path, sizes=c.sizes, frame=c.frame)
    d, axi = r["depths"], hw.axi_bytes
    ends = [c.bases["INPUT"] + c.sizes["INPUT"], c.frame.addr + c.frame.size]
    assert c.frame.addr >= max(c.bases[k] + c.sizes[k] for k in isa.BASE_REGS)      # the frame after the regions
    assert d["load"] * axi >= max(ends) > (d["load"] - 1) * axi
    assert d["store"] == 1                                                         # (no STORE)
    assert f"port=ddr bundle=load_gmem offset=off depth={d['load']} " in (tmp_path / "accel.cpp").read_text()
    regs = " ".join(str(int(v)) for v in c.frame.registers().values())
    assert regs in (tmp_path / "run_hls.tcl").read_text()
    exe = csim.compile_csim(tmp_path, extra=["-DACCEL_TB_SEPARATE_PORTS"])
    out, info = csim.run_csim(exe, c.ddr, c.bases, None, tmp_path / "run", sizes=c.sizes, frame=c.frame)
    assert info["status"] == 0, isa.status_names(info["status"])
    gold = GoldenExecutor().run(None, c.ddr, c.bases, c.sizes, blob=c.blob, hw=hw, frame=c.frame)
    assert c.mismatch(out) == "" and np.array_equal(out, gold.ddr)


@pytest.fixture(scope="module")
def rom_build(tmp_path_factory):
    """csim.build_and_check of a TINY conv3x3 layer (the deployment kernel: the program in the ROM), with an overlay
    folder: (prog, ddr, bases, its result, its folder)."""
    d = tmp_path_factory.mktemp("rom")
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    r = csim.build_and_check(BOARDS["tiny"](), prog, ddr, bases, d / "k", overlay_dir=d / "ov")
    return prog, ddr, bases, r, d


def test_csim_rom_mode(rom_build):
    """The deployment kernel (program baked into the ROM, fetch_ddr=0) via csim.build_and_check."""
    prog, ddr, bases, r, _ = rom_build
    tmp_path = r["dir"]
    assert r["bit_exact"] and r["status"] == 0 and r["cycles"] > 0 and r["diff_bytes"] == 0
    assert f"INSN_ROM_LEN {len(prog.insns)}" in (tmp_path / "insn_rom.h").read_text()
    assert (tmp_path / "ddr_in.bin").stat().st_size == ddr.size and (tmp_path / "run_hls.tcl").is_file()
    out, info = csim.run_csim(tmp_path / "csim", ddr, bases, None, tmp_path / "again")
    hw = prog.hw
    assert np.array_equal(out, _golden(prog, ddr, bases))
    assert info["config_id"] == hw.config_id
    assert info["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | MODES24


def test_csim_identification_probe(kernel, tmp_path):
    """The driver's identification probe on the threaded C-simulation of the five tops: fetch_ddr = 1,
    n_insns = 0 ends with NO_END alone, writes hw_info / config_id, dispatches nothing and leaves DDR unchanged."""
    prog, ddr, bases = _layer("concat", "int8-asym", True, "tiny")
    out, info = csim.run_csim(kernel("tiny"), ddr, bases, b"", tmp_path, sizes={k: 0 for k in isa.BASE_REGS})
    hw = prog.hw
    assert info["status"] == 1 << isa.STATUS_BITS["NO_END"]
    assert info["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | MODES24
    assert info["config_id"] == hw.config_id
    assert np.array_equal(out[:ddr.size], ddr)


MAXI_PROBE = r"""
#include <cstdio>
#include <cstdlib>
#include "accel_maxi.h"
typedef ap_uint<128> w_t;
static w_t mem[8];
int main(int argc, char **argv) {
    const int mode = std::atoi(argv[1]);
    {
        maxi<w_t> m(mem);
        maxi<w_t> copy = m;   // (passed by value: copies share the requests)
        copy.write_request(2, 2);
        m.write(~w_t(0), ap_uint<16>(0x00F0));   // word 2: bytes 4..7 only
        m.write(~w_t(0));                        // word 3: every byte
        if (mode == 1) m.write(~w_t(0));         // beyond the request
        if (mode != 2) m.write_response();       // mode 2: the response never taken
        m.read_request(2, 1);
        const w_t v = m.read();
        if (mode == 3) m.read();                 // beyond the read request
        std::printf("%llx %llx %llx %llx\n", (unsigned long long)v.range(63, 0).to_uint64(),
                    (unsigned long long)v.range(127, 64).to_uint64(),
                    (unsigned long long)mem[3].range(63, 0).to_uint64(), (unsigned long long)mem[1].to_uint64());
    }
    return 0;
}
"""


def test_maxi_model_writes_strobed_bytes_and_aborts_on_misuse(tmp_path):
    """The C-simulation model of hls::burst_maxi (hls_templates/kernel/accel_maxi.h): a write_request's beats
    written with byte strobes change only the enabled bytes (AXI WSTRB: bit j = byte j), the next beats in order;
    a write beyond the request, a request left without its write_response() and a read beyond a read request each
    abort the C-simulation naming the misuse."""
    from generator.exec.csim import GXX_FLAGS, ap_types_dir
    from generator.backends.hls.kernel import KERNEL_DIR
    (tmp_path / "probe.cpp").write_text(MAXI_PROBE)
    exe = tmp_path / "probe"
    subprocess.run(["g++", *GXX_FLAGS, "-isystem", str(ap_types_dir()), "-I", str(KERNEL_DIR),
                    str(tmp_path / "probe.cpp"), "-o", str(exe)], check=True, capture_output=True, text=True)
    ok = subprocess.run([str(exe), "0"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.split() == ["ffffffff00000000", "0", "ffffffffffffffff", "0"], ok
    for mode, what in ((1, "write() without an open write_request()"), (2, "write requests without their write_response()"),
                       (3, "read() without an open read_request()")):
        r = subprocess.run([str(exe), str(mode)], capture_output=True, text=True)
        assert r.returncode != 0 and f"kernel bug: {what}" in r.stderr, (mode, r.returncode, r.stderr)


# the error statuses of bad programs (C-simulation against the golden simulator, the RTL and the PYNQ driver):
# tests/exec/test_status.py


# ------------------------------------------------------------------------------------------------ full frame
@pytest.mark.slow
def test_csim_yolov4_tiny_frame_bit_exact(tmp_path):
    from generator.eval import data
    from generator.spec.board import load_board
    from generator.flows.pipeline import compile_model, quantize_image
    from host.preprocess import load_image

    c = compile_model("zcu19eg", "int8-asym", progress=False)
    img = load_image(dict(data.sample_images())["bus"])
    ddr, bases = runtime.build_ddr(c.program, quantize_image(c, img))
    gold = _golden(c.program, ddr, bases)
    hls.render(load_board("zcu19eg"), tmp_path / "k")
    exe = csim.compile_csim(tmp_path / "k")
    out, info = csim.run_csim(exe, ddr, bases, c.program.blob, tmp_path, timeout=3600)
    assert info["status"] == 0
    assert np.array_equal(out, gold)



def test_build_report_and_missing_tools_message(rom_build):
    """report.md of a build: configuration, estimated resources vs capacity, predicted cycles / FPS of both
    precisions at the board clock and their ratio, the C-simulation's bit-exact result; the message of a build
    without the tools names vitis_hls and vivado and the exact commands."""
    from generator.estimate import hls_resources
    prog, ddr, bases, r, top = rom_build
    tmp_path, b = r["dir"], BOARDS["tiny"]()
    assert r["bit_exact"] and np.array_equal(r["ddr"], _golden(prog, ddr, bases))
    cyc = {8: sum(p.cycles for p in prog.plans), 16: 2 * sum(p.cycles for p in prog.plans) - 5}
    dets = [dict(label="bus", score=0.93, box=[1.0, 2.0, 30.4, 40.6], class_id=5)]
    md = report_md(b, "int8-asym", len(prog.insns), cyc, 8, r, "bus.jpg", dets)
    est = hls_resources.estimate(b, len(prog.insns))
    f = b.pl_clock_mhz * 1e6
    assert f"part `{b.part}`" in md and f"Tn x Tm = {b.accelerator.tn} x {b.accelerator.tm}" in md
    assert f"| DSP48E2 | {est.dsp48e2} | {b.resources.dsp48e2} |" in md
    assert f"| BRAM36 | {est.bram36:g} | {b.resources.bram36} |" in md
    assert f"| int8 (this build) | {cyc[8]} | {cyc[8] / f * 1e3:.2f} | {f / cyc[8]:.1f} |" in md
    assert f"| int16 | {cyc[16]} |" in md and f"int8 / int16 throughput: {cyc[16] / cyc[8]:.2f}x" in md
    assert "**bit-exact**" in md and f"golden simulator {r['golden_cycles']}" in md
    assert "- bus 0.93 box [1, 2, 30, 41]" in md
    msg = hls.missing_tools_message(tmp_path, ["vitis_hls", "vivado"])
    assert "vitis_hls and vivado not found on PATH" in msg
    assert f"cd {tmp_path} && vitis_hls -f run_hls.tcl" in msg
    assert f"cd {tmp_path} && vivado -mode batch -source vivado_bd.tcl" in msg
    assert str(top / "ov") in (tmp_path / "vivado_bd.tcl").read_text()
