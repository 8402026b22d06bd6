"""The mapped Yosys netlist (``write_json`` of a flattened module) as the timing estimate reads it
(:mod:`generator.estimate.rtl_timing`): drivers and loads of every bit, readable net names, the RTL file and
line of a cell, the RTL module of a flattened name."""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

#: flip-flop cells of the Xilinx UltraScale library (UG974)
FF_CELLS = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}
#: shift-register LUTs (a chain of registers Yosys packed into one cell)
SRL_CELLS = {"SRL16E", "SRLC16E", "SRLC32E"}


def cell_src(attrs: dict) -> tuple[str, str]:
    """(unit, ``file:line``) of a cell from its Yosys ``src`` attribute: the innermost RTL file (Yosys' own
    techmap files, given with absolute paths, are skipped)."""
    parts = [p for p in str(attrs.get("src", "")).split("|") if p and not p.startswith("/")]
    if not parts:
        return "?", "?"
    f, _, pos = parts[-1].partition(":")
    return Path(f).stem, f"{f}:{pos.split('.')[0]}"


def bit_names(netnames: dict) -> dict:
    """bit id -> the most readable net name (``name[i]``): names Yosys did not hide first, then the shortest."""
    best: dict = {}
    for name, n in netnames.items():
        bits = n["bits"]
        for i, b in enumerate(bits):
            if isinstance(b, str):
                continue
            label = name if len(bits) == 1 else f"{name}[{i + int(n.get('offset', 0))}]"
            key = (n.get("hide_name", 0), len(label))
            if b not in best or key < best[b][0]:
                best[b] = (key, label)
    return {b: v[1].lstrip("\\") for b, v in best.items()}


class Netlist:
    """Driver and fanout maps of one flattened Yosys module (bits are Yosys' integer net ids)."""

    def __init__(self, mod: dict):
        self.cells = mod["cells"]
        self.driver: dict = {}                     # bit -> (cell name, port, index)
        self.loads: dict = defaultdict(list)       # bit -> [(cell name, port)]
        for name, c in self.cells.items():
            for port, bits in c["connections"].items():
                out = c["port_directions"].get(port) == "output"
                for i, b in enumerate(bits):
                    if isinstance(b, str):
                        continue
                    if out:
                        self.driver[b] = (name, port, i)
                    else:
                        self.loads[b].append((name, port))
        self.inputs = {b for p in mod["ports"].values() if p["direction"] == "input" for b in p["bits"]
                       if not isinstance(b, str)}
        self.names = bit_names(mod.get("netnames", {}))

    def ff_only(self, bits) -> bool:
        """Every load of every bit in ``bits`` is the D pin of a flip-flop or of an SRL (a shift register Yosys made
        of a register chain) -- and there is at least one."""
        loads = [ld for b in bits if not isinstance(b, str) for ld in self.loads.get(b, [])]
        return bool(loads) and all(self.cells[c]["type"] in FF_CELLS | SRL_CELLS and p == "D" for c, p in loads)

    def ff_driven(self, bits) -> bool:
        """Every non-constant bit of ``bits`` comes straight from a flip-flop's Q."""
        drv = [self.driver.get(b) for b in bits if not isinstance(b, str)]
        return all(d is not None and self.cells[d[0]]["type"] in FF_CELLS for d in drv)


def unit_of(name: str, instances: dict) -> str:
    """RTL module of a flattened net name (``u_cp.u_pe.p_q`` -> the module of instance ``u_pe``), or ``?``."""
    parts = [p for p in name.lstrip("\\$").split(".")[:-1] if p in instances]
    return instances[parts[-1]] if parts else "?"


def instance_modules(sources: list[Path]) -> dict:
    """{instance name: module name} of the module instances (``module_name [#(...)] u_name (``) in ``sources``."""
    pat = re.compile(r"^\s*(\w+)\s*(?:#\s*\([^;]*?\)\s*)?\b(u_\w+)\s*\(", re.M | re.S)
    return {inst: mod for src in sources for mod, inst in pat.findall(Path(src).read_text())}
