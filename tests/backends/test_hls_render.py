"""HLS back end, rendering (generator/backends/hls/kernel.py): the rendered headers come from isa.py and the board
file (compiled with g++ and printed); the top functions follow the register map; the static kernel's loops state their
II, depth and trip counts; the int8 packing's guard bits; run_hls.tcl executed by tclsh with stub commands."""
import re
import subprocess

import pytest

from generator.backends import hls
from generator.backends.hls.kernel import KERNEL_DIR, KERNEL_HEADERS
from generator.backends.hls.lint.stubs import STUBS
from generator.exec import csim
from generator.spec import isa
from generator.spec.arch import PACK_GROUP, PACK_SHIFT
from host.registers import HW_INFO_MODES, KERNEL_VLNV, ip_vlnv
from generator.spec.hw import HwConfig
from layer_suite import BOARDS

MODES24 = sum(1 << b for b in HW_INFO_MODES.values()) << 24   # hw_info: int8 and int16 supported


def _gxx(src, exe, incdir):
    cmd = ["g++", *csim.GXX_FLAGS, "-isystem", str(csim.ap_types_dir()), "-I", str(incdir), str(src), "-o", str(exe)]
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
             "OBUF_WORDS_INT8", "OBUF_WORDS_INT16", "PBUF_ENTRIES", "PBUF_INDEX", "TM_PITCH", "WBUF_PITCH",
             "ACC_BITS_INT8", "ACC_BITS_INT16", "AXI_BITS"]
    src = ['#include <cstdio>', '#include "config.h"', 'int main() {']
    src += [f'std::printf("%lld\\n", (long long)({n}));' for n in names]
    src += ['std::printf("%u %u\\n", CONFIG_ID, HW_INFO); return 0; }']
    (tmp_path / "c.cpp").write_text("\n".join(src))
    out = _gxx(tmp_path / "c.cpp", tmp_path / "c", tmp_path).split()
    h8, h16 = HwConfig.from_board(b, 8), HwConfig.from_board(b, 16)
    want = [h8.tn, h8.tm, h8.ibuf_words, h16.ibuf_words, h8.wbuf_words, h16.wbuf_words, h8.acc_words, h8.obuf_words,
            h16.obuf_words, h8.pbuf_rows * h8.tm, h8.pbuf_index, h8.tm_pitch, h8.wbuf_pitch, h8.acc_bits, h16.acc_bits, b.accelerator.axi_data_width_bits,
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
    assert "#pragma HLS DATAFLOW" not in src
    assert "#pragma HLS PIPELINE II=1" in "".join((tmp_path / f).read_text() for f in KERNEL_HEADERS)
    # (hls::burst_maxi is not among the open ap_types headers: the rule checker's declaration-only stub of it,
    # searched last)
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "hls_burst_maxi.h").write_text(STUBS["hls_burst_maxi.h"])
    r = subprocess.run(["g++", *csim.GXX_FLAGS, "-isystem", str(csim.ap_types_dir()), "-idirafter", str(stub),
                        "-DACCEL_SYNTH", "-fsyntax-only", str(tmp_path / "accel.cpp")], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_kernel_states_no_ii_of_its_own():
    """No loop of the static kernel carries an ``// II=.. depth=..`` annotation any more: the cycle estimate takes
    each loop's II and depth from the port analysis (generator/backends/hls/lint/analysis.py), so an annotation
    could only disagree with it; no DATAFLOW region is left (the modules are separate top functions)."""
    for f in sorted(KERNEL_DIR.glob("*.h")):
        text = f.read_text()
        assert not re.search(r"//\s*II\s*=\s*\d+\s+depth\s*=", text), f"{f.name}: an II annotation"
        assert "pragma HLS DATAFLOW" not in text, f.name


def test_int8_packs_two_pixels_per_multiplier():
    """Guard bits: PACK_GROUP worst-case int8 products fit the signed low lane, one more would not."""
    g = PACK_GROUP
    lim = 1 << (PACK_SHIFT - 1)
    assert g * 128 * 128 < lim <= (g + 1) * 128 * 128 and g >= 1



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
              "config_interface", "config_interface", "csynth_design", "export_design", "close_project"]
    first = per_ip[:9] + ["csim_design"] + per_ip[9:]     # the C-simulation (all five tops as threads) once
    assert names == first + per_ip * (len(hls.TOPS) - 1)
    tops = [c.split()[1] for c in calls if c.startswith("set_top")]
    assert tops == [t for t, _ in hls.TOPS] and tops[0] == hls.TOP
    assert all(c == f"set_part {b.part}" for c in calls if c.startswith("set_part"))
    configs = {c for c in calls if c.startswith("config_interface")}
    # 64-bit addresses (DDR_HIGH) and conservative write bursts (bd/accel_hp.v's write arbiter relies on them)
    assert configs == {"config_interface -m_axi_addr64=true", "config_interface -m_axi_conservative_mode=true"}
    period = float(calls[names.index("create_clock")].split()[2])
    assert period == pytest.approx(1000.0 / b.pl_clock_mhz, abs=1e-3)
    assert "accel.cpp" in calls[2] and "-tb tb.cpp" in calls[3]
    assert "ddr_in.bin" in calls[names.index("csim_design")] and "-pthread" in calls[names.index("csim_design")]
    exports = [c for c in calls if c.startswith("export_design")]
    vendor, lib, _, ver = KERNEL_VLNV.split(":")
    for (top, _), c in zip(hls.TOPS, exports):
        assert f"-vendor {vendor} -library {lib} -version {ver} -ipname {top} -output ip/{top}.zip" in c
        assert ip_vlnv(top) == f"{vendor}:{lib}:{top}:{ver}"
    assert ip_vlnv(hls.TOP) == KERNEL_VLNV           # the block host/driver.py binds to
    assert (tmp_path / "ip").is_dir()

