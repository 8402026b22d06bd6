"""The netlist walk of the RTL timing estimate (:mod:`generator.estimate.rtl_timing`): per-cell delays, the
inputs each cell's output depends on, and the arrival time (ns), LUT levels, carry run and DSP48E2 stages of every
bit from its start points -- from every start point, or only from those of one clock. The cell accounting and the
delay model's sources are described in :mod:`generator.estimate.rtl_timing`.
"""
from __future__ import annotations

import re

from generator.estimate.netlist import FF_CELLS, SRL_CELLS, Netlist, cell_src

#: per-cell delays (ns), UltraScale+ -2 (see the module docstring for sources and assumptions)
DELAY_NS = {
    "ff_clk_to_q": 0.10,            # FDRE C -> Q
    "setup": 0.05,                  # FF D setup
    "uncertainty": 0.10,            # clock uncertainty and skew
    "lut": 0.12,                    # LUT6 logic delay
    "net": 0.30,                    # average route per net (one per LUT level)
    "muxf": 0.08,                   # MUXF7/8/9 (in the slice, no route)
    "carry_entry": 0.20,            # into a carry chain (S/DI, with its route)
    "carry_bit": 0.03,              # per carry bit
    "bram_clk_to_out": 1.10,        # RAMB18E2/36E2 without DOA_REG/DOB_REG
    "bram_clk_to_out_reg": 0.40,    # with the output register
    "uram_clk_to_out": 1.60,        # URAM288 without OREG
    "uram_clk_to_out_reg": 0.50,
    "lutram_read": 0.45,            # LUTRAM async read incl. its route (counts one LUT level)
    "dsp_comb": 2.80,               # DSP48E2 A/B -> P, no register (incl. the route into the DSP)
    "dsp_reg_in": 2.20,             # AREG/BREG -> P output, no M/P register
    "dsp_reg_in_p": 1.90,           # AREG/BREG -> PREG (MREG unused), stage incl. setup
    "dsp_reg_in_mp": 1.29,          # AREG/BREG -> MREG -> PREG: the slowest of the stages (DS925: 775 MHz)
    "dsp_in": 0.45,                 # into an instantiated DSP48E2's AREG/BREG: the route and the input setup
    "dsp_p_clk_to_out": 0.45,       # an instantiated DSP48E2's PREG clock to P / PCOUT
    "dsp_cascade": 0.70,            # PCIN -> ALU -> PREG (the dedicated PCOUT -> PCIN route, no fabric)
}
#: clock nets (by name suffix) that run at a multiple of the logic clock (issue 46's double-pumped PE array)
CLOCK_RATIOS = {"clk2x": 2}
#: ports of a sequential cell that carry its clock
CLOCK_PORTS = ("C", "CLK", "CLKARDCLK", "CLKBWRCLK", "WCLK")

BRAM_CELLS = {"RAMB18E2", "RAMB36E2"}
URAM_CELLS = {"URAM288", "URAM288_BASE"}
LUT_CELLS = {f"LUT{i}" for i in range(1, 7)}
MUXF_CELLS = {"MUXF7", "MUXF8", "MUXF9"}
CARRY_CELLS = {"CARRY4", "CARRY8"}
PASS_CELLS = {"INV", "BUF", "BUFG", "IBUF", "OBUF"}
CONST_CELLS = {"GND", "VCC"}
#: the DSP48E2 inputs that feed the multiplier (their registers are AREG/BREG/DREG)
DSP_MULT_INPUTS = ("A", "B", "D")


class TimingError(RuntimeError):
    """The netlist cannot be analyzed: not a Yosys JSON netlist, top module missing, a cell type the model does
    not know, or a combinational loop (named by a net on it)."""


# --- netlist walk --------------------------------------------------------------------------------------------
# a bit's arrival: (delay ns, LUT levels, current carry run, longest carry run, DSP stages, start label, carry
# chains entered on the way)
_Arr = tuple


def _dsp_regs(cell: dict) -> dict:
    """AREG / BREG / MREG / PREG of a DSP48E2 cell as integers (all 0 for the DSPs Yosys infers on ``xcup``)."""
    prm = cell.get("parameters", {})
    return {k: int(str(prm.get(k, "0")), 2) if set(str(prm.get(k, "0"))) <= {"0", "1"} else int(prm[k])
            for k in ("AREG", "BREG", "MREG", "PREG")}


