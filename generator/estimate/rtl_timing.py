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

Clock domains: every start point and endpoint belongs to the clock net of its cell (FF ``C``, SRL / DSP48E2 /
UltraRAM ``CLK``, block RAM ``CLKARDCLK`` / ``CLKBWRCLK``, LUTRAM ``WCLK``). A design with one clock is timed
against it. With more, paths are walked once per launching clock (the top's input ports count as launched by the
logic clock) and each path gets the period of the faster of its two clocks: the clocks come from one MMCM with aligned rising edges (a net named ``clk2x``:
:data:`CLOCK_RATIOS`, twice the logic clock), so a path from the logic clock into the double-rate domain or back has
one fast period, as Vivado times it. The report then gives the logic clock's estimated fmax (every path scaled to
it) and each domain's own (:meth:`TimingReport.domains`).

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

from generator.estimate.netlist import Netlist, cell_src, instance_modules, unit_of  # noqa: F401
from generator.estimate.timing_walk import (BRAM_CELLS, CLOCK_PORTS, CLOCK_RATIOS, DELAY_NS, FF_CELLS,  # noqa: F401
                                            SRL_CELLS, URAM_CELLS, TimingError, _arrivals, _dsp_instantiated,
                                            _dsp_regs, _dsp_setting, _NO_PATH, _ratio, clock_name, clock_of)

#: limits of issue 14 (a 300 MHz design on UltraScale+): LUT levels and carry bits per register-to-register path
MAX_LUT_LEVELS, MAX_CARRY_BITS, TARGET_MHZ = 6, 32, 300.0
#: issue 46's timing margin: carry chains per register-to-register path (a chain, LUTs, another chain is one too many)
MAX_CARRY_CHAINS = 1
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
    clock: str = ""       # "clk", or "launch -> capture" across domains ("" with one clock)
    chains: int = 0       # carry chains the path enters (separated by LUTs or registers-free logic)
    ratio: int = 1        # the path's period is the logic clock's / ratio (the faster of its two clocks)


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
        return max(self.endpoints, key=lambda p: p.delay * p.ratio)

    @property
    def fmax_mhz(self) -> float:
        """The logic clock's estimated fmax (MHz): a path of a double-rate domain (``ratio`` 2) needs its delay
        within half the logic period."""
        return min((1000.0 / (p.delay * p.ratio) for p in self.endpoints), default=float("inf"))

    def domains(self) -> dict[str, dict]:
        """Per clock domain or crossing (``Path_.clock``): endpoint bits, worst delay (ns), its own estimated fmax
        (MHz, 1000 / worst delay), the required fmax (:data:`TARGET_MHZ` x ratio) and max LUT levels."""
        out: dict[str, dict] = {}
        for p in self.endpoints:
            d = out.setdefault(p.clock, {"bits": 0, "worst_ns": 0.0, "ratio": p.ratio, "max_lut_levels": 0})
            d["bits"] += 1
            if p.delay > d["worst_ns"]:
                d.update(worst_ns=p.delay, worst=f"{p.start} -> {p.end}")
            d["max_lut_levels"] = max(d["max_lut_levels"], p.levels)
        for d in out.values():
            d["fmax_mhz"] = round(1000.0 / d["worst_ns"], 1) if d["worst_ns"] else float("inf")
            d["target_mhz"] = TARGET_MHZ * d["ratio"]
        return out

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

    @property
    def max_chains(self) -> int:
        return max((p.chains for p in self.endpoints), default=0)

    @property
    def over_chains(self) -> int:
        """Endpoint bits whose worst path enters more than :data:`MAX_CARRY_CHAINS` carry chains."""
        return sum(p.chains > MAX_CARRY_CHAINS for p in self.endpoints)

    def meets(self) -> bool:
        """No path over the LUT-level, carry-bit or carry-chain limits (:data:`MAX_LUT_LEVELS`,
        :data:`MAX_CARRY_BITS`, :data:`MAX_CARRY_CHAINS` chains per path), estimated fmax at least
        :data:`TARGET_MHZ`."""
        return (not self.over_levels and not self.over_carry and not self.over_chains
                and self.fmax_mhz >= TARGET_MHZ)

    def worst_vectors(self, n: int = 20) -> list[tuple[str, int, Path_]]:
        """The ``n`` worst endpoint vectors (``[i]`` bits collapsed): (name, bits, its worst path)."""
        groups: dict[str, list[Path_]] = defaultdict(list)
        for p in self.endpoints:
            groups[re.sub(r"\[\d+\]", "[*]", p.end)].append(p)
        rows = [(k, len(v), max(v, key=lambda p: p.delay * p.ratio)) for k, v in groups.items()]
        return sorted(rows, key=lambda r: -r[2].delay * r[2].ratio)[:n]

    def chain_vectors(self, n: int = 20) -> list[tuple[str, int, Path_]]:
        """The ``n`` endpoint vectors (``[i]`` bits collapsed) with the most bits whose worst path enters more than
        :data:`MAX_CARRY_CHAINS` carry chains: (name, such bits, the vector's path through the most chains)."""
        groups: dict[str, list[Path_]] = defaultdict(list)
        for p in self.endpoints:
            if p.chains > MAX_CARRY_CHAINS:
                groups[re.sub(r"\[\d+\]", "[*]", p.end)].append(p)
        rows = [(k, len(v), max(v, key=lambda p: (p.chains, p.delay))) for k, v in groups.items()]
        return sorted(rows, key=lambda r: (-r[1], -r[2].delay))[:n]

    def to_json(self) -> dict:
        return {"top": self.top, "fmax_mhz": round(self.fmax_mhz, 1), "worst_ns": round(self.worst.delay, 3),
                "max_lut_levels": self.max_levels, "max_carry_bits": self.max_carry,
                "endpoint_bits": len(self.endpoints), "over_lut_levels": self.over_levels,
                "over_carry_bits": self.over_carry, "max_carry_chains": self.max_chains,
                "over_carry_chains": self.over_chains, "meets": self.meets(), "histogram": self.histogram,
                "dsp48e2_registers": dict(self.dsp), "delay_model_ns": DELAY_NS,
                "limits": {"lut_levels": MAX_LUT_LEVELS, "carry_bits": MAX_CARRY_BITS, "mhz": TARGET_MHZ},
                "domains": self.domains() if len({p.clock for p in self.endpoints}) > 1 else {},
                "worst": [{"end": k, "bits": b, "start": p.start, "unit": p.unit, "src": p.src, "ns": round(p.delay, 3),
                           "lut_levels": p.levels, "carry_bits": p.carry, "dsp": p.dsp}
                          for k, b, p in self.worst_vectors()],
                "over_chain_vectors": [{"end": k, "bits": b, "start": p.start, "unit": p.unit, "src": p.src,
                                        "chains": p.chains, "ns": round(p.delay, 3)}
                                       for k, b, p in self.chain_vectors(100)]}


