"""A *modelled* hardware handoff (.hwh) of our block design, for the driver's binding tests. Not Vivado output.

Vivado is not available here, so the .hwh that ``vivado_bd.tcl`` would copy into the overlay folder is derived from
what the rendered script itself does: :func:`bd_calls` executes it under ``tclsh`` with stub Vivado commands that log
each call (as ``tests/backends/test_hls_block_design.py`` does), and :func:`write_hwh` writes an XML file in the schema
of the real files pynqmetadata ships (``pynqmetadata/tests/hwhs/resizer.hwh``: Vivado 2019.2, Zynq-7000, with the
Vivado HLS IP ``resize_accel``; ``rfsoc_sam.hwh``: Vivado 2020.2, Zynq UltraScale+), which served as the template.
Every element and where its content comes from:

* ``EDKSYSTEM`` / ``SYSTEMINFO``: ``ARCH="zynquplus"``; ``DEVICE``, ``PACKAGE``, ``SPEEDGRADE`` split from the part of
  ``create_project -part``; ``NAME`` the ``create_bd_design`` name; ``VIVADOVERSION`` says "modelled".
  ``EXTERNALPORTS`` / ``EXTERNALINTERFACES`` empty (the design has no external port).
* one ``MODULE`` per ``create_bd_cell``: ``INSTANCE`` / ``FULLNAME`` the cell name, ``VLNV`` the ``-vlnv`` given (an
  IP the script names without version gets the version in :data:`IP_VERSIONS`, the Vivado 2023.2 catalogue's: an
  assumption), a module reference ``xilinx.com:module_ref:<module>:1.0``; ``MODTYPE`` the VLNV's name.
  ``PARAMETERS``: the cell's ``CONFIG.*`` values from ``set_property -dict``; the PS's PL clock parameters that PYNQ's
  clock view reads (``PSU__FPGA_PL<i>_ENABLE``, ``PSU__CRL_APB__PL<i>_REF_CTRL__{ACT_FREQMHZ,DIVISOR0,DIVISOR1,
  SRCSEL}``: PL0 at the requested ``FREQMHZ`` from IOPLL at 1500 MHz, the achieved frequency taken equal to the
  requested one; PL1-3 off); the control IP's ``C_S_AXI_CONTROL_BASEADDR`` / ``HIGHADDR`` (as resizer's
  ``C_S_AXI_AXILITES_BASEADDR``).
* ``PORTS`` / ``CONNECTIONS`` of every ``connect_bd_net``: the first pin given drives the net (true of every
  ``connect_bd_net`` in our scripts), it lists every sink, each sink lists it (as in the real files); ``SIGIS``
  ``clk`` / ``rst`` / ``INTERRUPT`` by the pin's name (``interrupt``, ``intr``, ``irq``; ``interrupt`` also
  ``SENSITIVITY="LEVEL_HIGH"``, as resizer's ``resize_accel_0/interrupt``), widths 1. The interrupt is where the
  script wires it: ``<top>_0/interrupt`` -> ``axi_intc_0/intr`` (``LEFT``/``RIGHT`` 0: one input; its
  ``SENSITIVITY`` by ``C_KIND_OF_INTR``: ``EDGE_RISING`` as the script sets it)
  -> ``axi_intc_0/irq`` (``SENSITIVITY="LEVEL_HIGH"`` when ``C_IRQ_IS_LEVEL`` is 1, else ``EDGE_RISING``) ->
  ``zynq_ultra_ps_e_0/pl_ps_irq0``.
* the ``axi_intc`` cell's ``PARAMETERS``, the script's ``CONFIG.*`` over what Vivado derives for it
  (:func:`_intc_params`): ``C_NUM_INTR_INPUTS`` the inputs driven, ``C_KIND_OF_INTR`` (unless the script sets it)
  with a 0 (level) for each level-sensitive input, ``C_KIND_OF_EDGE`` (rising) and ``C_KIND_OF_LVL`` (high) all
  1, ``C_IRQ_ACTIVE`` 1, ``C_S_AXI_ADDR_WIDTH`` 9 (its 512-byte register space), ``C_HAS_IPR`` / ``C_HAS_SIE`` /
  ``C_HAS_CIE`` / ``C_HAS_IVR`` 1, as the generics Vivado 2021.1 wrote for an axi_intc 4.1 with level-high inputs
  on a Zynq (github.com/bxinquan/zynq_cam_isp_demo, ``base_axi_intc_0_0.vhd``); its base address as
  ``C_BASEADDR`` / ``C_HIGHADDR`` (axi_intc's names); no register descriptions (PYNQ's ``_InterruptController``
  writes fixed offsets, PG099's map, without reading them).
* ``BUSINTERFACES`` of every ``connect_bd_intf_net`` (the first pin the master, ``BUSNAME`` the master's net name;
  ``aximm``, ``axis`` or ``bram`` by the pin names); ``PORTMAPS`` and their ``PORTS`` (the AXI4-Lite signals) only on
  the control path, PS ``M_AXI_HPM0_FPD`` -> SmartConnect -> ``s_axi_control`` and ``axi_intc_0/s_axi``: the data
  path's AXI4, AXI4-Stream and BRAM signals are not modelled (neither PYNQ's ip_dict nor the driver reads them).
* the address map of ``assign_bd_address``: a segment the script pins (``-offset`` / ``-range``: the axi_intc at
  0xA001_0000) where it says; each other slave the PS's ``M_AXI_HPM0_FPD`` reaches through SmartConnects the first
  free 64 KiB from 0xA000_0000 on (the HPM0_FPD window; 64 KiB per AXI-Lite slave and the first at 0xA000_0000 as
  in ``rfsoc_sam.hwh``; resizer's HLS IP also has 64 KiB; where Vivado's automatic assignment puts it is only
  checkable with Vivado), as a ``MEMRANGE`` in the PS's ``MEMORYMAP``.
* ``ADDRESSBLOCKS`` of the control IP, from the manifest's register map (:func:`_hls_registers`: as Vitis HLS names
  the ap_ctrl_hs block, resizer's ``CTRL`` / ``GIER`` / ``IP_IER`` / ``IP_ISR`` with their fields, a 64-bit argument
  as ``<name>_1`` / ``<name>_2``, an output as ``<name>`` plus ``<name>_ctrl`` (``<name>_ap_vld``); the RTL IP as its
  ``package_ip.tcl`` adds them: the manifest's names, 64-bit registers whole, no fields).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

#: versions of the Xilinx IPs the scripts create without one (Vivado 2023.2's catalogue; an assumption of the model)
IP_VERSIONS = {"zynq_ultra_ps_e": "3.5", "smartconnect": "1.0", "proc_sys_reset": "5.0", "axis_data_fifo": "2.0",
               "util_vector_logic": "2.0", "axi_intc": "4.1", "xlconcat": "2.1",
               "clk_wiz": "6.0"}
#: first address of the PS's M_AXI_HPM0_FPD window and the range Vivado gives each AXI-Lite slave in it
HPM0_BASE, SLAVE_RANGE = 0xA000_0000, 0x10000
#: the AXI4-Lite signals of a control-path interface: (name, driven by the master)
AXI_LITE = [("AWADDR", 1), ("AWVALID", 1), ("AWREADY", 0), ("WDATA", 1), ("WSTRB", 1), ("WVALID", 1), ("WREADY", 0),
            ("BRESP", 0), ("BVALID", 0), ("BREADY", 1), ("ARADDR", 1), ("ARVALID", 1), ("ARREADY", 0), ("RDATA", 0),
            ("RRESP", 0), ("RVALID", 0), ("RREADY", 1)]

_STUBS = r"""
set ::log {}
proc _log {args} { lappend ::log $args }
foreach cmd {create_project set_property update_ip_catalog create_bd_design apply_bd_automation connect_bd_net
             connect_bd_intf_net assign_bd_address validate_bd_design save_bd_design add_files update_compile_order
             current_project current_fileset get_runs get_files open_run report_timing_summary launch_runs
             wait_on_run} {
    proc $cmd {args} [string map [list CMD $cmd] {_log CMD {*}$args; return CMD}]
}
proc get_board_parts {args} { return "" }
proc get_bd_pins {args} { return "pin:[lindex $args end]" }
proc get_bd_intf_pins {args} { return "intf:[lindex $args end]" }
proc get_bd_addr_spaces {args} { return "space:[lindex $args end]" }
proc get_bd_addr_segs {args} { return "seg:[lindex $args end]" }
proc create_bd_cell {args} { _log create_bd_cell {*}$args; return [lindex $args end] }
proc make_wrapper {args} { return vivado_prj/system_wrapper.v }
proc get_timing_paths {args} { return path }
proc report_timing {args} { return "" }
proc get_property {name obj} { return [expr {$name eq "SLACK" ? 0.1 : "100%"}] }
rename exit _real_exit
proc exit {args} {}
file mkdir vivado_prj/accel_bd.runs/impl_1 vivado_prj/accel_bd.gen/sources_1/bd/system/hw_handoff
foreach top {accel accel_rtl} {
  foreach f [list vivado_prj/${top}_bd.runs/impl_1/system_wrapper.bit \
                 vivado_prj/${top}_bd.gen/sources_1/bd/system/hw_handoff/system.hwh] {
    file mkdir [file dirname $f]; set h [open $f w]; puts $h stub; close $h
  }
}
source [lindex $argv 0]
set f [open calls.txt w]
foreach c $::log { puts $f $c }
close $f
"""


def bd_calls(tcl: Path) -> list[list[str]]:
    """The Vivado commands the block-design script ``tcl`` issues, in order, each as its words (``get_bd_pins X``
    logged as ``pin:X``, ``get_bd_intf_pins X`` as ``intf:X``), from ``tclsh`` with stub commands in ``tcl``'s
    folder. Raises RuntimeError without tclsh, or with tclsh's output if the script fails."""
    if shutil.which("tclsh") is None:
        raise RuntimeError("tclsh not found (apt-get install tcl): the block-design script cannot be run")
    d = Path(tcl).parent
    (d / "hwh_stub.tcl").write_text(_STUBS)
    r = subprocess.run(["tclsh", "hwh_stub.tcl", Path(tcl).name], cwd=d, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError(f"tclsh {tcl}: {r.stderr or r.stdout}")
    return [_tcl_words(line) for line in (d / "calls.txt").read_text().splitlines()]


def _tcl_words(line: str) -> list[str]:
    """The words of one Tcl list (braced words unbraced; our log has no nested braces besides CONFIG values)."""
    return [a or b for a, b in re.findall(r"\{([^{}]*)\}|(\S+)", line)]


def _design(calls):
    """cells {name: VLNV}, configs {cell: {CONFIG key: value}}, nets [[pin, ...]], intf nets [(master, slave)],
    part, design name, pinned addresses {cell: (base, range)} (``assign_bd_address -offset``), from the logged
    calls."""
    cells, cfg, nets, intf, part, name, pinned = {}, {}, [], [], "", "system", {}
    for c in calls:
        if c[0] == "assign_bd_address" and "-offset" in c:
            seg = next(w for w in c if w.startswith("seg:"))
            pinned[seg[4:].split("/")[0]] = (int(c[c.index("-offset") + 1], 16), int(c[c.index("-range") + 1], 16))
        if c[0] == "create_bd_cell":
            if "-vlnv" in c:
                v = c[c.index("-vlnv") + 1]
                cells[c[-1]] = v if v.count(":") == 3 else f"{v}:{IP_VERSIONS[v.split(':')[2]]}"
            else:
                cells[c[-1]] = f"xilinx.com:module_ref:{c[c.index('-reference') + 1]}:1.0"
        elif c[0] == "set_property" and c[1] == "-dict":
            cfg.setdefault(c[-1], {}).update(re.findall(r"CONFIG\.(\S+) \{?([^\s{}]+)\}?", " ".join(c[2:-1])))
        elif c[0] == "connect_bd_net":
            nets.append([p.split(":", 1)[1] for p in c[1:]])
        elif c[0] == "connect_bd_intf_net":
            intf.append(tuple(p.split(":", 1)[1] for p in c[1:3]))
        elif c[0] == "create_project":
            part = c[c.index("-part") + 1]
        elif c[0] == "create_bd_design":
            name = c[1]
    return cells, cfg, nets, intf, part, name, pinned


def _address_map(cells, intf, ps, pinned):
    """[(slave cell, its interface, base, range)]: what ``assign_bd_address`` gives the slaves the PS's
    M_AXI_HPM0_FPD reaches through SmartConnects: a ``pinned`` cell its (base, range), the others the first free
    64 KiB from :data:`HPM0_BASE` in the order found."""
    found, todo = [], [f"{ps}/M_AXI_HPM0_FPD"]
    while todo:
        master = todo.pop(0)
        for m, s in intf:
            if m != master:
                continue
            cell, port = s.split("/")
            if ":smartconnect:" in cells[cell]:
                todo += [a for a, _ in intf if a.startswith(f"{cell}/M")]
            else:
                found.append((cell, port))
    taken, out = [pinned[c] for c, _ in found if c in pinned], []
    for cell, port in found:
        if cell not in pinned:
            base = HPM0_BASE
            while any(b < base + SLAVE_RANGE and base < b + r for b, r in taken):
                base += SLAVE_RANGE
            taken.append((base, SLAVE_RANGE))
        out.append((cell, port, *(pinned.get(cell) or taken[-1])))
    return out


def _reg(block, name, offset, bits, access, desc, fields=()):
    """Append REGISTER ``name`` (PROPERTYs as in resizer.hwh) with its FIELDS [(name, bit, width, access, text)]."""
    regs = block.find("REGISTERS")
    r = ET.SubElement(ET.SubElement(block, "REGISTERS") if regs is None else regs, "REGISTER", NAME=name)
    for k, v in (("DESCRIPTION", desc), ("ADDRESS_OFFSET", hex(offset)), ("SIZE", str(bits)), ("ACCESS", access),
                 ("IS_ENABLED", "true"), ("RESET_VALUE", "0x0")):
        ET.SubElement(r, "PROPERTY", NAME=k, VALUE=v)
    if fields:
        fs = ET.SubElement(r, "FIELDS")
        for fname, bit, width, facc, fdesc in fields:
            f = ET.SubElement(fs, "FIELD", NAME=fname)
            for k, v in (("DESCRIPTION", fdesc), ("ADDRESS_OFFSET", str(bit)), ("ACCESS", facc),
                         ("BIT_OFFSET", str(bit)), ("BIT_WIDTH", str(width))):
                ET.SubElement(f, "PROPERTY", NAME=k, VALUE=v)


def _hls_registers(block, registers, ctrl_bits):
    """The manifest's map as Vitis HLS names it in the IP's component.xml (see the module docstring)."""
    acc = {"rw": "read-write", "w": "write-only", "r": "read-only"}
    for name, offset, bits, a in registers:
        if name == "CTRL":
            _reg(block, "CTRL", offset, 32, "read-write", "Control signals",
                 [(k.upper(), b, 1, "read-write" if k in ("ap_start", "auto_restart") else "read-only",
                   f"Control signal Register for '{k}'.") for k, b in ctrl_bits.items()])
        elif name == "GIE":
            _reg(block, "GIER", offset, 32, "read-write", "Global Interrupt Enable Register",
                 [("Enable", 0, 1, "read-write", "Master enable for the device interrupt output")])
        elif name in ("IER", "ISR"):
            f = "EN" if name == "IER" else "ST"
            _reg(block, f"IP_{name}", offset, 32, "read-write", f"IP Interrupt {name} Register",
                 [(f"CHAN0_INT_{f}", 0, 1, "read-write", "Channel 0 (ap_done)"),
                  (f"CHAN1_INT_{f}", 1, 1, "read-write", "Channel 1 (ap_ready)")])
        elif bits == 64:
            for k in (1, 2):
                _reg(block, f"{name}_{k}", offset + 4 * (k - 1), 32, acc[a], f"Data signal of {name}",
                     [(name, 0, 32, acc[a], f"Bit {32 * k - 1} to {32 * k - 32} of Data signal of {name}")])
        else:
            _reg(block, name, offset, 32, acc[a], f"Data signal of {name}",
                 [(name, 0, 32, acc[a], f"Bit 31 to 0 of Data signal of {name}")])
            if a == "r":
                _reg(block, f"{name}_ctrl", offset + 4, 32, "read-only", f"Control signal of {name}",
                     [(f"{name}_ap_vld", 0, 1, "read-only", f"Control signal {name}_ap_vld")])


def _rtl_registers(block, registers):
    """The manifest's map as the RTL IP's package_ip.tcl adds it (generator/backends/rtl/ip.py register_block)."""
    for name, offset, bits, a in registers:
        _reg(block, name, offset, bits, "read-only" if a == "r" else "read-write", name)


def _ps_params(cfg):
    """The PS's CONFIG values from the script, plus the PL clock parameters PYNQ's clock view reads."""
    p = dict(cfg)
    mhz = float(cfg.get("PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ", 100))
    for i in range(4):
        on = i == 0 and cfg.get("PSU__FPGA_PL0_ENABLE", "1") == "1"
        p[f"PSU__FPGA_PL{i}_ENABLE"] = "1" if on else "0"
        p[f"PSU__CRL_APB__PL{i}_REF_CTRL__ACT_FREQMHZ"] = f"{mhz:g}" if on else "100"
        p[f"PSU__CRL_APB__PL{i}_REF_CTRL__DIVISOR0"] = str(max(1, min(63, round(1500 / mhz)))) if on else "15"
        p[f"PSU__CRL_APB__PL{i}_REF_CTRL__DIVISOR1"] = "1"
        p[f"PSU__CRL_APB__PL{i}_REF_CTRL__SRCSEL"] = "IOPLL"
    return p


def _sigis(pin):
    n = pin.lower()
    return "INTERRUPT" if "irq" in n or n in ("interrupt", "intr") else "clk" if "clk" in n else \
        "rst" if "reset" in n or "rst" in n else "undef"


def _intc_params(cell, cfg, nets):
    """The parameters Vivado derives for axi_intc ``cell`` (module docstring), with the script's ``cfg`` on top;
    and the PORT attributes of its ``intr`` / ``irq`` ({pin: {attr: value}})."""
    inputs = [n[0] for n in nets if f"{cell}/intr" in n[1:]]
    level = cfg.get("C_IRQ_IS_LEVEL", "1") == "1"
    kind = 0xFFFFFFFF & ~((1 << len(inputs)) - 1)         # propagated: the inputs are level-high `interrupt` pins
    params = {"C_NUM_INTR_INPUTS": str(len(inputs)), "C_KIND_OF_INTR": f"0x{kind:08x}",
              "C_KIND_OF_EDGE": "0xffffffff", "C_KIND_OF_LVL": "0xffffffff", "C_IRQ_IS_LEVEL": "1",
              "C_IRQ_ACTIVE": "0x1", "C_IRQ_CONNECTION": "0", "C_S_AXI_ADDR_WIDTH": "9", "C_HAS_IPR": "1",
              "C_HAS_SIE": "1", "C_HAS_CIE": "1", "C_HAS_IVR": "1",
              **{k: v for k, v in cfg.items() if not k.endswith(".VALUE_SRC")}}
    edge = int(params["C_KIND_OF_INTR"], 16) & int(params["C_KIND_OF_EDGE"], 16)
    sens = ":".join("EDGE_RISING" if edge >> i & 1 else "LEVEL_HIGH" for i in range(len(inputs)))
    ports = {f"{cell}/intr": dict(LEFT=str(len(inputs) - 1), RIGHT="0", SENSITIVITY=sens),
             f"{cell}/irq": dict(SENSITIVITY="LEVEL_HIGH" if level else "EDGE_RISING")}
    return params, ports


def _add_ports(mods, nets, extra):
    """One PORT per pin of the nets: the first pin of a net drives it and lists its sinks, each sink lists it (a pin
    in several nets, e.g. pl_clk0 of the RTL design, is one PORT with all its connections); ``extra`` {pin: {attr:
    value}} added to a pin's PORT."""
    pins = {}
    for net in nets:
        drv, sinks = net[0], net[1:]
        pins.setdefault(drv, ["O", drv.replace("/", "_"), []])[2].extend(sinks)
        for s in sinks:
            pins.setdefault(s, ["I", drv.replace("/", "_"), []])[2].append(drv)
    for pin, (d, sig, targets) in pins.items():
        cell, name = pin.split("/")
        attrs = dict(DIR=d, NAME=name, SIGIS=_sigis(name), SIGNAME=sig)
        if name.startswith("pl_ps_irq"):
            attrs.update(LEFT="0", RIGHT="0")
        if name == "interrupt":
            attrs["SENSITIVITY"] = "LEVEL_HIGH"
        attrs.update(extra.get(pin, {}))
        cons = ET.SubElement(ET.SubElement(mods[cell].find("PORTS"), "PORT", **attrs), "CONNECTIONS")
        for t in targets:
            ET.SubElement(cons, "CONNECTION", INSTANCE=t.split("/")[0], PORT=t.split("/")[1])


def _lower(module):
    """Whether the IP names its AXI4-Lite ports in lower case (Xilinx IPs: ``s_axi_awaddr``; HLS: ``..._AWADDR``)."""
    return any(f":{n}:" in module.get("VLNV") for n in ("smartconnect", "axi_intc"))


def _add_interfaces(mods, intf, control):
    """BUSINTERFACEs of each interface net; on the control path (``control``: its (master, slave) pairs) also the
    AXI4-Lite PORTMAPS and PORTS, connected pairwise."""
    for m, s in intf:
        kind = "axis" if "AXIS" in m + s else "bram" if "BRAM" in m + s else "aximm"
        bus = m.replace("/", "_")
        for pin, typ in ((m, "MASTER"), (s, "SLAVE")):
            cell, name = pin.split("/")
            b = ET.SubElement(mods[cell].find("BUSINTERFACES"), "BUSINTERFACE", BUSNAME=bus, NAME=name, TYPE=typ,
                              VLNV=f"xilinx.com:interface:{kind}:1.0")
            if (m, s) not in control:
                continue
            ET.SubElement(b, "PARAMETER", NAME="PROTOCOL", VALUE="AXI4LITE")
            pm = ET.SubElement(b, "PORTMAPS")
            other = s if typ == "MASTER" else m
            for sig, by_master in AXI_LITE:
                phys = f"{name}_{sig.lower()}" if _lower(mods[cell]) else f"{name}_{sig}"
                ET.SubElement(pm, "PORTMAP", LOGICAL=sig, PHYSICAL=phys)
                ocell, oname = other.split("/")
                ophys = f"{oname}_{sig.lower()}" if _lower(mods[ocell]) else f"{oname}_{sig}"
                d = "O" if bool(by_master) == (typ == "MASTER") else "I"
                p = ET.SubElement(mods[cell].find("PORTS"), "PORT", DIR=d, NAME=phys, SIGIS="undef",
                                  SIGNAME=f"{bus}_{sig.lower()}")
                ET.SubElement(ET.SubElement(p, "CONNECTIONS"), "CONNECTION", INSTANCE=ocell, PORT=ophys)


def write_hwh(calls, registers, ctrl_bits, out: Path) -> Path:
    """Write the modelled .hwh of the block design whose script issued ``calls`` (:func:`bd_calls`) to ``out``.

    Args:
        registers: the control IP's map [(name, byte offset, bits, access "r" | "w" | "rw")] (the manifest's).
        ctrl_bits: {ap_start, ap_done, ap_idle, ap_ready, auto_restart: CTRL bit}.
    Returns ``out``. The control IP (the slave besides the axi_intc the PS's HPM0_FPD reaches) gets Vitis HLS's
    register names when its VLNV's library is ``hls``, else the RTL IP's."""
    cells, cfg, nets, intf, part, name, pinned = _design(calls)
    ps = next(c for c, v in cells.items() if ":zynq_ultra_ps_e:" in v)
    port_attrs = {}
    for c in [c for c, v in cells.items() if ":axi_intc:" in v]:
        cfg[c], more = _intc_params(c, cfg.get(c, {}), nets)
        port_attrs.update(more)
    device, package, speed = part.split("-")[:3]
    root = ET.Element("EDKSYSTEM", EDWVERSION="1.2", TIMESTAMP="modelled",
                      VIVADOVERSION="none: modelled by tests/host/bd_hwh.py, not Vivado output")
    ET.SubElement(root, "SYSTEMINFO", ARCH="zynquplus", DEVICE=device, NAME=name, PACKAGE=package,
                  SPEEDGRADE=f"-{speed}")
    ET.SubElement(root, "EXTERNALPORTS")
    ET.SubElement(root, "EXTERNALINTERFACES")
    modules, mods = ET.SubElement(root, "MODULES"), {}
    amap = _address_map(cells, intf, ps, pinned)
    for cell, vlnv in cells.items():
        v = vlnv.split(":")
        attrs = dict(FULLNAME=f"/{cell}", HWVERSION=v[3], INSTANCE=cell, IPTYPE="PERIPHERAL", IS_ENABLE="1",
                     MODCLASS="PERIPHERAL", MODTYPE=v[2], VLNV=vlnv)
        if cell == ps:
            attrs.update(IS_PL="FALSE", MODCLASS="PROCESSOR")
        m = mods[cell] = ET.SubElement(modules, "MODULE", **attrs)
        ET.SubElement(m, "DOCUMENTS")
        params = ET.SubElement(m, "PARAMETERS")
        for k, val in (_ps_params(cfg.get(cell, {})) if cell == ps else cfg.get(cell, {})).items():
            ET.SubElement(params, "PARAMETER", NAME=k, VALUE=str(val))
        ET.SubElement(m, "PORTS")
        ET.SubElement(m, "BUSINTERFACES")
    memmap = ET.SubElement(mods[ps], "MEMORYMAP")
    for cell, port, base, rng in amap:
        intc = ":axi_intc:" in cells[cell]
        pre = "C" if intc else f"C_{port.upper()}"
        ET.SubElement(mods[cell].find("PARAMETERS"), "PARAMETER", NAME=f"{pre}_BASEADDR", VALUE=f"0x{base:08X}")
        ET.SubElement(mods[cell].find("PARAMETERS"), "PARAMETER", NAME=f"{pre}_HIGHADDR",
                      VALUE=f"0x{base + rng - 1:08X}")
        ET.SubElement(memmap, "MEMRANGE", ADDRESSBLOCK="Reg", BASENAME=f"{pre}_BASEADDR", BASEVALUE=f"0x{base:08X}",
                      HIGHNAME=f"{pre}_HIGHADDR", HIGHVALUE=f"0x{base + rng - 1:08X}", INSTANCE=cell,
                      IS_DATA="TRUE", IS_INSTRUCTION="TRUE", MASTERBUSINTERFACE="M_AXI_HPM0_FPD", MEMTYPE="REGISTER",
                      SLAVEBUSINTERFACE=port)
        blocks = ET.Element("ADDRESSBLOCKS")
        mods[cell].insert(1, blocks)
        blk = ET.SubElement(blocks, "ADDRESSBLOCK", ACCESS="read-write", INTERFACE=port, NAME="Reg", RANGE=str(rng),
                            USAGE="register")
        if intc:
            continue
        if cells[cell].split(":")[1] == "hls":
            _hls_registers(blk, registers, ctrl_bits)
        else:
            _rtl_registers(blk, registers)
    control = _control_path(intf, ps, cells)
    _add_ports(mods, nets, port_attrs)
    _add_interfaces(mods, intf, control)
    ET.indent(root)
    text = ("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\" ?>\n"
            "<!-- MODELLED from vivado_bd.tcl by tests/host/bd_hwh.py: not written by Vivado -->\n"
            + ET.tostring(root, encoding="unicode") + "\n")
    out = Path(out)
    out.write_text(text)
    return out


def _control_path(intf, ps, cells):
    """The interface nets from the PS's M_AXI_HPM0_FPD through SmartConnects to the slaves."""
    out, todo = set(), [f"{ps}/M_AXI_HPM0_FPD"]
    while todo:
        master = todo.pop(0)
        for m, s in intf:
            if m == master:
                out.add((m, s))
                cell = s.split("/")[0]
                if ":smartconnect:" in cells[cell]:
                    todo += [a for a, _ in intf if a.startswith(f"{cell}/M")]
    return out