def _dsp_instantiated(cell: dict) -> bool:
    """A DSP48E2 instantiated with its registers (rtl/pe_dsp.sv), not inferred by Yosys."""
    return cell["type"] == "DSP48E2" and any(_dsp_regs(cell).values())


def _dsp_setting(nl: Netlist, cell: dict) -> str:
    """Register setting Vivado can give a DSP48E2 of the netlist: ``mp`` (A/B in, M and P), ``p`` (A/B in, one
    output register), ``in`` (A/B in only) or ``comb``. Instantiated DSPs: from their parameters; inferred ones:
    inputs and output judged as in the module docstring."""
    if _dsp_instantiated(cell):
        r = _dsp_regs(cell)
        if not (r["AREG"] and r["BREG"]):
            return "comb"
        return {2: "mp", 1: "p", 0: "in"}[bool(r["MREG"]) + bool(r["PREG"])]
    con = cell["connections"]
    mult_in = [b for p in DSP_MULT_INPUTS for b in con.get(p, [])]
    if not nl.ff_driven(mult_in):
        return "comb"
    p_bits = [b for b in con.get("P", []) if not isinstance(b, str) and nl.loads.get(b)]
    if not p_bits or not nl.ff_only(p_bits):
        return "in"
    # an SRL load is a chain of at least two registers (M and P); a flip-flop load is M when it feeds registers only
    q_bits = [nl.cells[c]["connections"]["Q"][0] for b in p_bits for c, _ in nl.loads[b]
              if nl.cells[c]["type"] in FF_CELLS]
    return "mp" if not q_bits or nl.ff_only(q_bits) else "p"


def _start(delay: float, label: str) -> _Arr:
    return (delay, 0, 0, 0, 0, label, 0)


#: the arrival of a bit reached only from start points of another clock than the one walked (no path)
_NO_PATH = float("-inf")
_OTHER = (_NO_PATH, 0, 0, 0, 0, "another clock", 0)


def clock_of(nl: Netlist, cell: dict):
    """The clock net bit of sequential ``cell`` (:data:`CLOCK_PORTS`), None for a cell without one."""
    for port in CLOCK_PORTS:
        bits = cell["connections"].get(port)
        if bits and not isinstance(bits[0], str):
            return bits[0]
    return None


def dsp_clock(nl: Netlist, cell: dict):
    """The clock net bit of DSP48E2 ``cell``: its CLK, else (a DSP48E2 Yosys left combinational, whose fabric input
    registers the walk counts as its A / B registers, as Vivado absorbs them) the clock of the first flip-flop
    driving its A or B input; None without either."""
    clk = clock_of(nl, cell)
    if clk is not None:
        return clk
    for port in ("A", "B"):
        for b in cell["connections"].get(port, []):
            if not isinstance(b, str) and b in nl.driver:
                d = nl.cells[nl.driver[b][0]]
                if d["type"] in FF_CELLS:
                    return clock_of(nl, d)
    return None


def clock_name(nl: Netlist, mod: dict, clk) -> str:
    """The name of clock net bit ``clk``: through the clock buffers Yosys inserts (BUFG, IBUF: :data:`PASS_CELLS`)
    back to its source, named by the top port it comes from, else by its net name."""
    seen = set()
    while clk in nl.driver and clk not in seen:
        seen.add(clk)
        name, _, _ = nl.driver[clk]
        c = nl.cells[name]
        if c["type"] not in PASS_CELLS:
            break
        ins = [b for p, d in c["port_directions"].items() if d == "input" for b in c["connections"].get(p, [])]
        if len(ins) != 1 or isinstance(ins[0], str):
            break
        clk = ins[0]
    for pname, p in mod["ports"].items():
        if p["direction"] == "input" and clk in p["bits"]:
            return pname
    return nl.names.get(clk, str(clk))


def _ratio(name: str) -> int:
    """How many times the logic clock's frequency the clock named ``name`` runs (:data:`CLOCK_RATIOS`)."""
    return next((r for k, r in CLOCK_RATIOS.items() if name == k or name.endswith("." + k)), 1)


