"""The RTL as a Vivado IP (``invoke build --kernel rtl``, generator/backends/rtl/ip.py): the IP top's ports
(rtl/accel_rtl.sv) under the names the IP packager infers, Verilator lint of the board configuration, package_ip.tcl
and vivado_bd.tcl executed by tclsh with stub Vivado commands (interfaces, associations, the register map against
generator/spec/isa.py, the VLNV the driver binds, the ROM and the clock constraint as IP files; the PS configuration
identical to the HLS block design's), the XDC's period, the flow end to end and its errors. The driver binding the
IP by its VLNV over the RTL is tests/host/test_driver_rtl.py."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import ROOT_DIR
from generator.backends import hls
from generator.backends.rtl import RtlError, rom_image
from generator.backends.rtl import ip
from generator.spec import isa
from generator.flows.request import Target
from generator.spec.board import load_board
from host.registers import RTL_KERNEL_VLNV

from test_hls_block_design import check_interrupt

needs_tclsh = pytest.mark.skipif(shutil.which("tclsh") is None, reason="tclsh not installed (setup.sh installs tcl)")

_STUBS = r"""
set ::log {}
proc _log {cmd args} { lappend ::log [list $cmd {*}$args] }
namespace eval ipx {}
foreach cmd {create_project set_property add_files update_compile_order update_ip_catalog create_bd_design
             apply_bd_automation connect_bd_net connect_bd_intf_net assign_bd_address validate_bd_design
             save_bd_design launch_runs wait_on_run current_project current_fileset get_runs
             ipx::package_project ipx::current_core ipx::infer_bus_interfaces ipx::infer_bus_interface
             ipx::associate_bus_interfaces ipx::add_bus_parameter ipx::add_memory_map ipx::add_address_block
             ipx::add_register ipx::create_xgui_files ipx::update_checksums ipx::check_integrity ipx::save_core
             ipx::remove_bus_parameter open_run report_timing_summary} {
    proc $cmd {args} [string map [list CMD $cmd] {_log CMD {*}$args; return CMD}]
}
# whether the packager's inference gave ap_clk a FREQ_HZ bus parameter
if {![info exists ::inferred_freq]} { set ::inferred_freq 1 }
proc ipx::get_bus_parameters {args} {
    _log ipx::get_bus_parameters {*}$args
    return [expr {$::inferred_freq && [lindex $args 0] eq "FREQ_HZ" ? "busparam:FREQ_HZ" : ""}]
}
proc get_timing_paths {args} { return [expr {[lsearch $args -hold] >= 0 ? "path:hold" : "path:setup"}] }
proc report_timing {args} { _log report_timing {*}$args; return "WORST PATH" }
if {![info exists ::wns]} { set ::wns 0.05 }
proc get_files {args} { return "file:[lindex $args end]" }
proc ipx::get_bus_interfaces {args} { return "busif:[lindex $args 0]" }
proc get_board_parts {args} { _log get_board_parts {*}$args; return $::bp_found }
proc get_bd_pins {args} { return "pin:[lindex $args end]" }
proc get_bd_intf_pins {args} { return "intf:[lindex $args end]" }
proc get_bd_addr_spaces {args} { return "space:[lindex $args end]" }
proc get_bd_addr_segs {args} { return "seg:[lindex $args end]" }
proc create_bd_cell {args} { _log create_bd_cell {*}$args; return [lindex $args end] }
proc make_wrapper {args} { _log make_wrapper {*}$args; return vivado_prj/system_wrapper.v }
proc get_property {name obj} {
    if {$name eq "SLACK"} { return [expr {$obj eq "path:hold" ? 0.01 : $::wns}] }
    return "100%"
}
rename exit _real_exit
proc exit {args} {}
file mkdir vivado_prj/TOP_bd.runs/impl_1 vivado_prj/TOP_bd.gen/sources_1/bd/system/hw_handoff
set f [open vivado_prj/TOP_bd.runs/impl_1/system_wrapper.bit w]; puts $f BIT; close $f
set f [open vivado_prj/TOP_bd.gen/sources_1/bd/system/hw_handoff/system.hwh w]; puts $f HWH; close $f
source SCRIPT
set f [open calls.txt w]
foreach c $::log { puts $f $c }
close $f
"""


def _run_tcl(d, script: str, top: str, bp: str = "", pre: str = "", ok: bool = True):
    """Execute ``script`` in ``d`` under tclsh with the stub commands (``pre``: Tcl run first); the calls it made
    (one line each), or with ``ok`` False the CompletedProcess."""
    (d / "stub.tcl").write_text(f"set ::bp_found {{{bp}}}\n" + pre + _STUBS.replace("SCRIPT", script).replace("TOP", top))
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=d, capture_output=True, text=True)
    if not ok:
        return r
    assert r.returncode == 0, r.stderr + r.stdout
    return (d / "calls.txt").read_text().splitlines()


@pytest.fixture(scope="module")
def zcu19eg_ip(tmp_path_factory):
    d = tmp_path_factory.mktemp("rtl_ip")
    prog = bytes(range(256)) * 2                                # 16 instructions: only the ROM image matters here
    return load_board("zcu19eg"), d, ip.render_ip(load_board("zcu19eg"), d, prog, overlay=d / "overlay"), prog


def test_ip_top_ports_are_the_names_the_packager_infers():
    """Every port of rtl/accel_rtl.sv is ap_clk, ap_clk_2x (the double-pumped PE array's), ap_rst_n, interrupt or an AXI4 / AXI4-Lite signal under the
    prefix m_axi_gmem_ / m_axi_gmem1_ to m_axi_gmem3_ (the second to fourth HP ports) / s_axi_control_, and every
    signal of the six interfaces is there."""
    text = (ip.RTL_DIR / "accel_rtl.sv").read_text()
    decls = re.findall(r"^\s*(?:input|output)\s+wire\s*(?:\[[^\]]*\])?\s*([^/\n]*)", text, re.M)
    ports = [n.strip() for d in decls for n in d.split(",") if n.strip()]
    axi = ["awid", "awaddr", "awlen", "awsize", "awburst", "awlock", "awcache", "awprot", "awvalid", "awready",
           "wdata", "wstrb", "wlast", "wvalid", "wready", "bid", "bresp", "bvalid", "bready", "arid", "araddr",
           "arlen", "arsize", "arburst", "arlock", "arcache", "arprot", "arvalid", "arready", "rid", "rdata",
           "rresp", "rlast", "rvalid", "rready"]
    axil = ["awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp", "bvalid", "bready",
            "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready"]
    expected = {"ap_clk", "ap_clk_2x", "ap_rst_n", "interrupt"} | {f"m_axi_gmem_{s}" for s in axi} \
        | {f"m_axi_gmem{p}_{s}" for p in (1, 2, 3) for s in axi} \
        | {f"s_axi_control_{s}" for s in axil}
    assert set(ports) == expected and len(ports) == len(expected)


def test_ip_sources_hold_the_rom(zcu19eg_ip):
    """The written sources end with the IP top, the ROM image is the program's, and the IP top names it."""
    b, d, r, prog = zcu19eg_ip
    assert [s.name for s in r["sources"]][-1] == "accel_rtl.sv"
    assert (d / "src" / ip.ROM_FILE).read_text() == rom_image(prog)
    assert f'parameter string ROM_FILE = "{ip.ROM_FILE}"' in (d / "src" / "accel_rtl.sv").read_text()


@pytest.mark.slow   # (the same lint as test_build_rtl_flow_writes_the_ip_and_names_the_vivado_commands, 25-50 s)
def test_ip_sources_lint_clean_with_the_rom(zcu19eg_ip):
    """The written sources of the board configuration (32 x 32) lint clean under the IP top (the default tier lints
    the same sources, with a compiled program's ROM, in the build flow's test below)."""
    ip.lint(zcu19eg_ip[2]["sources"])


@needs_tclsh
def test_package_ip_tcl_in_tclsh_with_stub_commands(zcu19eg_ip):
    """package_ip.tcl: the part, every source and the ROM as a memory file, the clock constraint, the VLNV the
    driver binds, both AXI interfaces inferred and associated with ap_clk, reset active low, level interrupt, and
    an address block holding exactly the registers of generator/spec/isa.py."""
    b, d, r, _ = zcu19eg_ip
    calls = _run_tcl(d, "package_ip.tcl", ip.IP_TOP)
    assert calls[0] == f"create_project -force {ip.IP_TOP}_ip ip_prj -part {b.part}"
    added = " ".join(c for c in calls if c.startswith("add_files"))
    for s in r["sources"]:
        assert f"src/{s.name}" in added
    assert f"src/{ip.ROM_FILE}" in added and "accel_rtl_ooc.xdc" in added
    assert f"set_property file_type {{Memory File}} file:{ip.ROM_FILE}" in calls
    vendor, library, name, version = RTL_KERNEL_VLNV.split(":")
    pkg = next(c for c in calls if c.startswith("ipx::package_project"))
    assert f"-vendor {vendor} -library {library}" in pkg
    assert any(f"name {name} version {version}" in c for c in calls)
    assert "ipx::infer_bus_interfaces xilinx.com:interface:aximm_rtl:1.0 ipx::current_core" in calls
    assert "ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk ipx::current_core" in calls
    assert "ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk ipx::current_core" in calls
    assert "ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n ipx::current_core" in calls
    props = [c for c in calls if c.startswith("set_property")]
    assert "set_property value ACTIVE_LOW ipx::add_bus_parameter" in props
    assert "set_property value LEVEL_HIGH ipx::add_bus_parameter" in props
    # the clock's frequency is left to the block design (propagated from the PS's PL clock): no FREQ_HZ is set, one
    # the packager inferred is removed
    assert not any("FREQ_HZ" in c for c in calls if c.startswith(("ipx::add_bus_parameter", "set_property")))
    assert str(int(b.pl_clock_mhz * 1e6)) not in (d / "package_ip.tcl").read_text()
    assert "ipx::remove_bus_parameter FREQ_HZ busif:ap_clk" in calls
    assert not any(c.startswith("ipx::remove_bus_parameter") for c in
                   _run_tcl(d, "package_ip.tcl", ip.IP_TOP, pre="set ::inferred_freq 0\n"))
    regs = [c.split()[1] for c in calls if c.startswith("ipx::add_register")]
    assert regs == [n for n, *_ in isa.REGISTERS]
    sets = [c for c in props if "address_offset" in c]
    for (n, off, bits, acc), c in zip(isa.REGISTERS, sets):
        assert f"address_offset 0x{off:02X} size {bits} access {'read-only' if acc == 'r' else 'read-write'}" in c
    block = next(c for c in props if "usage register" in c)
    rng = int(re.search(r"range (\d+)", block).group(1))
    assert rng >= isa.REGISTERS[-1][1] + 4 and rng & (rng - 1) == 0
    assert calls[-1] == "ipx::save_core ipx::current_core"


@needs_tclsh
@pytest.mark.parametrize("brd", ["zcu19eg", "kv260"])
def test_vivado_bd_tcl_has_the_hls_ps_configuration(tmp_path, brd):
    """vivado_bd.tcl of the RTL IP: the same part, board preset and Zynq UltraScale+ PS configuration as the HLS
    block design (call for call, but for the HLS design's HP2 for the fetch with two HP ports), the IP by its VLNV
    with s_axi_control on HPM0, m_axi_gmem on HP0 and the interrupt through the same axi_intc as the HLS design's
    (check_interrupt), and the overlay copied where invoke package --kernel rtl finds it."""
    from generator.flows.package import find_overlay
    b = load_board(brd)
    bp = f"{b.vivado_board_part}:1.0" if b.vivado_board_part else ""
    (tmp_path / "hls").mkdir()
    hls.render(b, tmp_path / "hls", overlay_dir=tmp_path / "hls_ov")
    ov = tmp_path / "rtl_ov"
    ip.render_ip(b, tmp_path / "rtl", bytes(isa.INSN_BYTES), overlay=ov)
    h = _run_tcl(tmp_path / "hls", "vivado_bd.tcl", hls.TOP, bp)
    r = _run_tcl(tmp_path / "rtl", "vivado_bd.tcl", ip.IP_TOP, bp)
    ps = [c for c in h if c.endswith(" zynq_ultra_ps_e_0") and not c.startswith("create_bd_cell")]
    # the HLS design's program fetch has HP2 to itself with two HP ports (the RTL's shares LOAD's read channel)
    hp2 = [c for c in ps if "PSU__USE__S_AXI_GP4 1" in c]
    assert len(hp2) == (1 if b.accelerator.hp_ports == 2 else 0)
    ps = [c for c in ps if c not in hp2]
    assert ps and ps == [c for c in r if c.endswith(" zynq_ultra_ps_e_0") and not c.startswith("create_bd_cell")]
    assert r[0] == f"create_project -force {ip.IP_TOP}_bd vivado_prj -part {b.part}"
    assert [c for c in h if "board_part" in c] == [c for c in r if "board_part" in c]
    assert f"create_bd_cell -type ip -vlnv {RTL_KERNEL_VLNV} {ip.IP_TOP}_0" in r
    intf = " | ".join(c for c in r if c.startswith("connect_bd_intf_net"))
    assert f"{ip.IP_TOP}_0/s_axi_control" in intf and f"{ip.IP_TOP}_0/m_axi_gmem" in intf
    assert "M_AXI_HPM0_FPD" in intf and "S_AXI_HP0_FPD" in intf
    check_interrupt(r, ip.IP_TOP)
    check_interrupt(h, hls.TOP)                             # the same controller, wiring and address in both
    logic = "zynq_ultra_ps_e_0/pl_clk0" if b.accelerator.pump == 1 else "clk_wiz_0/clk_out1"
    assert any(f"{ip.IP_TOP}_0/ap_clk " in c + " " and f"pin:{logic} " in c + " " for c in r)
    assert any(c.startswith("launch_runs impl_1 -to_step write_bitstream") for c in r)
    stem = f"yolofpga_rtl_{brd}"
    assert [p.name for p in find_overlay(brd, ov, "rtl")] == [f"{stem}.bit", f"{stem}.hwh"]


def test_xdc_constrains_ap_clk_at_the_board_clock(zcu19eg_ip):
    b, d, _, _ = zcu19eg_ip
    xdc = (d / "accel_rtl_ooc.xdc").read_text()
    period = float(re.search(r"create_clock -period ([\d.]+) -name ap_clk \[get_ports ap_clk\]", xdc).group(1))
    assert period == pytest.approx(1e3 / b.pl_clock_mhz, abs=1e-3)


def test_render_refuses_a_partial_program(tmp_path):
    with pytest.raises(RtlError, match="whole number of 32-byte instructions"):
        ip.render_ip(load_board("zcu19eg"), tmp_path, bytes(40))


def _nets(calls) -> list[set]:
    """The block design's connect_bd_net calls as sets of pins (the stub's ``pin:`` prefix dropped)."""
    return [{a[4:] for a in c.split()[1:]} for c in calls if c.startswith("connect_bd_net")]


@needs_tclsh
def test_single_rate_ip_ties_ap_clk_2x_to_the_logic_clock(tmp_path):
    """pump 1: no Clocking Wizard; the IP's unused ap_clk_2x is on PL clock 0's net with ap_clk; the XDC constrains
    ap_clk only."""
    from helpers import board
    d = tmp_path
    ip.render_ip(board(pump=1), d, bytes(isa.INSN_BYTES), overlay=d / "overlay")
    calls = _run_tcl(d, "vivado_bd.tcl", ip.IP_TOP)
    assert not any("clk_wiz" in c for c in calls)
    net = next(n for n in _nets(calls) if f"{ip.IP_TOP}_0/ap_clk" in n)
    assert {"zynq_ultra_ps_e_0/pl_clk0", f"{ip.IP_TOP}_0/ap_clk_2x"} <= net
    assert "ap_clk_2x" not in (d / "accel_rtl_ooc.xdc").read_text()


@needs_tclsh
def test_double_pumped_ip_clocks_from_one_mmcm(tmp_path):
    """pump 2 (the TINY array): the IP's sources lint clean under accel_rtl with ap_clk_2x driving the PE array; the
    XDC constrains ap_clk_2x at half ap_clk's period; package_ip.tcl infers ap_clk_2x as a clock (no FREQ_HZ); the
    block design makes both clocks in one Clocking Wizard from PL clock 0 (outputs at 1x and 2x the board clock,
    both on matched routing), puts ap_clk_2x alone on the 2x output, the IP's ap_clk, every AXI clock and the reset
    block on the 1x output (PL clock 0 feeds the MMCM only), and holds the reset until the MMCM locks."""
    from generator.exec.rtl import TINY
    from helpers import board
    b = board(**{**TINY, "pump": 2})
    r = ip.render_ip(b, tmp_path, bytes(isa.INSN_BYTES), overlay=tmp_path / "overlay")
    ip.lint(r["sources"])
    xdc = (tmp_path / "accel_rtl_ooc.xdc").read_text()
    per = {m[1]: float(m[0]) for m in re.findall(r"create_clock -period ([\d.]+) -name (\w+)", xdc)}
    assert per["ap_clk"] == pytest.approx(1e3 / b.pl_clock_mhz, abs=1e-3)
    assert per["ap_clk_2x"] == pytest.approx(per["ap_clk"] / 2, abs=1e-3)
    pkg = _run_tcl(tmp_path, "package_ip.tcl", ip.IP_TOP)
    assert "ipx::infer_bus_interface ap_clk_2x xilinx.com:signal:clock_rtl:1.0 ipx::current_core" in pkg
    assert "ipx::remove_bus_parameter FREQ_HZ busif:ap_clk_2x" in pkg
    calls = _run_tcl(tmp_path, "vivado_bd.tcl", ip.IP_TOP)
    assert f"create_bd_cell -type ip -vlnv xilinx.com:ip:clk_wiz clk_wiz_0" in calls
    wiz = next(c for c in calls if c.startswith("set_property") and "CLKOUT2_REQUESTED_OUT_FREQ" in c)
    f1 = float(re.search(r"CLKOUT1_REQUESTED_OUT_FREQ (\S+)", wiz).group(1))
    f2 = float(re.search(r"CLKOUT2_REQUESTED_OUT_FREQ (\S+)", wiz).group(1))
    assert f1 == pytest.approx(b.pl_clock_mhz) and f2 == pytest.approx(2 * b.pl_clock_mhz)
    assert "CLKOUT1_MATCHED_ROUTING true" in wiz and "CLKOUT2_MATCHED_ROUTING true" in wiz
    nets = _nets(calls)
    top = f"{ip.IP_TOP}_0"
    assert {"clk_wiz_0/clk_out2", f"{top}/ap_clk_2x"} in nets
    logic = next(n for n in nets if "clk_wiz_0/clk_out1" in n)
    assert {f"{top}/ap_clk", "zynq_ultra_ps_e_0/maxihpm0_fpd_aclk", "zynq_ultra_ps_e_0/saxihp0_fpd_aclk",
            "smartconnect_ctrl/aclk", "smartconnect_hp0/aclk", "axi_intc_0/s_axi_aclk",
            "proc_sys_reset_0/slowest_sync_clk"} <= logic and f"{top}/ap_clk_2x" not in logic
    assert [n for n in nets if "zynq_ultra_ps_e_0/pl_clk0" in n] == [{"zynq_ultra_ps_e_0/pl_clk0", "clk_wiz_0/clk_in1"}]
    assert {"clk_wiz_0/locked", "proc_sys_reset_0/dcm_locked"} in nets


def test_build_rtl_flow_writes_the_ip_and_names_the_vivado_commands(tmp_path, monkeypatch):
    """build_rtl_flow for zcu19eg on a machine without Vivado: the program's ROM, the Tcl, the XDC, the lint called
    on the IP's sources (here recorded: the same lint runs in test_ip_sources_lint_clean_with_the_rom, slow, and on
    TINY in tests/exec/test_rtl.py), and the two Vivado commands in order (printed and in README.txt)."""
    from generator.flows.build import build_rtl_flow
    real_which = shutil.which
    monkeypatch.setattr(ip.shutil, "which", lambda n, **k: None if n == "vivado" else real_which(n, **k))
    linted = []
    monkeypatch.setattr(ip, "lint", lambda sources, top=ip.IP_TOP: linted.append(list(sources)) or "")
    lines = []
    r = build_rtl_flow(out=tmp_path / "b", log=lines.append)
    d = r.out
    assert d == tmp_path / "b" / "rtl"
    for f in ip.IP_FILES + ["README.txt", f"src/{ip.ROM_FILE}", "src/accel_rtl.sv", "src/accel_pkg.sv"]:
        assert (d / f).is_file(), f
    blob = (tmp_path / "b" / "program.bin").read_bytes()
    assert (d / "src" / ip.ROM_FILE).read_text() == rom_image(blob) and r.n_insns == len(blob) // isa.INSN_BYTES
    msg = r.tools_message
    assert msg.index("-source package_ip.tcl") < msg.index("-source vivado_bd.tcl")
    assert (d / "README.txt").read_text() == msg + "\n"
    assert "lint (-Wall) clean" in "\n".join(lines)
    assert len(linted) == 1 and {p.name for p in linted[0]} >= {"accel_rtl.sv", "accel_pkg.sv", "pre_insn.sv"} \
        and all(p.parent == d / "src" for p in linted[0]), linted


@needs_tclsh
def test_build_rtl_flow_without_room_for_the_rom_fetches_from_ddr(tmp_path, monkeypatch):
    """kv260's board file: YOLOv4-tiny's int8 program in a ROM would take the block RAM over the K26's 144 BRAM36
    (the resource model's block plus the ROM's 256-bit words), so the IP has no ROM (no image, ROM_FILE empty in
    the top, package_ip.tcl adds no memory file) and the flow says the program is fetched from DDR."""
    from generator.estimate import rtl_model
    from generator.flows.build import build_rtl_flow
    from generator.spec.memories import bram36_for
    real_which = shutil.which
    monkeypatch.setattr(ip.shutil, "which", lambda n, **k: None if n == "vivado" else real_which(n, **k))
    monkeypatch.setattr(ip, "lint", lambda sources, top=ip.IP_TOP: "")
    lines = []
    r = build_rtl_flow(Target(board="kv260"), out=tmp_path / "b", log=lines.append)
    b = load_board("kv260")
    assert rtl_model.estimate(b).bram36 + bram36_for(r.n_insns, isa.INSN_BITS) > b.resources.bram36
    d = r.out
    assert not (d / "src" / ip.ROM_FILE).exists()
    assert 'parameter string ROM_FILE = ""' in (d / "src" / "accel_rtl.sv").read_text()
    assert any("gets no ROM and fetches the program from DDR" in ln for ln in lines)
    calls = _run_tcl(d, "package_ip.tcl", ip.IP_TOP)
    assert not any(ip.ROM_FILE in c for c in calls) and any(c.startswith("add_files") for c in calls)


def test_build_with_an_unknown_kernel_exits_2():
    r = subprocess.run([str(Path(sys.executable).parent / "invoke"), "build", "--kernel", "vhdl"], cwd=ROOT_DIR,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip() == "error: --kernel vhdl: choose one of hls, rtl"


@needs_tclsh
def test_vivado_bd_tcl_refuses_a_bitstream_that_misses_timing(tmp_path):
    """The RTL block design signs off timing as the HLS one does: a negative WNS prints the worst path and stops
    with an error before the overlay is copied; the PS's PL clock is what the IP's ap_clk gets (propagated)."""
    b = load_board("zcu104")
    ov = tmp_path / "ov"
    ip.render_ip(b, tmp_path, bytes(isa.INSN_BYTES), overlay=ov)
    r = _run_tcl(tmp_path, "vivado_bd.tcl", ip.IP_TOP, pre="set ::wns -0.5\n", ok=False)
    assert r.returncode != 0 and "timing not met: WNS -0.5 ns" in r.stderr and "WORST PATH" in r.stdout
    assert not (ov / f"yolofpga_rtl_{b.name}.bit").exists()
    calls = _run_tcl(tmp_path, "vivado_bd.tcl", ip.IP_TOP)
    assert (ov / f"yolofpga_rtl_{b.name}.bit").is_file()
    names = [c.split()[0] for c in calls]
    assert names.index("validate_bd_design") < names.index("launch_runs") < names.index("open_run")
    assert "report_timing_summary" in names
    # no FREQ_HZ is set on the IP cell in the block design (the PS's clock propagates)
    assert not any("FREQ_HZ" in c for c in calls if c.startswith("set_property"))