def _endpoints(nl: Netlist, mod: dict, instances: dict) -> list[tuple[str, str, str, object, float, object]]:
    """(end label, unit, file:line, bit, delay beyond the bit's arrival in ns, capture clock net bit or None) of
    every endpoint bit (see the module docstring)."""
    out = []
    for name, c in nl.cells.items():
        t = c["type"]
        if _dsp_instantiated(c):
            r, (unit, src) = _dsp_regs(c), cell_src(c.get("attributes", {}))
            for port, extra in (("A", "dsp_in"), ("B", "dsp_in"), ("PCIN", "dsp_cascade")):
                if port in ("A", "B") and not r[port + "REG"]:
                    raise TimingError(f"DSP48E2 {name}: instantiated without {port}REG is not in the timing model")
                out += [(f"DSP48E2 {name.lstrip(chr(92))}.{port}[{i}]", unit, src, b, DELAY_NS[extra], clock_of(nl, c))
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
                out.append((end, unit, src, b, 0.0, clock_of(nl, c)))
    for pname, p in mod["ports"].items():
        if p["direction"] == "output":
            out += [(f"output {pname}[{i}]", "top", "port", b, 0.0, None) for i, b in enumerate(p["bits"])
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
    tail = DELAY_NS["setup"] + DELAY_NS["uncertainty"]
    clocks = sorted({clock_of(nl, c) for c in nl.cells.values()} - {None}, key=str)
    names = {k: clock_name(nl, mod, k) for k in clocks}
    if len(clocks) <= 1:
        arr = _arrivals(nl, [e[3] for e in ends])
        paths = [Path_(delay=a[0] + x + tail, levels=a[1], carry=a[3], dsp=a[4], start=a[5], chains=a[6], end=end, unit=unit,
                       src=src) for end, unit, src, b, x, _ in ends for a in [arr[b]]]
    else:
        paths = []
        # the top's input ports are launched by the logic clock (the first clock of ratio 1)
        logic = next((k for k in clocks if _ratio(names[k]) == 1), clocks[0])
        for launch in clocks:
            arr = _arrivals(nl, [e[3] for e in ends], launch, inputs=launch == logic)
            for end, unit, src, b, x, cap in ends:
                a = arr[b]
                if a[0] == _NO_PATH:
                    continue
                cap = launch if cap is None else cap
                name = [names[k] for k in (launch, cap)]
                paths.append(Path_(delay=a[0] + x + tail, levels=a[1], carry=a[3], dsp=a[4], start=a[5], chains=a[6], end=end,
                                   unit=unit, src=src, clock=name[0] if cap == launch else " -> ".join(name),
                                   ratio=max(map(_ratio, name))))
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
             f"carry chain: max {r.max_carry} bits (limit {MAX_CARRY_BITS}; {r.over_carry:,} over); carry chains per "
             f"path: max {r.max_chains} (limit {MAX_CARRY_CHAINS}; {r.over_chains:,} over)",
             f"- DSP48E2 register setting Vivado can absorb: {dict(r.dsp) or 'no DSP'}",
             f"- verdict: {'meets' if r.meets() else 'does NOT meet'} {MAX_LUT_LEVELS} LUT levels / "
             f"{MAX_CARRY_BITS} carry bits / {MAX_CARRY_CHAINS} carry chain per path / {TARGET_MHZ:g} MHz", ""]
    doms = r.domains()
    if len(doms) > 1:
        lines += ["| clock domain (launch -> capture) | endpoint bits | worst ns | est. fmax MHz | needed MHz | "
                  "max LUT levels | worst path |", "|---|---:|---:|---:|---:|---:|---|"]
        lines += [f"| {k} | {d['bits']:,} | {d['worst_ns']:.2f} | {d['fmax_mhz']:.0f} | {d['target_mhz']:g} | "
                  f"{d['max_lut_levels']} | `{d['worst']}` |" for k, d in sorted(doms.items())] + [""]
    lines += [
             "| LUT levels | " + " | ".join(str(k) for k in r.histogram) + " |",
             "|---" * (len(r.histogram) + 1) + "|",
             "| endpoint bits | " + " | ".join(f"{v:,}" for v in r.histogram.values()) + " |", "",
             "| # | endpoint (bits) | unit | RTL | start | LUT levels | carry bits (chains) | DSP | ns |",
             "|---:|---|---|---|---|---:|---:|---:|---:|"]
    for k, (name, bits, p) in enumerate(r.worst_vectors(), 1):
        unit = f"{p.unit} [{p.clock}]" if len(doms) > 1 else p.unit
        lines.append(f"| {k} | `{name}` ({bits}) | {unit} | {p.src} | `{p.start}` | {p.levels} | {p.carry} ({p.chains}) | "
                     f"{p.dsp} | {p.delay:.2f} |")
    over = r.chain_vectors()
    if over:
        lines += ["", f"Endpoint vectors whose paths enter more than {MAX_CARRY_CHAINS} carry chain (the most bits "
                  f"first; all of them in timing.json):", "",
                  "| # | endpoint (bits over) | unit | RTL | start | LUT levels | carry chains | ns |",
                  "|---:|---|---|---|---|---:|---:|---:|"]
        lines += [f"| {k} | `{name}` ({bits}) | {p.unit} | {p.src} | `{p.start}` | {p.levels} | {p.chains} | "
                  f"{p.delay:.2f} |" for k, (name, bits, p) in enumerate(over, 1)]
    return "\n".join(lines) + "\n"
