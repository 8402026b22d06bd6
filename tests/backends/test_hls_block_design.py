"""The Vivado block design of the HLS kernel (generator/backends/hls/block_design.py, vivado_bd.tcl): the rendered
script executed by tclsh with stub commands (part, board preset, clock, HP ports, the IPs by their VLNV, each stream's
FIFO and each buffer's RAM wired as block_design() states, the overlay copied); the block design's buffer memory
(hls_templates/bd/accel_ram.v) under Verilator."""
import re
import subprocess

import pytest

from generator.backends import hls
from generator.backends.hls.block_design import block_design
from generator.backends.hls.kernel import BD_DIR
from generator.spec import isa, memories
from host.registers import KERNEL_VLNV, ip_vlnv
from helpers import board


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
    _check_memories(b, bd, cells, intf, edge, props)
    _check_wiring(bd, edge, nets, props)
    # the memory module is part of the project
    assert "add_files -norecurse accel_ram.v" in calls


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


def _check_memories(b, bd, cells, intf, edge, props):
    """One accel_ram cell per memory at its primitive, depth and width; port A from the producer, port B (and
    ACC's shared port C) to the consumers."""
    a = b.accelerator
    mems = {m["name"]: m for m in bd["memories"]}
    assert len(mems["IBUF"]["ports"]) == 2 and len(mems["ACC"]["ports"]) == 2
    assert len(mems["WBUF"]["ports"]) == 2 * a.tm and len(mems["PBUF"]["ports"]) == a.tm == len(mems["OBUF"]["ports"])
    rams = [c for c in cells if c.endswith("_ram")]
    assert len(rams) == sum(len(m["ports"]) for m in bd["memories"])
    prim = {"bram": "block", "uram": "ultra", "lutram": "distributed"}
    for m in bd["memories"]:
        for p in m["ports"]:
            assert "-type module -reference accel_ram" in cells[f"{p}_ram"]
            assert f"CONFIG.MEMORY_PRIMITIVE {prim[m['impl']]}" in props[f"{p}_ram"]
            assert f"CONFIG.DEPTH {m['depth']} CONFIG.WIDTH {m['width']}" in props[f"{p}_ram"]
            assert f"CONFIG.TDP {int(m['name'] == 'ACC')}" in props[f"{p}_ram"]   # ACC: compute reads + writes on both
            assert (f"intf:{m['producer']}_0/{p}_PORTA", f"intf:{p}_ram/BRAM_A") in edge
            if m["name"] == "ACC":     # compute writes A, reads B; post reads C (shares B)
                assert (f"intf:accel_compute_0/{p}_PORTB", f"intf:{p}_ram/BRAM_B") in edge
                assert (f"intf:accel_post_0/{p}_PORTA", f"intf:{p}_ram/BRAM_C") in edge
                assert "CONFIG.SHARED_B 1" in props[f"{p}_ram"]
            else:
                assert (f"intf:{m['consumers'][0]}_0/{p}_PORTA", f"intf:{p}_ram/BRAM_B") in edge
                assert "CONFIG.SHARED_B 0" in props[f"{p}_ram"]
                assert not any(e[1] == f"intf:{p}_ram/BRAM_C" for e in intf)
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
    assert ["pin:accel_0/interrupt", "pin:zynq_ultra_ps_e_0/pl_ps_irq0"] in nets
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
    assert (f"CONFIG.DW 256 CONFIG.AW {AXI_ADDR_BITS} CONFIG.OUTST {HP_SPLIT_OUTSTANDING} CONFIG.FDEPTH {HP_SPLIT_FIFO_WORDS}"
            in props["accel_hp_0"])
    clk = next(n for n in nets if n[0] == "pin:zynq_ultra_ps_e_0/pl_clk0")
    rst = next(n for n in nets if n[0] == "pin:proc_sys_reset_0/peripheral_aresetn")
    for p in ("zynq_ultra_ps_e_0/saxihp1_fpd_aclk", "zynq_ultra_ps_e_0/saxihp2_fpd_aclk", "accel_hp_0/aclk",
              "smartconnect_hp2/aclk"):
        assert f"pin:{p}" in clk
    assert "pin:accel_hp_0/aresetn" in rst and "pin:smartconnect_hp2/aresetn" in rst


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
    ram = BD_DIR / "accel_ram.v"
    model = Path(__file__).parent.parent / "data" / "xpm_memory_sdpram_model.v"
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


def test_vivado_bd_tcl_two_hp_ports_through_the_splitter(tmp_path):
    """hp_ports 2 (zcu19eg's 256-bit m_axi): LOAD and STORE through accel_hp_0 (hls_templates/bd/accel_hp.v around
    rtl/axi_hp_split.sv, both added to the project) onto HP0 + HP1, the program fetch on HP2 (all 128 bits); with
    one HP port the same m_axi goes through one SmartConnect onto HP0."""
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
    assert ("intf:accel_store_0/m_axi_store_gmem", "intf:smartconnect_hp0/S02_AXI") in \
        {tuple(c.split()[1:]) for c in calls if c.startswith("connect_bd_intf_net")}


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
