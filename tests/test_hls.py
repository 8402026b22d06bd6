"""HLS back end: the rendered headers come from isa.py and the board file; the g++ C-simulation of the rendered
kernel (the same accel.cpp Vitis HLS gets) leaves the whole DDR image exactly as the golden simulator does, for
every layer kind x quantization mode on the real and the tiny (tiling) board; ROM mode; error status bits."""
import re
import subprocess
import zlib

import numpy as np
import pytest

from generator.backends import hls

from generator.spec import isa

from generator.exec import runtime
from generator.spec.timing import HwConfig
from generator.exec.golden import GoldenSim
from helpers import board, compile_small, quantize_input
from generator.frontend.modelgen import Builder
from test_layers import BOARDS, KINDS, MODES

MODES24 = sum(1 << b for b in isa.HW_INFO_MODES.values()) << 24   # hw_info: int8 and int16 supported


@pytest.fixture(scope="session")
def kernel(tmp_path_factory):
    """kernel(board_key) -> compiled C-sim binary (empty ROM), built once per hardware configuration."""
    cache = {}

    def get(key):
        if key not in cache:
            d = tmp_path_factory.mktemp(f"hls_{key}")
            hls.render(BOARDS[key](), d)
            cache[key] = hls.compile_csim(d)
        return cache[key]
    return get


def _layer(kind, mode, pc, brd):
    build, ic = KINDS[kind]
    b = Builder([1, ic, 14, 12], seed=zlib.crc32(kind.encode()) % 1000)
    outs = build(b)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gq, prog, xs = compile_small(b.model(list(outs)), mode, pc, BOARDS[brd]())
    ddr, bases = runtime.build_ddr(prog, quantize_input(gq, xs[0]))
    return prog, ddr, bases


def _golden(prog, ddr, bases):
    g = ddr.copy()
    GoldenSim(prog.hw, g, bases).run(prog.blob)
    return g