def _through(arrs: list, delay: float, levels: int = 0, carry: int | None = None, dsp: int = 0) -> _Arr:
    """Arrival after a cell: the worst input delay plus ``delay``; ``levels`` LUT levels and ``dsp`` DSP stages
    added; ``carry``: None resets the carry run, else the run continues with that many bits. Inputs reached only
    from start points of another clock (:data:`_OTHER`) do not count; a cell with only such inputs is one too."""
    any_other = any(a[0] == _NO_PATH for a in arrs)
    arrs = [a for a in arrs if a[0] != _NO_PATH]
    if not arrs:
        return _OTHER if any_other else _start(delay, "constant")
    w = max(arrs, key=lambda a: a[0])
    lv = max(a[1] for a in arrs) + levels
    dp = max(a[4] for a in arrs) + dsp
    run = 0 if carry is None else carry
    cmax = max(max(a[3] for a in arrs), run)
    return (w[0] + delay, lv, run, cmax, dp, w[5], max(a[6] for a in arrs))


def _lutram_read_port(cell: dict, port: str) -> list[str]:
    """Input ports whose bits decide the asynchronous read output ``port`` of a LUTRAM."""
    if port.startswith("DO") and f"ADDR{port[2:]}" in cell["connections"]:
        return [f"ADDR{port[2:]}"]
    if port == "DPO":
        return [p for p in cell["connections"] if p.startswith("DPRA")]
    return [p for p in cell["connections"] if re.fullmatch(r"A\d*|ADDR", p)]


def _deps(nl: Netlist, bit) -> list:
    """The (port, index, bit) inputs of ``bit``'s driver that its arrival depends on (empty at a start point)."""
    if bit not in nl.driver:
        return []
    name, port, j = nl.driver[bit]
    c = nl.cells[name]
    t, con = c["type"], c["connections"]
    if t in FF_CELLS or t in BRAM_CELLS or t in URAM_CELLS or t in SRL_CELLS or t in CONST_CELLS:
        return []
    if t == "DSP48E2":
        if _dsp_instantiated(c) and not _dsp_regs(c)["PREG"]:
            raise TimingError(f"DSP48E2 {name}: instantiated without PREG is not in the timing model")
        if _dsp_setting(nl, c) != "comb" or _dsp_instantiated(c):
            return []
        ports = [p for p, d in c["port_directions"].items() if d == "input"]
    elif t in CARRY_CELLS:
        ports = ["CI", "CYINIT", "CI_TOP", "S", "DI"]
    elif t.startswith("RAM"):
        ports = _lutram_read_port(c, port)
    else:
        ports = [p for p, d in c["port_directions"].items() if d == "input"]
    out = []
    for p in ports:
        for i, b in enumerate(con.get(p, [])):
            if isinstance(b, str):
                continue
            if t in CARRY_CELLS and p in ("S", "DI") and i > j:
                continue
            if t in CARRY_CELLS and p == "CI_TOP" and j < 4:
                continue
            out.append((p, i, b))
    return out


