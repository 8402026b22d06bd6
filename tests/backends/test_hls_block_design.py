"""The Vivado block design of the HLS kernel (generator/backends/hls/block_design.py, vivado_bd.tcl): the rendered
script executed by tclsh with stub commands (part, board preset, clock, HP ports, the IPs by their VLNV, each stream's
FIFO and each buffer's RAM wired as block_design() states, the overlay copied); the block design's buffer memory
(hls_templates/bd/accel_ram.v) under Verilator."""
import re
import subprocess
from pathlib import Path

import pytest

from generator.backends import hls
from generator.backends.hls.block_design import block_design
from generator.backends.hls.kernel import BD_DIR
from generator.spec import isa, memories
from host.registers import KERNEL_VLNV, ip_vlnv
from generator.spec.board import load_board
from helpers import board

#: the xpm stand-ins and accel_ram.v's testbench
DATA = Path(__file__).parent.parent / "data"


_VIVADO_STUBS = r"""
set ::log {}
set ::made {}
proc _log {cmd args} { lappend ::log [list $cmd {*}$args] }
foreach cmd {create_project set_property update_ip_catalog create_bd_design apply_bd_automation connect_bd_net
             connect_bd_intf_net assign_bd_address validate_bd_design save_bd_design add_files
             update_compile_order launch_runs wait_on_run current_project current_fileset get_runs get_files
             open_run report_timing_summary} {
    proc $cmd {args} [string map [list CMD $cmd] {_log CMD {*}$args; return CMD}]
}
proc get_board_parts {args} { _log get_board_parts {*}$args; return [expr {$::have_board ? "$::bp_found" : ""}] }
# a pin is one word "pin:<cell>/<name>" ("intf:..." for an interface pin), so lists of pins expand as in Vivado;
# the interface pins named in ::absent do not exist (an HLS IP without that port)
if {![info exists ::absent]} { set ::absent {} }
proc get_bd_pins {args} { return "pin:[lindex $args end]" }
proc get_bd_addr_spaces {args} { return "space:[lindex $args end]" }
proc get_bd_addr_segs {args} { return "seg:[lindex $args end]" }
proc get_bd_intf_pins {args} {
    if {[lsearch -exact $::absent [lindex $args end]] >= 0} { return "" }
    return "intf:[lindex $args end]"
}
proc create_bd_cell {args} { _log create_bd_cell {*}$args; lappend ::made [lindex $args end]; return [lindex $args end] }
proc make_wrapper {args} { _log make_wrapper {*}$args; return vivado_prj/system_wrapper.v }
# the routed design's worst setup / hold slack (ns): ::wns / ::whs, 0.1 unless the test sets them
if {![info exists ::wns]} { set ::wns 0.1 }
if {![info exists ::whs]} { set ::whs 0.1 }
proc get_timing_paths {args} { return [expr {[lsearch $args -hold] >= 0 ? "path:hold" : "path:setup"}] }
proc report_timing {args} { _log report_timing {*}$args; return "WORST PATH [lindex $args end-1]" }
proc get_property {name obj} {
    if {$name eq "SLACK"} { return [expr {$obj eq "path:hold" ? $::whs : $::wns}] }
    return "100%"
}
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
    if shutil.which("tclsh") is None:
        pytest.skip("tclsh not installed")
    b = load_board(brd)
    ov = tmp_path / "overlay" / brd
    hls.render(b, tmp_path, overlay_dir=ov)
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
    assert int(cfg["PSU__SAXIGP2__DATA_WIDTH"]) == min(b.accelerator.axi_data_width_bits, b.hp_port_width_bits)
    assert float(cfg["PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ"]) == b.pl_clock_mhz
    assert cfg["PSU__USE__S_AXI_GP2"] == "1" and cfg["PSU__USE__IRQ0"] == "1" and cfg["PSU__USE__M_AXI_GP0"] == "1"
    assert (tmp_path / "accel_ram.v").is_file()
    intf = " | ".join(c for c in calls if c.startswith("connect_bd_intf_net"))
    assert "S_AXI_HP0_FPD" in intf and "M_AXI_HPM0_FPD" in intf and f"{hls.TOP}_0/m_axi_gmem" in intf
    assert f"{hls.TOP}_0/s_axi_control" in intf
    check_interrupt(calls, hls.TOP)
    _check_block_design(b, calls)
    for step in ["assign_bd_address", "validate_bd_design", "make_wrapper"]:
        assert step in names
    assert any(c.startswith("launch_runs impl_1 -to_step write_bitstream") for c in calls)
    assert names.index("validate_bd_design") < names.index("make_wrapper") < names.index("launch_runs")
    stem = f"yolofpga_{brd}"
    assert (ov / f"{stem}.bit").read_text() == "BIT\n" and (ov / f"{stem}.hwh").read_text() == "HWH\n"
    from generator.flows.package import find_overlay
    assert [p.name for p in find_overlay(brd, ov)] == [f"{stem}.bit", f"{stem}.hwh"]


def _check_block_design(b, calls, absent=()):
    """The connections vivado_bd.tcl makes (from the stub's log): each stream's FIFO between its one producer and
    its one consumer at the kernel's depth, each memory's ports on the right IPs, every m_axi on the HP port,
    control, interrupt, the error wire, clocks and resets."""
    cells = {c.split()[-1]: c for c in calls if c.startswith("create_bd_cell")}
    for t, _ in hls.TOPS:
        assert f"-vlnv {ip_vlnv(t)} {t}_0" in cells[f"{t}_0"]
        assert f"update_ip_catalog -add_ip ip/{t}.zip -repo_path ip_repo" in calls
    intf = [c.split()[1:] for c in calls if c.startswith("connect_bd_intf_net")]
    assert all(len(e) == 2 for e in intf)
    ends = [p for e in intf for p in e]
    assert len(ends) == len(set(ends)), "an interface pin connected twice"
    edge = {tuple(e) for e in intf}
    nets = [c.split()[1:] for c in calls if c.startswith("connect_bd_net")]
    props = {c.split()[-1]: c for c in calls if c.startswith("set_property -dict")}
    bd = block_design(b)
    _check_streams(bd, cells, edge, props)
    _check_memories(b, bd, cells, intf, edge, props, absent)
    _check_wiring(bd, edge, nets, props)
    # the memory module is part of the project
    assert "add_files -norecurse accel_ram.v" in calls


def check_interrupt(calls, top):
    """ap_done through an axi_intc to the PS (PYNQ lists an interrupt pin only behind one): axi_intc_0's one input
    the accelerator's ``interrupt`` (no other net has it), rising-edge sensitive (set by hand, as PYNQ's interrupt
    documentation prescribes), its ``irq`` the only driver of pl_ps_irq0, a single level-high output; its AXI-Lite slave on the control SmartConnect's second master port, on the accelerator's
    clock and reset net; its registers pinned at 0xA001_0000 (64 KiB) of the PS's address space before Vivado
    assigns the rest. ``calls``: the stub's log lines of a rendered vivado_bd.tcl; ``top``: the IP's cell prefix."""
    nets = [c.split()[1:] for c in calls if c.startswith("connect_bd_net")]
    edge = {tuple(c.split()[1:]) for c in calls if c.startswith("connect_bd_intf_net")}
    props = {c.split()[-1]: c for c in calls if c.startswith("set_property -dict")}
    assert "create_bd_cell -type ip -vlnv xilinx.com:ip:axi_intc axi_intc_0" in calls
    assert ("{CONFIG.C_IRQ_CONNECTION 1 CONFIG.C_IRQ_IS_LEVEL 1 CONFIG.C_KIND_OF_INTR.VALUE_SRC USER "
            "CONFIG.C_KIND_OF_INTR 0xFFFFFFFF}") in props["axi_intc_0"]
    assert [n for n in nets if f"pin:{top}_0/interrupt" in n] == [[f"pin:{top}_0/interrupt", "pin:axi_intc_0/intr"]]
    assert [n for n in nets if "pin:zynq_ultra_ps_e_0/pl_ps_irq0" in n] == \
        [["pin:axi_intc_0/irq", "pin:zynq_ultra_ps_e_0/pl_ps_irq0"]]
    assert [e for e in edge if "intf:axi_intc_0/s_axi" in e] == \
        [("intf:smartconnect_ctrl/M01_AXI", "intf:axi_intc_0/s_axi")]
    assert "CONFIG.NUM_SI 1 CONFIG.NUM_MI 2}" in props["smartconnect_ctrl"]
    assert any(n[0] in ("pin:zynq_ultra_ps_e_0/pl_clk0", "pin:clk_wiz_0/clk_out1") and   # (pump 2: the MMCM's 1x)
               {f"pin:{top}_0/ap_clk", "pin:axi_intc_0/s_axi_aclk"} <= set(n) for n in nets)
    assert any(n[0] == "pin:proc_sys_reset_0/peripheral_aresetn" and
               {f"pin:{top}_0/ap_rst_n", "pin:axi_intc_0/s_axi_aresetn"} <= set(n) for n in nets)
    assert [c for c in calls if c.startswith("assign_bd_address")] == [
        "assign_bd_address -offset 0xA0010000 -range 0x00010000 -target_address_space space:zynq_ultra_ps_e_0/Data "
        "seg:axi_intc_0/S_AXI/Reg", "assign_bd_address"]


def _check_streams(bd, cells, edge, props):
    """Each stream's axis_data_fifo between its producer and consumer, at a power-of-two depth >= the kernel's."""
    assert len(bd["streams"]) == 14
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
        assert by[q]["fifo_depth"] == memories.CMD_QUEUE_DEPTH
    assert (by["l2c"]["src"], by["l2c"]["dst"]) == ("accel_load", "accel_compute")
    assert (by["c2l"]["src"], by["c2l"]["dst"]) == ("accel_compute", "accel_load")
    assert (by["c2s"]["src"], by["c2s"]["dst"]) == ("accel_compute", "accel_store")
    assert (by["s2c"]["src"], by["s2c"]["dst"]) == ("accel_store", "accel_compute")
    assert (by["post_q"]["src"], by["post_q"]["dst"]) == ("accel_store", "accel_post")
    assert (by["p2s"]["src"], by["p2s"]["dst"]) == ("accel_post", "accel_store")


def _check_memories(b, bd, cells, intf, edge, props, absent=()):
    """One accel_ram cell per memory at its primitive, depth and width, with the kernel's memory plan
    (issue 42, the table of generator/spec/memories.py): IBUF one true-dual-port memory per bank and lane, LOAD's
    PORTA on port A shared by COMPUTE's PORTA (BRAM_D), COMPUTE's PORTB on port B; ACC true dual port, COMPUTE's
    PORTA on A and PORTB on B,
    POST's read sharing B (BRAM_C); the others LOAD / POST writing port A, the consumer reading port B. A PORTB in
    ``absent`` (an IP without it) is not connected: its sharer then has the port alone (SHARED 0)."""
    a = b.accelerator
    mems = {m["name"]: m for m in bd["memories"]}
    assert mems["IBUF"]["ports"] == [f"ibuf_{k}_{j}" for k in range(2) for j in range(a.tn)]
    assert (mems["IBUF"]["width"], mems["IBUF"]["depth"]) == (16, a.ibuf_bank_bytes // a.tn)
    assert len(mems["ACC"]["ports"]) == 2
    assert len(mems["WBUF"]["ports"]) == 2 * a.tm and len(mems["PBUF"]["ports"]) == a.tm   # OBUF: whole Tm words
    assert mems["OBUF"]["ports"] == [f"obuf_{m}" for m in range(a.tm * -(-a.axi_data_width_bits // 8 // a.tm))]
    assert mems["PBUF"]["ports"] == [f"pbuf_{m}" for m in range(a.tm)] and mems["TBUF"]["ports"][-1] == f"tbuf_{a.tm - 1}"
    assert mems["PBUF"]["width"] == mems["TBUF"]["width"] == 8 * isa.PARAM_RECORD_BYTES == 128
    from generator.spec.hw import HwConfig             # the kernel's PBUF_ROWS (config.h)
    assert mems["PBUF"]["depth"] == HwConfig.from_board(b, 8).pbuf_rows and mems["TBUF"]["depth"] == isa.TBUF_ROWS
    rams = [c for c in cells if c.endswith("_ram")]
    assert len(rams) == sum(len(m["ports"]) for m in bd["memories"])
    prim = {"bram": "block", "uram": "ultra", "lutram": "distributed"}
    # the plan, written out: (memory, IP on BRAM_A, on BRAM_D, on BRAM_B, on BRAM_C) as (IP, HLS port)
    plan = {"IBUF": (("accel_load", "PORTA"), ("accel_compute", "PORTA"), ("accel_compute", "PORTB"), None),
            "ACC": (("accel_compute", "PORTA"), None, ("accel_compute", "PORTB"), ("accel_post", "PORTA"))}
    for m in bd["memories"]:
        tdp = m["name"] in ("IBUF", "ACC")
        assert m["tdp"] == int(tdp) and (m["impl"] != "lutram" or not tdp)   # xpm TDP is never distributed RAM
        for p in m["ports"]:
            assert "-type module -reference accel_ram" in cells[f"{p}_ram"]
            pr = props[f"{p}_ram"]
            assert f"CONFIG.MEMORY_PRIMITIVE {prim[m['impl']]}" in pr
            assert f"CONFIG.DEPTH {m['depth']} CONFIG.WIDTH {m['width']}" in pr
            assert f"CONFIG.TDP {int(tdp)}" in pr
            ta, td, tb, tc = plan.get(m["name"], ((m["producer"], "PORTA"), None, (m["consumers"][0], "PORTA"), None))
            want = {}
            for bram, user in (("A", ta), ("D", td), ("B", tb), ("C", tc)):
                if user is not None and f"{user[0]}_0/{p}_{user[1]}" not in absent:
                    want[bram] = f"intf:{user[0]}_0/{p}_{user[1]}"
            if "B" not in want and "C" in want:            # the sharer alone on port B: it is port B's user
                want["B"] = want.pop("C")
            got = {e[1].rsplit("_", 1)[1]: e[0] for e in intf if e[1].startswith(f"intf:{p}_ram/BRAM_")}
            assert got == want, (p, got, want)
            assert f"CONFIG.SHARED_A {int('D' in want)}" in pr and f"CONFIG.SHARED_B {int('C' in want)}" in pr
            assert f"CONFIG.USE_B {int('B' in want)}" in pr
    assert {m["producer"] for m in bd["memories"] if m["name"] in ("IBUF", "WBUF", "PBUF")} == {"accel_load"}
    assert mems["IBUF"]["consumers"] == mems["WBUF"]["consumers"] == ["accel_compute"]
    assert mems["PBUF"]["consumers"] == mems["TBUF"]["consumers"] == ["accel_post"]
    assert (mems["OBUF"]["producer"], mems["OBUF"]["consumers"]) == ("accel_post", ["accel_store"])


def _check_wiring(bd, edge, nets, props):
    """Every m_axi through the SmartConnect to HP0, or with two HP ports LOAD and STORE through accel_hp_0 (the
    burst splitter) onto HP0 + HP1 and the program fetch through a SmartConnect onto HP2; control on HPM0; the
    interrupt; the error wire; one clock net and one reset net reaching every IP and FIFO."""
    if "accel_hp_0" in props:
        _check_two_ports(edge, nets, props)
    else:
        for i, (cell, port) in enumerate([("accel_0", "m_axi_gmem"), ("accel_load_0", "m_axi_load_gmem"),
                                          ("accel_store_0", "m_axi_store_gmem")]):
            assert (f"intf:{cell}/{port}", f"intf:smartconnect_hp0/S0{i}_AXI") in edge
        assert "CONFIG.NUM_SI 3 " in props["smartconnect_hp0"]
        assert ("intf:smartconnect_hp0/M00_AXI", "intf:zynq_ultra_ps_e_0/S_AXI_HP0_FPD") in edge
    assert ("intf:zynq_ultra_ps_e_0/M_AXI_HPM0_FPD", "intf:smartconnect_ctrl/S00_AXI") in edge
    assert ("intf:smartconnect_ctrl/M00_AXI", "intf:accel_0/s_axi_control") in edge
    # error wire: ((load | compute) | store) | post into every module's err_in
    assert ["pin:accel_load_0/err_out", "pin:err_or_0/Op1"] in nets
    assert ["pin:accel_compute_0/err_out", "pin:err_or_0/Op2"] in nets
    assert ["pin:accel_store_0/err_out", "pin:err_or_1/Op2"] in nets
    assert ["pin:err_or_0/Res", "pin:err_or_1/Op1"] in nets
    assert ["pin:accel_post_0/err_out", "pin:err_or_2/Op2"] in nets
    assert ["pin:err_or_1/Res", "pin:err_or_2/Op1"] in nets
    assert ["pin:err_or_2/Res", "pin:accel_load_0/err_in", "pin:accel_compute_0/err_in",
            "pin:accel_store_0/err_in", "pin:accel_post_0/err_in"] in nets
    clk = next(n for n in nets if n[0] == "pin:zynq_ultra_ps_e_0/pl_clk0")
    rst = next(n for n in nets if n[0] == "pin:proc_sys_reset_0/peripheral_aresetn")
    for t, _ in hls.TOPS:
        assert f"pin:{t}_0/ap_clk" in clk and f"pin:{t}_0/ap_rst_n" in rst
    for f in bd["streams"]:
        assert f"pin:fifo_{f['name']}/s_axis_aclk" in clk and f"pin:fifo_{f['name']}/s_axis_aresetn" in rst


def _check_two_ports(edge, nets, props):
    """Two HP ports: LOAD's and STORE's m_axi on accel_hp_0 (the RTL's splitter, at the m_axi width and the RTL's
    outstanding / FIFO depths), its halves on HP0 / HP1, the fetch on HP2, all on the one clock and reset."""
    from generator.spec.arch import AXI_ADDR_BITS, HP_SPLIT_FIFO_WORDS, HP_SPLIT_OUTSTANDING
    assert ("intf:accel_load_0/m_axi_load_gmem", "intf:accel_hp_0/s_axi_load") in edge
    assert ("intf:accel_store_0/m_axi_store_gmem", "intf:accel_hp_0/s_axi_store") in edge
    assert ("intf:accel_hp_0/m00_axi", "intf:zynq_ultra_ps_e_0/S_AXI_HP0_FPD") in edge
    assert ("intf:accel_hp_0/m01_axi", "intf:zynq_ultra_ps_e_0/S_AXI_HP1_FPD") in edge
    assert ("intf:accel_0/m_axi_gmem", "intf:smartconnect_hp2/S00_AXI") in edge
    assert ("intf:smartconnect_hp2/M00_AXI", "intf:zynq_ultra_ps_e_0/S_AXI_HP2_FPD") in edge
    from generator.backends.hls.block_design import PS_HP_ADDR_BITS
    # the splitter at the RTL's 40 address bits between the HLS m_axi's 64 and the HP ports' 49
    assert PS_HP_ADDR_BITS == 49 and AXI_ADDR_BITS == 40
    assert (f"CONFIG.DW 256 CONFIG.AW {AXI_ADDR_BITS} CONFIG.PS_AW {PS_HP_ADDR_BITS} CONFIG.OUTST "
            f"{HP_SPLIT_OUTSTANDING} CONFIG.FDEPTH {HP_SPLIT_FIFO_WORDS}" in props["accel_hp_0"])
    clk = next(n for n in nets if n[0] == "pin:zynq_ultra_ps_e_0/pl_clk0")
    rst = next(n for n in nets if n[0] == "pin:proc_sys_reset_0/peripheral_aresetn")
    for p in ("zynq_ultra_ps_e_0/saxihp1_fpd_aclk", "zynq_ultra_ps_e_0/saxihp2_fpd_aclk", "accel_hp_0/aclk",
              "smartconnect_hp2/aclk"):
        assert f"pin:{p}" in clk
    assert "pin:accel_hp_0/aresetn" in rst and "pin:smartconnect_hp2/aresetn" in rst


def _verilator_ram(tmp_path):
    """The Verilator executable and the block-design memory's sources (accel_ram.v and the xpm stand-ins)."""
    from generator.exec.rtl import verilator
    exe = verilator()
    if exe is None:
        pytest.skip("verilator not installed")
    return exe, [str(BD_DIR / "accel_ram.v"), str(DATA / "xpm_memory_sdpram_model.v"),
                 str(DATA / "xpm_memory_tdpram_model.v")]