def _gxx(src, exe, incdir):
    cmd = ["g++", *hls.GXX_FLAGS, "-isystem", str(hls.ap_types_dir()), "-I", str(incdir), str(src), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------------------------ headers
def test_isa_header_is_generated_from_isa_py(tmp_path):
    """Compile a program that prints every field's position/width through the generated macros and compare with
    isa.LAYOUTS; the header defines no field that isa.py does not have; enums, record and register map agree."""
    hls.render(BOARDS["tiny"](), tmp_path)
    text = (tmp_path / "isa.h").read_text()
    lines = ['#include <cstdio>', '#include "isa.h"', 'int main() {']
    for op, lay in isa.LAYOUTS.items():
        lines.append(f'std::printf("OP {op} %d %d\\n", OP_{op}, isa_used_bits(OP_{op}));')
        for name, _, _ in lay:
            m = f"ISA_{op}_{name.upper()}"
            lines.append(f'std::printf("F {op} {name} %d %d\\n", {m}_LO, {m}_W);')
    for name, _, _ in isa.PARAM_RECORD:
        lines.append(f'std::printf("P {name} %d\\n", PARAM_{name.upper()}_OFFSET);')
    for name, b in isa.STATUS_BITS.items():
        lines.append(f'std::printf("S {name} %u\\n", STATUS_{name});')
    for name, off, bits, _ in isa.REGISTERS:
        lines.append(f'std::printf("R {name} %d %d\\n", REG_{name.upper()}_OFFSET, REG_{name.upper()}_BITS);')
    lines += ['std::printf("V %d %d %d\\n", ISA_VERSION, INSN_BITS, isa_used_bits(15));', "return 0; }"]
    (tmp_path / "p.cpp").write_text("\n".join(lines))
    out = _gxx(tmp_path / "p.cpp", tmp_path / "p", tmp_path).splitlines()
    want = []
    for op, lay in isa.LAYOUTS.items():
        want.append(f"OP {op} {isa.OPCODES[op]} {lay[-1][1] + lay[-1][2]}")
        want += [f"F {op} {n} {p} {w}" for n, p, w in lay]
    want += [f"P {n} {o}" for n, _, o in isa.PARAM_RECORD]
    want += [f"S {n} {1 << b}" for n, b in isa.STATUS_BITS.items()]
    want += [f"R {n} {o} {b}" for n, o, b, _ in isa.REGISTERS]
    want += [f"V {isa.ISA_VERSION} {isa.INSN_BITS} -1"]
    assert out == want
    defined = set(re.findall(r"#define (ISA_\w+)_LO ", text))
    assert defined == {f"ISA_{op}_{n.upper()}" for op, lay in isa.LAYOUTS.items() for n, _, _ in lay}


@pytest.mark.parametrize("brd", list(BOARDS))
def test_config_header_comes_from_the_board(tmp_path, brd):
    b = BOARDS[brd]()
    hls.render(b, tmp_path)
    names = ["TN", "TM", "IBUF_WORDS_INT8", "IBUF_WORDS_INT16", "WBUF_WORDS_INT8", "WBUF_WORDS_INT16", "ACC_WORDS",
             "OBUF_WORDS_INT8", "OBUF_WORDS_INT16", "PBUF_ENTRIES", "ACC_BITS_INT8", "ACC_BITS_INT16", "AXI_BITS"]
    src = ['#include <cstdio>', '#include "config.h"', 'int main() {']
    src += [f'std::printf("%lld\\n", (long long)({n}));' for n in names]
    src += ['std::printf("%u %u\\n", CONFIG_ID, HW_INFO); return 0; }']
    (tmp_path / "c.cpp").write_text("\n".join(src))
    out = _gxx(tmp_path / "c.cpp", tmp_path / "c", tmp_path).split()
    h8, h16 = HwConfig.from_board(b, 8), HwConfig.from_board(b, 16)
    want = [h8.tn, h8.tm, h8.ibuf_words, h16.ibuf_words, h8.wbuf_words, h16.wbuf_words, h8.acc_words, h8.obuf_words,
            h16.obuf_words, h8.pbuf_entries, h8.acc_bits, h16.acc_bits, b.accelerator.axi_data_width_bits,
            h8.config_id, isa.ISA_VERSION | h8.tn << 8 | h8.tm << 16 | MODES24]
    assert [int(x) for x in out] == want


def test_top_function_follows_the_register_map(tmp_path):
    """The fetch / control top: arguments in isa.REGISTERS order, then its streams; s_axilite on each register and
    on return (ap_ctrl_hs); the base registers as 64-bit scalars (each module's m_axi belongs to that module),
    m_axi gmem on insns only; the three other tops free-running (ap_ctrl_none) with their own m_axi bundles and
    memory ports; the synthesis code path (ACCEL_SYNTH: hls::stream) compiles warning-free too."""
    hls.render(BOARDS["zcu19eg"](), tmp_path)
    src = (tmp_path / "accel.cpp").read_text()
    sig = re.search(r"^void accel\((.*?)\) \{", src, re.S | re.M).group(1)
    args = re.findall(r"(\w+)\s*(?:,|$)", sig.strip())
    regs = [n for n, o, _, _ in isa.REGISTERS if o >= 0x10]
    assert args[:len(regs)] == regs
    assert args[len(regs):] == ["load_q", "compute_q", "store_q", "load_run", "store_run", "load_done",
                                "compute_done", "store_done"]
    for n, o, bits, _ in isa.REGISTERS:
        if o >= 0x10:
            assert f"mode=s_axilite port={n} " in src
        if bits == 64 and n != "insns":
            assert f"ap_uint<64> {n}," in sig
    assert re.search(r"mode=m_axi port=insns bundle=gmem offset=slave", src)
    assert "mode=s_axilite port=return" in src
    for top, bundle in [("accel_load", "load_gmem"), ("accel_compute", None), ("accel_store", "store_gmem")]:
        body = src[src.index(f"void {top}("):]
        body = body[:body.index("\n}\n")]
        assert "mode=ap_ctrl_none port=return" in body and "s_axilite" not in body
        assert (f"bundle={bundle} offset=off" in body) if bundle else "m_axi" not in body
        assert "mode=bram port=" in body
    assert "#pragma HLS DATAFLOW" not in src and "#pragma HLS PIPELINE II=1" in (tmp_path / "accel_kernel.h").read_text()
    r = subprocess.run(["g++", *hls.GXX_FLAGS, "-isystem", str(hls.ap_types_dir()), "-DACCEL_SYNTH",
                        "-fsyntax-only", str(tmp_path / "accel.cpp")], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_kernel_loops_state_ii_depth_and_tripcount():
    """Every pipelined loop of the static kernel states the II and pipeline depth it is written for beside it
    (``// II=1 depth=N``, read by a later cycle estimate); every loop whose bound is not a compile-time constant has
    a LOOP_TRIPCOUNT; no DATAFLOW region is left (the modules are separate top functions)."""
    src = (hls.KERNEL_DIR / "accel_kernel.h").read_text().splitlines()
    loops = [k for k, ln in enumerate(src) if re.match(r"\s*for \(", ln)]
    assert len(loops) > 10
    pipelined = 0
    for k in loops:
        head = src[k]
        body = "\n".join(src[k + 1:k + 6])
        if "#pragma HLS PIPELINE" in body:
            pipelined += 1
            assert re.search(r"// II=\d+ depth=\d+", head), f"line {k + 1}: {head.strip()}"
        bound = re.search(r";\s*[^;]*?<\s*([^;]+);", head).group(1)
        if not re.fullmatch(r"[A-Z0-9_ */()+-]+", bound.strip()):     # not a constant expression of macros
            assert "LOOP_TRIPCOUNT" in body, f"line {k + 1}: {head.strip()}"
    assert pipelined >= 9
    assert "DATAFLOW" not in "\n".join(src)


def test_int8_packs_two_pixels_per_multiplier():
    """Guard bits: PACK_GROUP worst-case int8 products fit the signed low lane, one more would not."""
    g = hls.pack_group()
    lim = 1 << (hls.PACK_SHIFT - 1)
    assert g * 128 * 128 < lim <= (g + 1) * 128 * 128 and g >= 1


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
        _, info = hls.run_csim(kernel("tiny"), ddr, bases, prog.blob, tmp_path / mode)
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
def test_csim_bit_exact_with_golden(kernel, tmp_path, kind, mode, pc, brd):
    prog, ddr, bases = _layer(kind, mode, pc, brd)
    gold = _golden(prog, ddr, bases)
    out, info = hls.run_csim(kernel(brd), ddr, bases, prog.blob, tmp_path)
    assert info["status"] == 0, hls.status_names(info["status"])
    assert not np.array_equal(gold, ddr)      # the program wrote something
    diff = np.flatnonzero(out != gold)
    assert diff.size == 0, f"{diff.size} DDR bytes differ from the golden simulator, first at {diff[:8]}"


def test_csim_threads_clean_under_thread_sanitizer(tmp_path):
    """The threaded C-simulation (fetch, load, compute, store as std::threads over bounded FIFOs) built with
    -fsanitize=thread runs a layer bit-exact with no data-race report: the buffers shared by two modules and DDR
    are ordered by the dependency tokens alone. (ThreadSanitizer exits non-zero, 66, on any report.)"""
    import os
    hls.render(BOARDS["tiny"](), tmp_path / "k")
    exe = hls.compile_csim(tmp_path / "k", tmp_path / "csim_tsan", extra=["-fsanitize=thread", "-g", "-O1"])
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    gold = _golden(prog, ddr, bases)
    img, insn_addr = hls.place_program(ddr, prog.blob)
    (tmp_path / "in.bin").write_bytes(img.tobytes())
    args = [str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")] + \
        [str(int(bases[k])) for k in isa.BASE_REGS] + [str(insn_addr), str(len(prog.insns)), "1"]
    env = dict(os.environ, TSAN_OPTIONS="exitcode=66 halt_on_error=0")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert "ThreadSanitizer" not in r.stderr and r.returncode == 0, r.stderr[-4000:]
    assert "status=0x0 " in r.stdout
    out = np.fromfile(tmp_path / "out.bin", np.uint8)[:ddr.size]
    assert np.array_equal(out, gold)


def test_cosim_testbench_separate_ports_and_depths(tmp_path):
    """The co-simulation build of a TINY single-layer program: each m_axi port's depth= is the program's (the
    program's beats; the end of the regions LOADs read / STOREs write), the testbench gives every port its own
    buffer of that depth (no overlapping pointers), and the run is bit-exact with the golden simulator."""
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
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
    exe = hls.compile_csim(tmp_path, extra=["-DACCEL_TB_SEPARATE_PORTS"])
    out, info = hls.run_csim(exe, ddr, bases, None, tmp_path / "run")
    assert info["status"] == 0
    assert np.array_equal(out, _golden(prog, ddr, bases))


def test_csim_rom_mode(tmp_path):
    """The deployment kernel (program baked into the ROM, fetch_ddr=0) via hls.build_and_check."""
    prog, ddr, bases = _layer("concat", "int8-asym", True, "tiny")
    r = hls.build_and_check(BOARDS["tiny"](), prog, ddr, bases, tmp_path)
    assert r["bit_exact"] and r["status"] == 0 and r["cycles"] > 0 and r["diff_bytes"] == 0
    assert f"INSN_ROM_LEN {len(prog.insns)}" in (tmp_path / "insn_rom.h").read_text()
    assert (tmp_path / "ddr_in.bin").stat().st_size == ddr.size and (tmp_path / "run_hls.tcl").is_file()
    out, info = hls.run_csim(tmp_path / "csim", ddr, bases, None, tmp_path / "again")
    hw = prog.hw
    assert np.array_equal(out, _golden(prog, ddr, bases))
    assert info["config_id"] == hw.config_id
    assert info["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | MODES24


def test_csim_identification_probe(kernel, tmp_path):
    """The driver's identification probe on the threaded C-simulation of the four tops: fetch_ddr = 1,
    n_insns = 0 ends with NO_END alone, writes hw_info / config_id, dispatches nothing and leaves DDR unchanged."""
    prog, ddr, bases = _layer("concat", "int8-asym", True, "tiny")
    out, info = hls.run_csim(kernel("tiny"), ddr, bases, b"", tmp_path, sizes={k: 0 for k in isa.BASE_REGS})
    hw = prog.hw
    assert info["status"] == 1 << isa.STATUS_BITS["NO_END"]
    assert info["hw_info"] == isa.ISA_VERSION | hw.tn << 8 | hw.tm << 16 | MODES24
    assert info["config_id"] == hw.config_id
    assert np.array_equal(out[:ddr.size], ddr)


# the error statuses of bad programs (C-simulation against the golden simulator, the RTL and the PYNQ driver):
# tests/test_status.py


# ------------------------------------------------------------------------------------------------ full frame
@pytest.mark.slow
def test_csim_yolov4_tiny_frame_bit_exact(tmp_path):
    from generator.eval import data
    from generator.spec.board import load_board
    from generator.flows.compiler import compile_model, quantize_image
    from host.preprocess import load_image

    c = compile_model("zcu19eg", "int8-asym", progress=False)
    img = load_image(dict(data.sample_images())["bus"])
    ddr, bases = runtime.build_ddr(c.program, quantize_image(c, img))
    gold = _golden(c.program, ddr, bases)
    hls.render(load_board("zcu19eg"), tmp_path / "k")
    exe = hls.compile_csim(tmp_path / "k")
    out, info = hls.run_csim(exe, ddr, bases, c.program.blob, tmp_path, timeout=3600)
    assert info["status"] == 0
    assert np.array_equal(out, gold)


# ------------------------------------------------------------------------------------------------ Tcl
_STUBS = r"""
set ::log {}
foreach cmd {open_project set_top add_files open_solution set_part create_clock config_interface csim_design
             csynth_design cosim_design export_design close_project} {
    proc $cmd {args} [string map [list CMD $cmd] {lappend ::log [list CMD {*}$args]}]
}
rename exit _real_exit
proc exit {args} {}
source run_hls.tcl
set f [open calls.txt w]
foreach c $::log { puts $f $c }
close $f
"""


@pytest.mark.parametrize("brd", ["zcu19eg", "ultra96v2"])
def test_run_hls_tcl_in_tclsh_with_stub_commands(tmp_path, brd):
    """The rendered Vitis HLS script, executed by tclsh with stub procs: part, clock period, top, files,
    csim arguments and the IP export path are the board's / kernel's."""
    import shutil

    from generator.spec.board import load_board
    if shutil.which("tclsh") is None:
        pytest.skip("tclsh not installed")
    b = load_board(brd)
    hls.render(b, tmp_path, csim_argv="ddr_in.bin ddr_out.bin 0 0 0 0 0 0 0")
    (tmp_path / "stub.tcl").write_text(_STUBS)
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    names = [c.split()[0] for c in calls]
    per_ip = ["open_project", "set_top", "add_files", "add_files", "open_solution", "set_part", "create_clock",
              "config_interface", "csynth_design", "export_design", "close_project"]
    first = per_ip[:8] + ["csim_design"] + per_ip[8:]     # the C-simulation (all four tops as threads) once
    assert names == first + per_ip * (len(hls.TOPS) - 1)
    tops = [c.split()[1] for c in calls if c.startswith("set_top")]
    assert tops == [t for t, _ in hls.TOPS] and tops[0] == hls.TOP
    assert all(c == f"set_part {b.part}" for c in calls if c.startswith("set_part"))
    period = float(calls[names.index("create_clock")].split()[2])
    assert period == pytest.approx(1000.0 / b.pl_clock_mhz, abs=1e-3)
    assert "accel.cpp" in calls[2] and "-tb tb.cpp" in calls[3]
    assert "ddr_in.bin" in calls[names.index("csim_design")] and "-pthread" in calls[names.index("csim_design")]
    exports = [c for c in calls if c.startswith("export_design")]
    vendor, lib, _, ver = hls.KERNEL_VLNV.split(":")
    for (top, _), c in zip(hls.TOPS, exports):
        assert f"-vendor {vendor} -library {lib} -version {ver} -ipname {top} -output ip/{top}.zip" in c
        assert hls.top_vlnv(top) == f"{vendor}:{lib}:{top}:{ver}"
    assert hls.top_vlnv(hls.TOP) == hls.KERNEL_VLNV           # the block host/driver.py binds to
    assert (tmp_path / "ip").is_dir()


_VIVADO_STUBS = r"""
set ::log {}
set ::made {}
proc _log {cmd args} { lappend ::log [list $cmd {*}$args] }
foreach cmd {create_project set_property update_ip_catalog create_bd_design apply_bd_automation connect_bd_net
             connect_bd_intf_net assign_bd_address validate_bd_design save_bd_design add_files
             update_compile_order launch_runs wait_on_run current_project current_fileset get_runs get_files} {
    proc $cmd {args} [string map [list CMD $cmd] {_log CMD {*}$args; return CMD}]
}
proc get_board_parts {args} { _log get_board_parts {*}$args; return [expr {$::have_board ? "$::bp_found" : ""}] }
# a pin is one word "pin:<cell>/<name>" ("intf:..." for an interface pin), so lists of pins expand as in Vivado
proc get_bd_pins {args} { return "pin:[lindex $args end]" }
proc get_bd_intf_pins {args} { return "intf:[lindex $args end]" }
proc create_bd_cell {args} { _log create_bd_cell {*}$args; lappend ::made [lindex $args end]; return [lindex $args end] }
proc make_wrapper {args} { _log make_wrapper {*}$args; return vivado_prj/system_wrapper.v }
proc get_property {name obj} { return "100%" }
rename exit _real_exit
proc exit {args} {}
# what a successful implementation leaves behind
file mkdir vivado_prj/accel_bd.runs/impl_1 vivado_prj/accel_bd.gen/sources_1/bd/system/hw_handoff
set f [open vivado_prj/accel_bd.runs/impl_1/system_wrapper.bit w]; puts $f BIT; close $f
set f [open vivado_prj/accel_bd.gen/sources_1/bd/system/hw_handoff/system.hwh w]; puts $f HWH; close $f
source vivado_bd.tcl
set f [open calls.txt w]
foreach c $::log { puts $f $c }
close $f
"""


@pytest.mark.parametrize("brd", ["zcu19eg", "ultra96v2", "zcu102", "kv260"])
def test_vivado_bd_tcl_in_tclsh_with_stub_commands(tmp_path, brd):
    """The rendered Vivado block-design script, executed by tclsh with stub procs: the board's part (and board
    preset where the board has a Vivado board file), the PL clock, the HP port at the m_axi width, the interrupt,
    the HLS IP by the VLNV host/driver.py binds to, from the IP that run_hls.tcl exports; bitstream and hwh
    copied to the overlay folder under one name."""
    import shutil

    from generator.spec.board import load_board
    from host.driver import KERNEL_VLNV
    if shutil.which("tclsh") is None:
        pytest.skip("tclsh not installed")
    b = load_board(brd)
    ov = tmp_path / "overlay" / brd
    hls.render(b, tmp_path, overlay_dir=ov)
    assert hls.KERNEL_VLNV == KERNEL_VLNV
    (tmp_path / "stub.tcl").write_text(f"set ::have_board 1\nset ::bp_found {{{b.vivado_board_part}:1.0}}\n"
                                       + _VIVADO_STUBS)
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    names = [c.split()[0] for c in calls]
    assert calls[0] == f"create_project -force {hls.TOP}_bd vivado_prj -part {b.part}"
    preset = b.vivado_board_part is not None
    assert ("apply_bd_automation" in names) == preset
    if preset:
        assert f"set_property board_part {b.vivado_board_part}:1.0" in calls[names.index("set_property")]
        assert "apply_board_preset" in calls[names.index("apply_bd_automation")]
    # the exported IP zip of run_hls.tcl, in the repository path
    run_hls = (tmp_path / "run_hls.tcl").read_text()
    vendor, lib, name, ver = KERNEL_VLNV.split(":")
    assert f"-vendor {vendor} -library {lib} -version {ver}" in run_hls and hls.TOP == name
    assert f"update_ip_catalog -add_ip ip/{hls.TOP}.zip -repo_path ip_repo" in calls
    assert any(c.startswith("set_property ip_repo_paths") and "ip_repo" in c for c in calls)
    cells = [c for c in calls if c.startswith("create_bd_cell")]
    assert any("xilinx.com:ip:zynq_ultra_ps_e" in c for c in cells)
    assert any(f"-vlnv {KERNEL_VLNV} {hls.TOP}_0" in c for c in cells)
    ps = next(c for c in calls if "PSU__SAXIGP2__DATA_WIDTH" in c)
    cfg = dict(re.findall(r"CONFIG\.(\S+) \{?([^\s}]+)\}?", ps))
    assert int(cfg["PSU__SAXIGP2__DATA_WIDTH"]) == b.accelerator.axi_data_width_bits
    assert float(cfg["PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ"]) == b.pl_clock_mhz
    assert cfg["PSU__USE__S_AXI_GP2"] == "1" and cfg["PSU__USE__IRQ0"] == "1" and cfg["PSU__USE__M_AXI_GP0"] == "1"
    assert (tmp_path / "accel_ram.v").is_file()
    intf = " | ".join(c for c in calls if c.startswith("connect_bd_intf_net"))
    assert "S_AXI_HP0_FPD" in intf and "M_AXI_HPM0_FPD" in intf and f"{hls.TOP}_0/m_axi_gmem" in intf
    assert f"{hls.TOP}_0/s_axi_control" in intf
    assert any("interrupt" in c and "pl_ps_irq0" in c for c in calls)
    _check_block_design(b, calls)
    for step in ["assign_bd_address", "validate_bd_design", "make_wrapper"]:
        assert step in names
    assert any(c.startswith("launch_runs impl_1 -to_step write_bitstream") for c in calls)
    assert names.index("validate_bd_design") < names.index("make_wrapper") < names.index("launch_runs")
    stem = f"yolofpga_{brd}"
    assert (ov / f"{stem}.bit").read_text() == "BIT\n" and (ov / f"{stem}.hwh").read_text() == "HWH\n"
    from generator.flows.package import find_overlay
    assert [p.name for p in find_overlay(brd, ov)] == [f"{stem}.bit", f"{stem}.hwh"]


def _check_block_design(b, calls):
    """The connections vivado_bd.tcl makes (from the stub's log): each stream's FIFO between its one producer and
    its one consumer at the kernel's depth, each memory's ports on the right IPs, every m_axi on the HP port,
    control, interrupt, the error wire, clocks and resets."""
    from generator.spec import isa
    from generator.estimate import hls_resources
    a = b.accelerator
    cells = {c.split()[-1]: c for c in calls if c.startswith("create_bd_cell")}
    for t, _ in hls.TOPS:
        assert f"-vlnv {hls.top_vlnv(t)} {t}_0" in cells[f"{t}_0"]
        assert f"update_ip_catalog -add_ip ip/{t}.zip -repo_path ip_repo" in calls
    intf = [c.split()[1:] for c in calls if c.startswith("connect_bd_intf_net")]
    assert all(len(e) == 2 for e in intf)
    ends = [p for e in intf for p in e]
    assert len(ends) == len(set(ends)), "an interface pin connected twice"
    edge = {tuple(e) for e in intf}
    nets = [c.split()[1:] for c in calls if c.startswith("connect_bd_net")]
    props = {c.split()[-1]: c for c in calls if c.startswith("set_property -dict")}

    bd = hls_resources.block_design(b)
    assert len(bd["streams"]) == 12
    for f in bd["streams"]:
        fifo = f"fifo_{f['name']}"
        assert "xilinx.com:ip:axis_data_fifo" in cells[fifo]
        assert (f"intf:{f['src']}_0/{f['src_port']}", f"intf:{fifo}/S_AXIS") in edge
        assert (f"intf:{fifo}/M_AXIS", f"intf:{f['dst']}_0/{f['dst_port']}") in edge
        depth = int(re.search(r"CONFIG.FIFO_DEPTH (\d+)", props[fifo]).group(1))
        assert depth == f["fifo_depth"] >= f["depth"] and depth & (depth - 1) == 0
    by = {f["name"]: f for f in bd["streams"]}
    for t in ("l2c", "c2l", "c2s", "s2c"):          # the token queues: exactly the ISA's depth
        assert by[t]["fifo_depth"] == isa.TOKEN_QUEUE_DEPTH == by[t]["depth"]
    for q in ("load_q", "compute_q", "store_q"):
        assert by[q]["fifo_depth"] == hls.CMD_QUEUE_DEPTH
    assert (by["l2c"]["src"], by["l2c"]["dst"]) == ("accel_load", "accel_compute")
    assert (by["c2l"]["src"], by["c2l"]["dst"]) == ("accel_compute", "accel_load")
    assert (by["c2s"]["src"], by["c2s"]["dst"]) == ("accel_compute", "accel_store")
    assert (by["s2c"]["src"], by["s2c"]["dst"]) == ("accel_store", "accel_compute")

    mems = {m["name"]: m for m in bd["memories"]}
    assert len(mems["IBUF"]["ports"]) == 2 and len(mems["ACC"]["ports"]) == 2
    assert len(mems["WBUF"]["ports"]) == 2 * a.tm and len(mems["PBUF"]["ports"]) == a.tm
    rams = [c for c in cells if c.endswith("_ram")]
    assert len(rams) == sum(len(m["ports"]) for m in bd["memories"])
    prim = {"bram": "block", "uram": "ultra", "lutram": "distributed"}
    for m in bd["memories"]:
        for p in m["ports"]:
            assert "-type module -reference accel_ram" in cells[f"{p}_ram"]
            assert f"CONFIG.MEMORY_PRIMITIVE {prim[m['impl']]}" in props[f"{p}_ram"]
            assert f"CONFIG.DEPTH {m['depth']} CONFIG.WIDTH {m['width']}" in props[f"{p}_ram"]
            assert (f"intf:{m['producer']}_0/{p}_PORTA", f"intf:{p}_ram/BRAM_A") in edge
            if m["name"] == "ACC":     # compute writes A, reads B; store reads C (shares B)
                assert (f"intf:accel_compute_0/{p}_PORTB", f"intf:{p}_ram/BRAM_B") in edge
                assert (f"intf:accel_store_0/{p}_PORTA", f"intf:{p}_ram/BRAM_C") in edge
                assert "CONFIG.SHARED_B 1" in props[f"{p}_ram"]
            else:
                assert (f"intf:{m['consumers'][0]}_0/{p}_PORTA", f"intf:{p}_ram/BRAM_B") in edge
                assert "CONFIG.SHARED_B 0" in props[f"{p}_ram"]
                assert not any(e[1] == f"intf:{p}_ram/BRAM_C" for e in intf)
    assert {m["producer"] for m in bd["memories"] if m["name"] in ("IBUF", "WBUF", "PBUF")} == {"accel_load"}
    assert mems["IBUF"]["consumers"] == mems["WBUF"]["consumers"] == ["accel_compute"]
    assert mems["PBUF"]["consumers"] == ["accel_store"]

    # every m_axi through the SmartConnect to HP0; control on HPM0; the interrupt
    for i, (cell, port) in enumerate([("accel_0", "m_axi_gmem"), ("accel_load_0", "m_axi_load_gmem"),
                                      ("accel_store_0", "m_axi_store_gmem")]):
        assert (f"intf:{cell}/{port}", f"intf:smartconnect_hp0/S0{i}_AXI") in edge
    assert "CONFIG.NUM_SI 3 " in props["smartconnect_hp0"]
    assert ("intf:smartconnect_hp0/M00_AXI", "intf:zynq_ultra_ps_e_0/S_AXI_HP0_FPD") in edge
    assert ("intf:zynq_ultra_ps_e_0/M_AXI_HPM0_FPD", "intf:smartconnect_ctrl/S00_AXI") in edge
    assert ("intf:smartconnect_ctrl/M00_AXI", "intf:accel_0/s_axi_control") in edge
    assert ["pin:accel_0/interrupt", "pin:zynq_ultra_ps_e_0/pl_ps_irq0"] in nets
    # error wire: (load | compute) | store into every module's err_in
    assert ["pin:accel_load_0/err_out", "pin:err_or_0/Op1"] in nets
    assert ["pin:accel_compute_0/err_out", "pin:err_or_0/Op2"] in nets
    assert ["pin:accel_store_0/err_out", "pin:err_or_1/Op2"] in nets
    assert ["pin:err_or_0/Res", "pin:err_or_1/Op1"] in nets
    assert ["pin:err_or_1/Res", "pin:accel_load_0/err_in", "pin:accel_compute_0/err_in",
            "pin:accel_store_0/err_in"] in nets
    # one clock net, one reset net reaching every IP and FIFO
    clk = next(n for n in nets if n[0] == "pin:zynq_ultra_ps_e_0/pl_clk0")
    rst = next(n for n in nets if n[0] == "pin:proc_sys_reset_0/peripheral_aresetn")
    for t, _ in hls.TOPS:
        assert f"pin:{t}_0/ap_clk" in clk and f"pin:{t}_0/ap_rst_n" in rst
    for f in bd["streams"]:
        assert f"pin:fifo_{f['name']}/s_axis_aclk" in clk and f"pin:fifo_{f['name']}/s_axis_aresetn" in rst
    # the memory module is part of the project
    assert "add_files -norecurse accel_ram.v" in calls


_ACCEL_RAM_TB = r"""
module tb;
  localparam integer W = 48 * 4, LSB = 5;
  reg clk = 0;
  always #5 clk = ~clk;
  reg ena = 0, enb = 0, enc = 0;
  reg [W/8-1:0] wea = 0;
  reg [31:0] addra = 0, addrb = 0, addrc = 0;
  reg [W-1:0] dina = 0;
  wire [W-1:0] douta, doutb, doutc;
  accel_ram #(.DEPTH(64), .WIDTH(W), .ADDR_LSB(LSB), .MEMORY_PRIMITIVE("ultra"), .SHARED_B(1)) dut (
    .clka(clk), .rsta(1'b0), .ena(ena), .wea(wea), .addra(addra), .dina(dina), .douta(douta),
    .clkb(clk), .rstb(1'b0), .enb(enb), .web({W/8{1'b0}}), .addrb(addrb), .dinb({W{1'b0}}), .doutb(doutb),
    .clkc(clk), .rstc(1'b0), .enc(enc), .wec({W/8{1'b0}}), .addrc(addrc), .dinc({W{1'b0}}), .doutc(doutc));
  integer k;
  reg ok = 1;
  initial begin
    // port A: words 0..7 (byte address k << LSB), then a partial write (byte enables) of word 3
    for (k = 0; k < 8; k = k + 1) begin
      @(negedge clk); ena = 1; wea = {W/8{1'b1}}; addra = k << LSB; dina = {W/32{32'hA5000000 + k}};
    end
    @(negedge clk); wea = 1; addra = 3 << LSB; dina = {W{1'b1}};
    @(negedge clk); ena = 0; wea = 0;
    // port B reads word 5 (compute), then port C (store) reads word 3 through the shared port
    enb = 1; addrb = 5 << LSB;
    @(negedge clk); enb = 0;
    if (doutb !== {W/32{32'hA5000005}}) begin $display("FAIL B %h", doutb); ok = 0; end
    enc = 1; addrc = 3 << LSB;
    @(negedge clk); enc = 0;
    if (doutc !== {{W/32-1{32'hA5000003}}, 32'hA50000FF}) begin $display("FAIL C %h", doutc); ok = 0; end
    if (ok) $display("PASS");
    $finish;
  end
endmodule
"""


def test_accel_ram_lints_and_shares_its_read_port(tmp_path):
    """hls_templates/bd/accel_ram.v (the block design's buffer memory) with Verilator over a behavioural
    xpm_memory_sdpram stand-in (tests/data/): lint-clean for every primitive and both sharing modes; byte-addressed
    writes on port A with byte enables, reads on port B and, through the shared port, on port C."""
    from pathlib import Path

    from generator.exec.rtl import verilator
    exe = verilator()
    if exe is None:
        pytest.skip("verilator not installed")
    ram = hls.BD_DIR / "accel_ram.v"
    model = Path(__file__).parent / "data" / "xpm_memory_sdpram_model.v"
    for prim in ("block", "ultra", "distributed"):
        for shared in (0, 1):
            r = subprocess.run([exe, "--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME",
                                "-Wno-UNUSEDPARAM", "-Wno-PINCONNECTEMPTY", str(ram), str(model),
                                "--top-module", "accel_ram", f"-GSHARED_B={shared}", f'-GMEMORY_PRIMITIVE="{prim}"'],
                               capture_output=True, text=True, cwd=tmp_path)
            assert r.returncode == 0, r.stderr
    (tmp_path / "tb.sv").write_text(_ACCEL_RAM_TB)
    r = subprocess.run([exe, "--binary", "--timing", "-CFLAGS", "-std=c++20 -fcoroutines", "-Wno-fatal",
                        "-Wno-PINCONNECTEMPTY", str(ram), str(model),
                        "tb.sv", "--top-module", "tb", "-o", "tb"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(tmp_path / "obj_dir" / "tb")], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert "PASS" in r.stdout and "FAIL" not in r.stdout, r.stdout + r.stderr


def test_vivado_bd_tcl_wider_m_axi_uses_two_hp_ports(tmp_path):
    """A 256-bit m_axi (the RTL tests' configuration): HP ports are 128 bits, so LOAD gets HP0 and the program
    fetch + STORE HP1, each through its own SmartConnect (which narrows the width)."""
    import shutil

    if shutil.which("tclsh") is None:
        pytest.skip("tclsh not installed")
    b = board("zcu19eg", axi_data_width_bits=256)
    hls.render(b, tmp_path, overlay_dir=tmp_path / "ov")
    (tmp_path / "stub.tcl").write_text("set ::have_board 0\nset ::bp_found {}\n" + _VIVADO_STUBS)
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    edge = {tuple(c.split()[1:]) for c in calls if c.startswith("connect_bd_intf_net")}
    assert ("intf:accel_load_0/m_axi_load_gmem", "intf:smartconnect_hp0/S00_AXI") in edge
    assert ("intf:accel_0/m_axi_gmem", "intf:smartconnect_hp1/S00_AXI") in edge
    assert ("intf:accel_store_0/m_axi_store_gmem", "intf:smartconnect_hp1/S01_AXI") in edge
    assert ("intf:smartconnect_hp1/M00_AXI", "intf:zynq_ultra_ps_e_0/S_AXI_HP1_FPD") in edge
    ps = " ".join(c for c in calls if "PSU__SAXIGP" in c)
    assert "PSU__SAXIGP2__DATA_WIDTH 128" in ps and "PSU__SAXIGP3__DATA_WIDTH 128" in ps


def test_vivado_bd_tcl_without_installed_board_file(tmp_path):
    """A board part that this Vivado does not have: PS defaults, no preset automation, still a bitstream."""
    import shutil

    from generator.spec.board import load_board
    if shutil.which("tclsh") is None:
        pytest.skip("tclsh not installed")
    hls.render(load_board("zcu104"), tmp_path, overlay_dir=tmp_path / "ov")
    (tmp_path / "stub.tcl").write_text("set ::have_board 0\nset ::bp_found {}\n" + _VIVADO_STUBS)
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = (tmp_path / "calls.txt").read_text()
    assert "apply_bd_automation" not in calls and "set_property board_part" not in calls
    assert "is not installed" in r.stdout and (tmp_path / "ov" / "yolofpga_zcu104.bit").is_file()


def test_build_report_and_missing_tools_message(tmp_path):
    """report.md of a build: configuration, estimated resources vs capacity, predicted cycles / FPS of both
    precisions at the board clock and their ratio, the C-simulation's bit-exact result; the message of a build
    without the tools names vitis_hls and vivado and the exact commands."""
    from generator.estimate import hls_resources
    prog, ddr, bases = _layer("conv3x3_s1", "int8-asym", True, "tiny")
    b = BOARDS["tiny"]()
    r = hls.build_and_check(b, prog, ddr, bases, tmp_path, overlay_dir=tmp_path / "ov")
    assert r["bit_exact"] and np.array_equal(r["ddr"], _golden(prog, ddr, bases))
    cyc = {8: sum(p.cycles for p in prog.plans), 16: 2 * sum(p.cycles for p in prog.plans) - 5}
    dets = [dict(label="bus", score=0.93, box=[1.0, 2.0, 30.4, 40.6], class_id=5)]
    md = hls.report_md(b, "int8-asym", len(prog.insns), cyc, 8, r, "bus.jpg", dets)
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
    assert str(tmp_path / "ov") in (tmp_path / "vivado_bd.tcl").read_text()
