"""Static timing estimate of the RTL from the open netlist: the longest register-to-register path into every
endpoint bit of the design that Yosys mapped to UltraScale+ cells (``synth_xilinx -family xcup``, written with
``write_json``), in LUT levels, carry-chain bits, DSP48E2 stages and an estimated delay.

This is **not** Vivado's timing: no placement, no routing, no clock tree. It walks the mapped netlist between
sequential cells and adds a per-cell delay from the model below. Route delay is the large unknown: Vivado's
routed nets on UltraScale+ range from about 0.1 ns (neighbouring slices) to over 1 ns (congested or far); the
model charges an average :data:`DELAY_NS` ``"net"`` per LUT level, so a path's estimate may be off by about
-30% / +50% (the level and carry counts are exact for this netlist; Vivado re-maps logic and may do better or
worse).

Cells and how they count (cell library: Xilinx UG974, *UltraScale Architecture Libraries Guide*):

* start points: FF ``Q`` (FDRE/FDSE/FDCE/FDPE), block RAM / UltraRAM outputs (clock-to-out, with or without the
  output register ``DOA_REG``/``DOB_REG`` / ``OREG_A``/``OREG_B``), SRL outputs, the top's input ports;
* endpoints: every input pin of an FF, a block RAM / UltraRAM, a LUTRAM's write side, an SRL's data side, and the
  top's output ports;
* LUT1-6, MUXF7/8/9 and the asynchronous read of a LUTRAM (RAM32M/RAM64M/RAM32M16/RAM64M8/RAM*X1D) count one LUT
  level each (MUXF7/8 are counted like a LUT, conservatively); INV and BUF count nothing (absorbed);
* CARRY4 / CARRY8 per pin: ``S[i]``/``DI[i]`` to ``O[j]``/``CO[j]`` spans ``j - i + 1`` carry bits, ``CI`` to
  ``O[j]`` ``j + 1``; a chain continues through ``CO[last] -> CI``. The *carry chain* of a path is the longest
  run of carry bits without a LUT between them;
* DSP48E2 instantiated in the RTL (rtl/pe_dsp.sv: parameters AREG / BREG / MREG / PREG set): its input
  registers are endpoints (A / B: the arrival plus ``dsp_in``; PCIN: the cascade, ``dsp_cascade``), its P / PCOUT
  with PREG = 1 start points (``dsp_p_clk_to_out``), the internal A/B -> M -> P stages those of its setting;
* DSP48E2 inferred: Yosys 0.23 packs none of its registers on ``xcup``, so such DSPs are combinational. The
  analyzer infers what Vivado absorbs: the DSP's multiplier inputs (A, B, D) all driven straight by flip-flops
  (no logic between) are AREG/BREG/DREG; a P output bit driving only flip-flops is registered (MREG or PREG);
  when those flip-flops in turn drive only flip-flops, both MREG and PREG. The DSP segment then gets the delay of
  that register setting (:data:`DELAY_NS` ``dsp_*``), else the combinational multiply.

Delay model for UltraScale+ speed grade -2 (ns; :data:`DELAY_NS`). Sources: DS925 (*Zynq UltraScale+ MPSoC
Data Sheet: DC and AC Switching Characteristics*) gives block maximum frequencies: DSP48E2 fully pipelined
775 MHz (1.29 ns) at -2, block RAM 737 MHz, UltraRAM 650 MHz; the flip-flop clock-to-out, the LUT, carry and route
figures are typical Vivado timing-report values for UltraScale+ -2 (assumptions, not datasheet figures), as are
the combinational DSP and the RAM clock-to-out without output register.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from generator.estimate.netlist import FF_CELLS, SRL_CELLS, Netlist, cell_src, instance_modules, unit_of

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
#: limits of issue 14 (a 300 MHz design on UltraScale+): LUT levels and carry bits per register-to-register path
MAX_LUT_LEVELS, MAX_CARRY_BITS, TARGET_MHZ = 6, 32, 300.0

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


@dataclass
class Path_:
    """The worst path into one endpoint bit: delay (ns), LUT levels, longest carry chain (bits), DSP48E2 stages,
    start (``cell/net``, its RTL file:line) and end (net name, RTL file:line), the unit (RTL file stem)."""
    delay: float
    levels: int
    carry: int
    dsp: int
    start: str
    end: str
    unit: str
    src: str


@dataclass
class TimingReport:
    """Result of :func:`analyze`. ``endpoints``: one :class:`Path_` per endpoint bit; ``histogram``: endpoint bits
    per LUT-level count; ``fmax_mhz``: 1000 / worst delay (ns); ``over_levels`` / ``over_carry``: endpoint bits
    over :data:`MAX_LUT_LEVELS` / :data:`MAX_CARRY_BITS`; ``dsp``: DSP48E2 cells by the register setting inferred
    (``mp``, ``p``, ``in``, ``comb``)."""
    top: str
    endpoints: list[Path_]
    cells: Counter = field(default_factory=Counter)
    dsp: Counter = field(default_factory=Counter)

    @property
    def worst(self) -> Path_:
        return max(self.endpoints, key=lambda p: p.delay)

    @property
    def fmax_mhz(self) -> float:
        return 1000.0 / self.worst.delay if self.endpoints else float("inf")

    @property
    def max_levels(self) -> int:
        return max((p.levels for p in self.endpoints), default=0)

    @property
    def max_carry(self) -> int:
        return max((p.carry for p in self.endpoints), default=0)

    @property
    def histogram(self) -> dict[int, int]:
        return dict(sorted(Counter(p.levels for p in self.endpoints).items()))

    @property
    def over_levels(self) -> int:
        return sum(p.levels > MAX_LUT_LEVELS for p in self.endpoints)

    @property
    def over_carry(self) -> int:
        return sum(p.carry > MAX_CARRY_BITS for p in self.endpoints)

    def meets(self) -> bool:
        """No path over the LUT-level or carry limits, estimated fmax at least :data:`TARGET_MHZ`."""
        return not self.over_levels and not self.over_carry and self.fmax_mhz >= TARGET_MHZ

    def worst_vectors(self, n: int = 20) -> list[tuple[str, int, Path_]]:
        """The ``n`` worst endpoint vectors (``[i]`` bits collapsed): (name, bits, its worst path)."""
        groups: dict[str, list[Path_]] = defaultdict(list)
        for p in self.endpoints:
            groups[re.sub(r"\[\d+\]", "[*]", p.end)].append(p)
        rows = [(k, len(v), max(v, key=lambda p: p.delay)) for k, v in groups.items()]
        return sorted(rows, key=lambda r: -r[2].delay)[:n]

    def to_json(self) -> dict:
        return {"top": self.top, "fmax_mhz": round(self.fmax_mhz, 1), "worst_ns": round(self.worst.delay, 3),
                "max_lut_levels": self.max_levels, "max_carry_bits": self.max_carry,
                "endpoint_bits": len(self.endpoints), "over_lut_levels": self.over_levels,
                "over_carry_bits": self.over_carry, "meets": self.meets(), "histogram": self.histogram,
                "dsp48e2_registers": dict(self.dsp), "delay_model_ns": DELAY_NS,
                "limits": {"lut_levels": MAX_LUT_LEVELS, "carry_bits": MAX_CARRY_BITS, "mhz": TARGET_MHZ},
                "worst": [{"end": k, "bits": b, "start": p.start, "unit": p.unit, "src": p.src, "ns": round(p.delay, 3),
                           "lut_levels": p.levels, "carry_bits": p.carry, "dsp": p.dsp}
                          for k, b, p in self.worst_vectors()]}


# --- netlist walk --------------------------------------------------------------------------------------------
# a bit's arrival: (delay ns, LUT levels, current carry run, longest carry run, DSP stages, start label)
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
    return (delay, 0, 0, 0, 0, label)


def _through(arrs: list, delay: float, levels: int = 0, carry: int | None = None, dsp: int = 0) -> _Arr:
    """Arrival after a cell: the worst input delay plus ``delay``; ``levels`` LUT levels and ``dsp`` DSP stages
    added; ``carry``: None resets the carry run, else the run continues with that many bits."""
    if not arrs:
        return _start(delay, "constant")
    w = max(arrs, key=lambda a: a[0])
    lv = max(a[1] for a in arrs) + levels
    dp = max(a[4] for a in arrs) + dsp
    run = 0 if carry is None else carry
    cmax = max(max(a[3] for a in arrs), run)
    return (w[0] + delay, lv, run, cmax, dp, w[5])


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


def _arrival(nl: Netlist, bit, deps: list, arr: dict) -> _Arr:
    """Arrival time of ``bit`` given the arrivals ``arr`` of its inputs ``deps`` (see :func:`_deps`)."""
    D = DELAY_NS
    if bit not in nl.driver:
        return _start(0.0, f"input {nl.names.get(bit, bit)}" if bit in nl.inputs else "undriven")
    name, port, j = nl.driver[bit]
    c = nl.cells[name]
    t, prm = c["type"], c.get("parameters", {})
    label = f"{nl.names.get(bit, name)} ({cell_src(c.get('attributes', {}))[1]})"
    if t in FF_CELLS or t in SRL_CELLS:
        return _start(D["ff_clk_to_q"], label)
    if t in CONST_CELLS:
        return _start(0.0, "constant")
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
                    f"DSP48E2 A/B registers {label}")
        return _through(ins, D["dsp_comb"], dsp=1)
    if t in LUT_CELLS:
        return _through(ins, D["lut"] + D["net"], levels=1)
    if t in MUXF_CELLS:
        return _through(ins, D["muxf"], levels=1)
    if t in PASS_CELLS:
        return _through(ins, 0.0, carry=None)
    if t in CARRY_CELLS:
        best = None
        for (p, i, _), a in zip(deps, ins):
            if p in ("CI", "CYINIT", "CI_TOP"):
                bits = j + 1 if p != "CI_TOP" else j - 3
                cand = (a[0] + bits * D["carry_bit"], a[1], a[2] + bits, max(a[3], a[2] + bits), a[4], a[5])
            else:
                bits = j - i + 1
                cand = (a[0] + D["carry_entry"] + bits * D["carry_bit"], a[1], bits, max(a[3], bits), a[4], a[5])
            best = cand if best is None else (max(best, cand, key=lambda x: x[0])[:1] + (
                max(best[1], cand[1]), max(best[2], cand[2]), max(best[3], cand[3]), max(best[4], cand[4]),
                max(best, cand, key=lambda x: x[0])[5]))
        return best if best is not None else _start(0.0, "constant")
    if t.startswith("RAM"):
        mem = _start(D["ff_clk_to_q"], f"LUTRAM {label}")
        return _through(ins + [mem], D["lutram_read"], levels=1)
    raise TimingError(f"cell {name} of type {t} is not in the timing model (generator/estimate/rtl_timing.py)")


def _arrivals(nl: Netlist, wanted: list) -> dict:
    """Arrival of every bit in ``wanted`` and of their fan-in cones (iterative depth-first walk).
    Raises TimingError on a combinational loop, naming a net on it."""
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
            arr[b] = _arrival(nl, b, deps_of[b], arr)
            on_stack.discard(b)
            stack.pop()
    return arr


def _endpoints(nl: Netlist, mod: dict, instances: dict) -> list[tuple[str, str, str, object, float]]:
    """(end label, unit, file:line, bit, delay beyond the bit's arrival in ns) of every endpoint bit (see the
    module docstring)."""
    out = []
    for name, c in nl.cells.items():
        t = c["type"]
        if _dsp_instantiated(c):
            r, (unit, src) = _dsp_regs(c), cell_src(c.get("attributes", {}))
            for port, extra in (("A", "dsp_in"), ("B", "dsp_in"), ("PCIN", "dsp_cascade")):
                if port in ("A", "B") and not r[port + "REG"]:
                    raise TimingError(f"DSP48E2 {name}: instantiated without {port}REG is not in the timing model")
                out += [(f"DSP48E2 {name.lstrip(chr(92))}.{port}[{i}]", unit, src, b, DELAY_NS[extra])
                        for i, b in enumerate(c["connections"].get(port, [])) if not isinstance(b, str)]
            continue
        seq = t in FF_CELLS or t in BRAM_CELLS or t in URAM_CELLS or t in SRL_CELLS or \
            (t.startswith("RAM") and t not in BRAM_CELLS)
        if not seq:
            continue
        unit, src = cell_src(c.get("attributes", {}))
        q = c["connections"].get("Q", [None])[0]
        own = (unit, src)
        for port, bits in c["connections"].items():
            if c["port_directions"].get(port) != "input" or "CLK" in port or port in ("C", "WCLK"):
                continue
            for i, b in enumerate(bits):
                if isinstance(b, str):
                    continue
                if t in FF_CELLS:
                    end = nl.names.get(q, name) + ("" if port == "D" else f" ({port})")
                else:
                    end = f"{t} {name.lstrip(chr(92))}.{port}[{i}]"
                if own[0] == "?":           # a cell of Yosys' own library: named by its output or input net
                    net = nl.names.get(q if t in FF_CELLS else b, "")
                    unit, src = unit_of(net, instances), f"net {net}"
                out.append((end, unit, src, b, 0.0))
    for pname, p in mod["ports"].items():
        if p["direction"] == "output":
            out += [(f"output {pname}[{i}]", "top", "port", b, 0.0) for i, b in enumerate(p["bits"])
                    if not isinstance(b, str)]
    return out


def analyze(netlist_json: Path | dict, top: str, instances: dict | None = None) -> TimingReport:
    """Longest register-to-register path into every endpoint bit of module ``top`` of a Yosys JSON netlist
    (flattened, mapped by ``synth_xilinx -family xcup``; a path or the loaded dict). ``instances``: {instance name:
    module} (:func:`instance_modules` of the sources) to name the unit of endpoints Yosys' own cells have.

    Returns a :class:`TimingReport` (delays in ns, fmax in MHz). Raises TimingError when ``top`` is missing, a
    cell type is not in the model, or the netlist has a combinational loop."""
    data = json.loads(Path(netlist_json).read_text()) if not isinstance(netlist_json, dict) else netlist_json
    mods = data.get("modules", {})
    if top not in mods:
        raise TimingError(f"module {top!r} is not in the netlist (modules with cells: "
                          f"{', '.join(k for k, v in mods.items() if v.get('cells'))[:300]})")
    mod = mods[top]
    nl = Netlist(mod)
    ends = _endpoints(nl, mod, instances or {})
    arr = _arrivals(nl, [b for *_, b, _ in ends])
    tail = DELAY_NS["setup"] + DELAY_NS["uncertainty"]
    paths = [Path_(delay=a[0] + x + tail, levels=a[1], carry=a[3], dsp=a[4], start=a[5], end=end, unit=unit,
                   src=src) for end, unit, src, b, x in ends for a in [arr[b]]]
    cells = Counter(c["type"] for c in nl.cells.values())
    dsp = Counter(_dsp_setting(nl, c) for c in nl.cells.values() if c["type"] == "DSP48E2")
    return TimingReport(top=top, endpoints=paths, cells=cells, dsp=dsp)


def report(r: TimingReport, title: str = "") -> str:
    """Markdown report: summary against the limits, the LUT-level distribution, the 20 worst endpoint vectors."""
    w = r.worst
    lines = [f"## Timing estimate{': ' + title if title else ''} (open netlist, not Vivado)", "",
             f"- endpoint bits: {len(r.endpoints):,}; worst path {w.delay:.2f} ns -> estimated fmax "
             f"**{r.fmax_mhz:.0f} MHz** (UltraScale+ -2 cell model, see generator/estimate/rtl_timing.py)",
             f"- LUT levels: max {r.max_levels} (limit {MAX_LUT_LEVELS}; {r.over_levels:,} endpoint bits over); "
             f"carry chain: max {r.max_carry} bits (limit {MAX_CARRY_BITS}; {r.over_carry:,} over)",
             f"- DSP48E2 register setting Vivado can absorb: {dict(r.dsp) or 'no DSP'}",
             f"- verdict: {'meets' if r.meets() else 'does NOT meet'} {MAX_LUT_LEVELS} LUT levels / "
             f"{MAX_CARRY_BITS} carry bits / {TARGET_MHZ:g} MHz", "",
             "| LUT levels | " + " | ".join(str(k) for k in r.histogram) + " |",
             "|---" * (len(r.histogram) + 1) + "|",
             "| endpoint bits | " + " | ".join(f"{v:,}" for v in r.histogram.values()) + " |", "",
             "| # | endpoint (bits) | unit | RTL | start | LUT levels | carry bits | DSP | ns |",
             "|---:|---|---|---|---|---:|---:|---:|---:|"]
    for k, (name, bits, p) in enumerate(r.worst_vectors(), 1):
        lines.append(f"| {k} | `{name}` ({bits}) | {p.unit} | {p.src} | `{p.start}` | {p.levels} | {p.carry} | "
                     f"{p.dsp} | {p.delay:.2f} |")
    return "\n".join(lines) + "\n"