@pytest.mark.parametrize("tdp,shared_a,shared_b", [(0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (1, 1, 0)])
def test_accel_ram_lints_in_every_sharing_mode(tmp_path, tdp, shared_a, shared_b):
    """hls_templates/bd/accel_ram.v lint-clean (Verilator -Wall) over the behavioural xpm stand-ins (tests/data/)
    for each primitive a mode can map to (a true-dual-port memory is never LUTRAM) and each sharing mode."""
    exe, srcs = _verilator_ram(tmp_path)
    for prim in ("block", "ultra") + (() if tdp else ("distributed",)):
        r = subprocess.run([exe, "--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME",
                            "-Wno-UNUSEDPARAM", "-Wno-PINCONNECTEMPTY", *srcs, "--top-module", "accel_ram",
                            f"-GTDP={tdp}", f"-GSHARED_A={shared_a}", f"-GSHARED_B={shared_b}",
                            f'-GMEMORY_PRIMITIVE="{prim}"'], capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stderr


def test_accel_ram_writes_win_a_shared_port(tmp_path):
    """accel_ram.v simulated (Verilator, behavioural xpm stand-ins, tests/data/accel_ram_tb.sv): SDP byte-addressed writes with byte enables on
    port A, reads on port B and, through the shared port, on port C; ACC (TDP, port B shared with the post IP's
    read on C): a write of compute's PORTB in the same cycle as post's read enable is written (full and byte-masked),
    post's read takes port B over compute's read; IBUF (a TDP lane memory, port A shared): LOAD's writes on port A
    in the same cycle as COMPUTE's read enable on D are written (full and byte-masked), LOAD's enabled port without
    a write leaves port A to COMPUTE, whose PORTB reads port B meanwhile (the pixel pair, one word per port)."""
    exe, srcs = _verilator_ram(tmp_path)
    r = subprocess.run([exe, "--binary", "--timing", "-CFLAGS", "-std=c++20 -fcoroutines", "-Wno-fatal",
                        "-Wno-PINCONNECTEMPTY", *srcs, str(DATA / "accel_ram_tb.sv"), "--top-module", "tb", "-o",
                        "tb"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(tmp_path / "obj_dir" / "tb")], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert "PASS" in r.stdout and "FAIL" not in r.stdout, r.stdout + r.stderr


def test_vivado_bd_tcl_two_hp_ports_through_the_splitter(tmp_path):
    """hp_ports 2 (zcu19eg's 256-bit m_axi): LOAD and STORE through accel_hp_0 (hls_templates/bd/accel_hp.v around
    rtl/axi_hp_split.sv, both added to the project; PRE's writes on the load interface share the splitter's write
    channels with STORE's through accel_hp.v's arbiter, tests/rtl/test_accel_hp.py) onto HP0 + HP1, the program
    fetch on HP2 (all 128 bits); with one HP port the same m_axi go through one SmartConnect onto HP0: the load
    interface as a whole AXI4 master (PRE's writes too: no read-only mode set on it or the SmartConnect), every
    master's address space mapped onto DDR by assign_bd_address; the load bundle states its write bursts."""
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
    nets = [c.split()[1:] for c in calls if c.startswith("connect_bd_net")]
    props = {c.split()[-1]: c for c in calls if c.startswith("set_property -dict")}
    _check_two_ports(edge, nets, props)
    added = next(c for c in calls if c.startswith("add_files -norecurse") and "accel_hp.v" in c)
    for f in ["accel_hp.v", "sync_fifo.sv", "hp_seq.sv", "axi_hp_split.sv"]:
        assert f in added and (tmp_path / f).is_file()
    assert "create_bd_cell -type module -reference accel_hp accel_hp_0" in calls
    assert "config_interface -m_axi_conservative_mode=true" in (tmp_path / "run_hls.tcl").read_text()  # (the arbiter)
    ps = " ".join(c for c in calls if "PSU__SAXIGP" in c)
    for g in (2, 3, 4):
        assert f"PSU__USE__S_AXI_GP{g} 1" in ps and f"PSU__SAXIGP{g}__DATA_WIDTH 128" in ps
    # one HP port: no splitter, everything through one SmartConnect onto HP0
    one = tmp_path / "one"
    hls.render(board("zcu19eg", axi_data_width_bits=256, hp_ports=1), one, overlay_dir=one / "ov")
    (one / "stub.tcl").write_text("set ::have_board 0\nset ::bp_found {}\n" + _VIVADO_STUBS)
    r = subprocess.run(["tclsh", "stub.tcl"], cwd=one, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = (one / "calls.txt").read_text().splitlines()
    assert not any("accel_hp" in c for c in calls)
    edge1 = {tuple(c.split()[1:]) for c in calls if c.startswith("connect_bd_intf_net")}
    assert ("intf:accel_load_0/m_axi_load_gmem", "intf:smartconnect_hp0/S01_AXI") in edge1
    assert ("intf:accel_store_0/m_axi_store_gmem", "intf:smartconnect_hp0/S02_AXI") in edge1
    assert ("intf:smartconnect_hp0/M00_AXI", "intf:zynq_ultra_ps_e_0/S_AXI_HP0_FPD") in edge1
    assert not any(m in c for c in calls for m in ("READ_WRITE_MODE", "READ_ONLY", "HAS_WRITE"))
    assert "assign_bd_address" in calls           # (no -target: every master's space onto every slave, DDR included)
    pragma = next(ln for ln in (one / "accel.cpp").read_text().splitlines() if "bundle=load_gmem" in ln)
    outst = re.search(r"#define PRE_WR_OUTSTANDING (\d+)", (BD_DIR.parent / "kernel/accel_kernel_pre.h").read_text())
    assert "max_write_burst_length=" in pragma
    assert int(re.search(r"write_outstanding=(\d+)", pragma)[1]) >= int(outst[1])


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


def _run_stub(d, pre: str = "") -> subprocess.CompletedProcess:
    """Execute d/vivado_bd.tcl in tclsh under the stub commands (``pre``: Tcl run first, e.g. ::wns)."""
    (d / "stub.tcl").write_text("set ::have_board 0\nset ::bp_found {}\n" + pre + _VIVADO_STUBS)
    return subprocess.run(["tclsh", "stub.tcl"], cwd=d, capture_output=True, text=True)


@pytest.mark.skipif(__import__("shutil").which("tclsh") is None, reason="tclsh not installed")
def test_vivado_bd_tcl_connects_a_portb_only_where_the_ip_has_it(tmp_path):
    """An HLS IP without a PORTB (Vitis HLS gave the array one port): the memory port is not connected, the script
    says so, the other user has the memory's port alone (ACC bank 0: post's read on port B unshared; IBUF bank 1
    lane 5 without COMPUTE's PORTB: port B unused); a missing PORTA is an error naming the IP and the port."""
    b = load_board("zcu104")
    hls.render(b, tmp_path, overlay_dir=tmp_path / "ov")
    absent = ["accel_compute_0/acc_0_PORTB", "accel_compute_0/ibuf_1_5_PORTB"]
    r = _run_stub(tmp_path, f"set ::absent {{{' '.join(absent)}}}\n")
    assert r.returncode == 0, r.stderr
    for a in absent:
        cell, port = a.split("/")
        assert f"INFO: {cell} has no {port}" in r.stdout
    assert "INFO: port B of ibuf_1_5_ram unused" in r.stdout and "port B of ibuf_0_5_ram" not in r.stdout
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    _check_block_design(b, calls, absent)
    r = _run_stub(tmp_path, "set ::absent {accel_post_0/pbuf_3_PORTA}\n")
    assert r.returncode != 0 and "accel_post_0 has no interface pbuf_3_PORTA" in r.stderr


@pytest.mark.skipif(__import__("shutil").which("tclsh") is None, reason="tclsh not installed")
@pytest.mark.parametrize("wns,whs,worst", [(-0.213, 0.02, "max"), (0.4, -0.011, "min"), ("", 0.02, None)])
def test_vivado_bd_tcl_refuses_a_bitstream_that_misses_timing(tmp_path, wns, whs, worst):
    """After implementation the routed design's worst setup slack (WNS) and hold slack (WHS) must be >= 0: else
    the script prints the worst path (report_timing of that delay type), stops with an error (a non-zero exit) and
    copies no bitstream into the overlay folder; a design without any constrained path is refused the same way.
    With slack >= 0 (the other tests) the overlay is written."""
    ov = tmp_path / "ov"
    hls.render(load_board("kv260"), tmp_path, overlay_dir=ov)
    r = _run_stub(tmp_path, f"set ::wns {{{wns}}}\nset ::whs {{{whs}}}\n")
    assert r.returncode != 0
    assert not (ov / "yolofpga_kv260.bit").exists() and not (ov / "yolofpga_kv260.hwh").exists()
    if worst:
        assert f"WORST PATH {worst}" in r.stdout and f"timing not met: WNS {wns} ns, WHS {whs} ns" in r.stderr
    else:
        assert "no constrained timing path" in r.stderr
    ok = _run_stub(tmp_path, "set ::wns 0.0\nset ::whs 0.001\n")
    assert ok.returncode == 0, ok.stderr
    assert (ov / "yolofpga_kv260.bit").is_file() and "timing: WNS 0.0 ns (setup), WHS 0.001 ns" in ok.stdout