def _arrival(nl: Netlist, bit, deps: list, arr: dict, launch=None, inputs: bool = True) -> _Arr:
    """Arrival time of ``bit`` given the arrivals ``arr`` of its inputs ``deps`` (see :func:`_deps`); with
    ``launch`` (a clock net bit) only paths from start points of that clock count, and from the top's input ports
    when ``inputs``."""
    D = DELAY_NS
    if bit not in nl.driver:
        if launch is not None and (bit not in nl.inputs or not inputs):
            return _OTHER
        return _start(0.0, f"input {nl.names.get(bit, bit)}" if bit in nl.inputs else "undriven")
    name, port, j = nl.driver[bit]
    c = nl.cells[name]
    t, prm = c["type"], c.get("parameters", {})
    label = f"{nl.names.get(bit, name)} ({cell_src(c.get('attributes', {}))[1]})"
    own = dsp_clock(nl, c) if t == "DSP48E2" else clock_of(nl, c)
    if launch is not None and t not in CONST_CELLS and own not in (None, launch) and \
            (t in FF_CELLS or t in SRL_CELLS or t in BRAM_CELLS or t in URAM_CELLS or
             (t == "DSP48E2" and (_dsp_instantiated(c) or _dsp_setting(nl, c) != "comb"))):
        return _OTHER
    if t in FF_CELLS or t in SRL_CELLS:
        return _start(D["ff_clk_to_q"], label)
    if t in CONST_CELLS:     # (walking one launching clock: a constant starts no path of its own)
        return _start(0.0, "constant") if launch is None else _OTHER
    if t in BRAM_CELLS or t in URAM_CELLS:
        reg = any(int(str(prm.get(k, "0")), 2) if set(str(prm.get(k, "0"))) <= {"0", "1"} else prm.get(k) in
                  ("TRUE", 1) for k in ("DOA_REG", "DOB_REG", "OREG_A", "OREG_B"))
        kind = "bram" if t in BRAM_CELLS else "uram"
        return _start(D[f"{kind}_clk_to_out{'_reg' if reg else ''}"], f"{kind.upper()} {label}")
    ins = [arr[b] for _, _, b in deps]
    if t == "DSP48E2" and _dsp_instantiated(c):
        return _start(D["dsp_p_clk_to_out"], f"DSP48E2 P register {label}")
    if t == "DSP48E2":
        s = _dsp_setting(nl, c)
        if s != "comb":
            return (D[{"mp": "dsp_reg_in_mp", "p": "dsp_reg_in_p", "in": "dsp_reg_in"}[s]], 0, 0, 0, 1,
                    f"DSP48E2 A/B registers {label}", 0)
        return _through(ins, D["dsp_comb"], dsp=1)
    if launch is not None and not ins and not t.startswith("RAM"):
        return _OTHER        # logic of constants only: no path of the clock walked
    if t in LUT_CELLS:
        return _through(ins, D["lut"] + D["net"], levels=1)
    if t in MUXF_CELLS:
        return _through(ins, D["muxf"], levels=1)
    if t in PASS_CELLS:
        return _through(ins, 0.0, carry=None)
    if t in CARRY_CELLS:
        best = None
        for (p, i, _), a in zip(deps, ins):
            if a[0] == _NO_PATH:
                continue
            if p in ("CI", "CYINIT", "CI_TOP"):
                bits = j + 1 if p != "CI_TOP" else j - 3
                cand = (a[0] + bits * D["carry_bit"], a[1], a[2] + bits, max(a[3], a[2] + bits), a[4], a[5],
                        a[6] + (a[2] == 0))     # a carry-in from outside a chain enters a new one
            else:
                bits = j - i + 1
                cand = (a[0] + D["carry_entry"] + bits * D["carry_bit"], a[1], bits, max(a[3], bits), a[4], a[5],
                        a[6] + 1)
            best = cand if best is None else (max(best, cand, key=lambda x: x[0])[:1] + (
                max(best[1], cand[1]), max(best[2], cand[2]), max(best[3], cand[3]), max(best[4], cand[4]),
                max(best, cand, key=lambda x: x[0])[5], max(best[6], cand[6])))
        return best if best is not None else _OTHER if ins else _start(0.0, "constant")
    if t.startswith("RAM"):
        mem = _start(D["ff_clk_to_q"], f"LUTRAM {label}") if launch is None or \
            clock_of(nl, c) in (None, launch) else _OTHER
        return _through(ins + [mem], D["lutram_read"], levels=1)
    raise TimingError(f"cell {name} of type {t} is not in the timing model (generator/estimate/rtl_timing.py)")


def _arrivals(nl: Netlist, wanted: list, launch=None, inputs: bool = True) -> dict:
    """Arrival of every bit in ``wanted`` and of their fan-in cones (iterative depth-first walk), from the start
    points of clock net bit ``launch`` only when given (and the top's inputs when ``inputs``). Raises TimingError
    on a combinational loop, naming a net on it."""
    arr: dict = {}
    deps_of: dict = {}
    on_stack: set = set()
    for root in wanted:
        if root in arr:
            continue
        stack = [root]
        while stack:
            b = stack[-1]
            if b in arr:
                stack.pop()
                continue
            if b not in deps_of:
                deps_of[b] = _deps(nl, b)
                on_stack.add(b)
            todo = [d for _, _, d in deps_of[b] if d not in arr]
            if todo:
                for d in todo:
                    if d in on_stack:
                        raise TimingError(f"combinational loop through net {nl.names.get(d, d)}")
                    stack.append(d)
                continue
            arr[b] = _arrival(nl, b, deps_of[b], arr, launch, inputs)
            on_stack.discard(b)
            stack.pop()
    return arr


