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

    def out_bits(self, name: str) -> list:
        """The bits cell ``name`` drives."""
        c = self.cells[name]
        return [b for p, bits in c["connections"].items() if c["port_directions"].get(p) == "output"
                for b in bits if not isinstance(b, str)]

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
    return {inst: mod for src in sources for mod, inst in _INSTANCE.findall(Path(src).read_text())}


#: a module instance in our RTL's style: ``module_name [#(...)] u_name (``
_INSTANCE = re.compile(r"^\s*(\w+)\s*(?:#\s*\([^;]*?\)\s*)?\b(u_\w+)\s*\(", re.M | re.S)
#: RTL files reported as units of their own wherever they are instantiated (file stem -> unit; the outermost
#: one a cell's instance path or ``src`` names wins): PRE (``pre_insn`` and the ``pre`` under it, with their
#: ``pe_dsp`` DSP48E2s, line buffers, readers and writers) is the unit ``pre``, not the PE array
SUB_UNITS = {"pe_dsp": "pe_array", "pe_array": "pe_array", "requant": "requant", "pre_insn": "pre", "pre": "pre"}


def top_instances(top_sv: Path) -> list[tuple[int, int, str, str]]:
    """(first line, last line, module, instance) of every module instance in the top-level RTL file ``top_sv``."""
    text = Path(top_sv).read_text()
    res = []
    for m in _INSTANCE.finditer(text):
        start = text.count("\n", 0, m.start()) + 1
        end = text.count("\n", 0, text.index(");", m.end())) + 1
        res.append((start, end, m.group(1), m.group(2)))
    return res


def name_unit(name: str, inst_mod: dict, top_mods: dict) -> str:
    """Unit of a cell from its flattened name (``u_buf.g_bank[0].u_ram...``,
    ``$flatten\\u_post.\\g_rq[0].u_requant.$mul...``): a :data:`SUB_UNITS` module among its instances, else the
    module of its top-level instance (``top_mods``), else ``?`` (a name Yosys made up, such as ABC's ``$abc$...``)."""
    path = re.findall(r"(?:^|[.\\])(u_\w+)(?=\.)", name)
    for p in path:
        if inst_mod.get(p) in SUB_UNITS:
            return SUB_UNITS[inst_mod[p]]
    return top_mods.get(path[0], "?") if path else "?"


def src_unit(attrs: dict, top: str, insts: list) -> str:
    """Unit of a cell from its Yosys ``src`` attribute (the RTL lines it was built from, instantiation lines
    included): a :data:`SUB_UNITS` file if one is named, else the module of the top-level instance whose lines in
    ``top`` (the top file's name) hold the cell, else ``top``'s stem when only the top file is named, else ``?``."""
    parts = [p.rpartition(":") for p in str(attrs.get("src", "")).split("|") if p and not p.startswith("/")]
    for f, _, _ in parts:
        if Path(f).stem in SUB_UNITS:
            return SUB_UNITS[Path(f).stem]
    for f, _, pos in parts:
        if f == top:
            line = int(pos.split(".")[0])
            return next((m for a, b, m, _ in insts if a <= line <= b), Path(top).stem)
    return "?"


def cells_by_unit(mod: dict, sources: list[Path], top: str = "accel_top") -> dict:
    """{unit: {cell type: count}} of one flattened, mapped Yosys module: where the cells of ``stat`` come from
    (each cell's unit by :func:`cell_units`)."""
    res: dict = defaultdict(lambda: defaultdict(int))
    for name, u in cell_units(mod, sources, top).items():
        res[u][mod["cells"][name]["type"]] += 1
    return {u: dict(t) for u, t in res.items()}


def cell_units(mod: dict, sources: list[Path], top: str = "accel_top") -> dict:
    """{cell name: unit} of one flattened, mapped Yosys module.

    ``sources``: the RTL files synthesized; ``top``: the top module (its file ``top.sv`` is among them, and its
    instances are the units). A cell belongs to the unit of, in this order: its flattened name (RAMs, inferred
    DSP48E2s: :func:`name_unit`); its ``src`` attribute (registers, carry chains: :func:`src_unit`); the PE array
    and the requantization lanes are units of their own wherever they sit. ABC's LUTs have neither (a made-up name,
    a ``src`` of Yosys' own ``lut_map.v``), so a cell without a unit is attributed forward, to the unit most of its
    loads belong to (the registers, DSPs, RAMs or other LUTs its output feeds; a module output port: the top) --
    logic is counted with the register whose next value it computes. A cell none of whose loads resolve is ``?``.
    Cost: linear in the netlist."""
    top_sv = next(Path(p) for p in sources if Path(p).stem == top)
    insts, inst_mod = top_instances(top_sv), instance_modules(sources)
    top_mods = {i: m for _, _, m, i in insts}
    net = Netlist(mod)
    top_file, top = top_sv.name, top_sv.stem
    outs = {b for p in mod["ports"].values() if p["direction"] == "output" for b in p["bits"]
            if not isinstance(b, str)}

    names = defaultdict(set)             # bit -> the instances' RTL names of its net (u_fetch.pc_q)
    for x, nn in mod.get("netnames", {}).items():
        if not nn.get("hide_name", 0) and (u := name_unit(x.lstrip("\\"), inst_mod, top_mods)) != "?":
            for b in nn["bits"]:
                names[b].add(u)

    def net_unit(bits):                  # the one unit whose RTL names the cell's output nets carry, if one
        us = set().union(*(names.get(b, set()) for b in bits))
        return us.pop() if len(us) == 1 else "?"

    unit = {}
    for n, c in net.cells.items():
        u = name_unit(n, inst_mod, top_mods)
        u = u if u != "?" else src_unit(c.get("attributes", {}), top_file, insts)
        u = u if u != "?" else net_unit(net.out_bits(n))
        if u != "?":
            unit[n] = u
    for _ in range(4):         # again for the cells a loop left unresolved (a counter and its increment)
        pending = [n for n in net.cells if unit.get(n, "?") == "?"]
        for n in pending:
            unit.pop(n, None)
        _propagate(net, unit, pending, outs, top)
    return unit


def _propagate(net: Netlist, unit: dict, pending: list, outs: set, top: str) -> None:
    """Attribute each of ``pending`` to the unit most of its loads have (depth-first, iterative: carry chains run
    deep), ``?`` where none resolve yet; ``outs``: the module's output bits (the ``top`` unit's)."""
    for start in pending:
        if start in unit:
            continue
        stack, seen = [start], {start}
        while stack:
            name, votes, todo = stack[-1], defaultdict(int), []
            for b in net.out_bits(name):
                votes[top] += b in outs
                for ld, _ in net.loads.get(b, []):
                    if ld not in unit and ld not in seen:
                        todo.append(ld)
                    elif unit.get(ld, "?") != "?":
                        votes[unit[ld]] += 1
            if todo:
                seen.update(todo)
                stack.extend(todo)
                continue
            stack.pop()
            votes = {u: v for u, v in votes.items() if v}
            unit[name] = max(sorted(votes), key=votes.get) if votes else "?"
