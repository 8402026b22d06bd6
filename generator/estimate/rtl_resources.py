"""FPGA resources of the SystemVerilog RTL (``rtl/``) for a board, measured by logic synthesis with Yosys
(``synth_xilinx -family xcup``, Debian package ``yosys``, 0.23 here), checked against the board's part and shown
next to the HLS estimate of :mod:`generator.estimate.hls_resources`.

Flow (:func:`synthesize`): :func:`generator.backends.rtl.write_rtl` renders the package and copies the sources for the board;
a Yosys-0.23-parsable copy is made (that version parses no ``import`` statement: every name of ``accel_pkg`` is
qualified as ``accel_pkg::NAME``, ``parameter string`` becomes an untyped parameter); then

    read_verilog -sv ...; synth_xilinx -family xcup -noiopad -flatten -nowidelut [-uram] -top accel_top
    (the script of synth_xilinx without its SAT-based ``share`` pass, which takes minutes on this design and only
    merges mutually exclusive operators); stat -json

``-nowidelut``: LUT mapping to LUT1..LUT6 only. Without it ABC may build 7- and 8-input functions as LUT6 +
MUXF7 (+ MUXF8), which its unit-delay model counts as one level and the timing estimate
(:mod:`generator.estimate.rtl_timing`) counts as two or three, as Vivado's logic-level count does: ABC then picks
those by area where they deepen a path (the LOAD's 64:1 byte selection of the 256-bit path: 9 counted levels
with wide LUTs, 4 without). With LUT6 only, ABC's depth-oriented mapping minimizes what the estimate measures.
Vivado re-maps the logic anyway; the LUT count changes by a few percent (MUXF7/8 are not counted as LUTs).

Counting (Yosys cell names are the UltraScale+ primitives of UG974):

* **DSP48E2**: ``DSP48E2`` cells (UG579). The RTL has Tn*Tm of them in the PE array (one signed 27 x 18 multiply
  per PE) plus 1 per output lane for the requantization (its operand pre-shifted to 27 bits times the 16-bit
  multiplier, ``rtl/requant.sv``) plus 1 per output lane for COMPUTE's element-wise product (``emul``, 18 x 18)
  plus PRE's :data:`PRE_DSP` = 21, the same for every board (``rtl/pre_chan.sv`` per channel, three channels in
  ``rtl/pre.sv``: four instantiated DSP48E2 of the horizontal pass, two of the vertical, one of the quantization;
  PRE's per-instruction products are serial, ``rtl/seq_mul2.sv``): ``Tn*Tm + 2*Tm + 21`` (:func:`expected_dsp`).
  The HLS estimate counts PRE's multipliers of its own kernel
  (:attr:`generator.estimate.hls_resources.Estimate.dsp_pre`, 16): a different unit, so the two totals differ by
  that difference only.
* **BRAM36**: ``RAMB36E2`` + 0.5 x ``RAMB18E2`` (UG573: a RAMB18E2 is half a block RAM tile).
* **URAM**: ``URAM288`` (UG573; only with ``uram=True``, i.e. ``synth_xilinx -uram``). The buffers' RAMs carry the
  architecture's storage binding (:mod:`generator.spec.memories`, rendered by
  :func:`generator.backends.rtl.ram_styles`: ``ram_style`` block / ultra), the rule the HLS estimate follows too;
  without ``uram`` the UltraRAM bindings become block RAM.
* **LUT**: LUT1..LUT6, plus distributed-RAM and shift-register primitives counted as the LUT6 sites they occupy
  (:data:`LUTRAM_SITES`, UG574). MUXF7/8/9 and CARRY8 are not LUTs (reported under ``cells``).
* **FF**: FDRE / FDSE / FDCE / FDPE (and latches LDCE / LDPE).

These are synthesis figures before placement (no Vivado here): Vivado's optimisation would change the LUT/FF
counts (tens of percent), not the DSP48E2 and memory counts, which follow the RTL structure.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from host.fileio import atomic_write
from generator.estimate import hls_resources
from generator.estimate.netlist import cells_by_unit
from generator.spec.board import Board
from generator.backends.rtl import TOP, write_rtl

#: LUT6 sites of the distributed-RAM / SRL primitives (UG574, CLB user guide)
LUTRAM_SITES = {"RAM32X1S": 1, "RAM32X1D": 2, "RAM32M": 4, "RAM32M16": 8, "RAM64X1S": 1, "RAM64X1D": 2,
                "RAM64M": 4, "RAM64M8": 8, "RAM128X1S": 2, "RAM128X1D": 4, "RAM256X1S": 4, "RAM256X1D": 8,
                "RAM512X1S": 8, "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1}
LUT_CELLS = [f"LUT{i}" for i in range(1, 7)]
FF_CELLS = ["FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE"]
RESOURCE_KEYS = ["dsp48e2", "bram36", "uram", "lut", "ff"]


class RtlResourceError(RuntimeError):
    """Yosys is missing or failed, or the synthesized RTL does not fit the board's part (the message has the
    numbers)."""


@dataclass
class RtlResources:
    """Resources of the synthesized RTL of one board configuration.

    Attributes: board, part, tn, tm; ``used`` {resource: count} (keys of :data:`RESOURCE_KEYS`, as the board
    file's ``resources``: DSP48E2 slices, BRAM36 tiles, URAM288 blocks, LUTs, FFs); ``capacity`` (the board's
    part); ``cells`` (every Yosys cell type and count); ``seconds`` (Yosys wall time); ``log`` (Yosys log path);
    ``estimate`` (the HLS estimate of :func:`generator.estimate.hls_resources.estimate`, for comparison);
    ``units`` {unit: {cell type: count}} of the mapped netlist (:func:`generator.estimate.netlist.cells_by_unit`;
    empty after a mapping-only run).
    """
    board: str
    part: str
    tn: int
    tm: int
    used: dict
    capacity: dict
    cells: dict
    seconds: float
    log: Path
    estimate: hls_resources.Estimate | None = None
    uram_enabled: bool = False
    notes: list = field(default_factory=list)
    units: dict = field(default_factory=dict)

    def over(self) -> list[str]:
        """Resources whose synthesized count exceeds the capacity."""
        return [k for k in RESOURCE_KEYS if self.used[k] is not None and self.used[k] > self.capacity[k]]

    def table(self) -> str:
        """Markdown table: resource, RTL (Yosys), HLS estimate, capacity, RTL utilization."""
        rows = ["| resource | RTL (Yosys synth_xilinx) | HLS estimate | capacity | RTL utilization |",
                "|---|---:|---:|---:|---:|"]
        est = self.estimate.used() if self.estimate else {}
        for k in RESOURCE_KEYS:
            v, cap = self.used[k], self.capacity[k]
            if v is None:
                rows.append(f"| {k.upper()} | (not mapped) | {est.get(k, '-')} | {cap} | - |")
                continue
            u = f"{v / cap:.1%}" if cap else ("-" if not v else "over")
            name = "DSP48E2" if k == "dsp48e2" else k.upper()
            e = est.get(k)
            rows.append(f"| {name} | {v:g} | {'-' if e is None else f'{e:g}'} | {cap} | {u} |")
        return "\n".join(rows)


#: the mapped netlist Yosys writes beside ``stat.json`` after a full (not mapping-only) synthesis
NETLIST_JSON = "netlist.json"


def yosys() -> str | None:
    """Path of the ``yosys`` executable, or None."""
    return shutil.which("yosys")


#: PRE's channels (``rtl/pre.sv`` ``g_ch``: one ``rtl/pre_chan.sv`` per colour channel of a pixel)
PRE_CHANNELS = 3
#: DSP48E2 of one ``rtl/pre_chan.sv``, each an instantiated ``rtl/pe_dsp.sv`` (A/B, M, P registers): the
#: horizontal pass of both held rows as two cascades of two (d0-d3), the vertical pass as one (d4, d5), the
#: quantization product v x mult (d6)
PRE_DSP_PER_CHANNEL = 7
#: DSP48E2 of PRE (``rtl/pre_insn.sv`` and what it instantiates), the same for every board
PRE_DSP = PRE_CHANNELS * PRE_DSP_PER_CHANNEL


def expected_dsp(board: Board) -> int:
    """DSP48E2 slices the RTL's structure needs: one per PE (Tn*Tm) plus, per output lane (Tm), one for the
    requantization multiply (its operand pre-shifted to 27 bits, ``rtl/requant.sv``) and one for the element-wise
    product (UG579: each slice multiplies 27 x 18 bits signed), plus PRE's :data:`PRE_DSP`."""
    a = board.accelerator
    return a.tn * a.tm + 2 * a.tm + PRE_DSP


def _package_names(pkg_text: str) -> list[str]:
    """The package's localparam and function names (longest first)."""
    names = set(re.findall(r"localparam\b[^=;]*?\b(\w+)\s*=", pkg_text))
    names |= set(re.findall(r"\bfunction\s+automatic\b[^;(]*?\b(\w+)\s*\(", pkg_text))
    return sorted(names, key=len, reverse=True)


def yosys_sources(srcs: list[Path], out: Path) -> list[Path]:
    """Copies of the rendered sources ``srcs`` (package first) that Yosys 0.23 parses, in ``out``: no ``import``
    (package names qualified), no ``string`` parameter type. Returns them in compile order."""
    out.mkdir(parents=True, exist_ok=True)
    pkg = srcs[0].read_text()
    pat = re.compile(r"(?<![:\w.'])\b(" + "|".join(_package_names(pkg)) + r")\b")
    res = [out / srcs[0].name]
    atomic_write(res[0], pkg)
    for s in srcs[1:]:
        t = s.read_text()
        t = re.sub(r"^\s*import\s+accel_pkg::\*;\s*$", "", t, flags=re.M)
        t = t.replace("parameter string ", "parameter ")
        t = pat.sub(r"accel_pkg::\1", t)
        atomic_write(out / s.name, t)
        res.append(out / s.name)
    return res


def yosys_script(srcs: list[Path], uram: bool, stat_json: Path, mapping_only: bool = False, top: str = TOP) -> str:
    """The Yosys script: synth_xilinx for UltraScale+ (xcup), flattened, without I/O buffers, its ``share`` pass
    left out (see the module docstring), statistics as JSON into ``stat_json`` and, after a full mapping, the
    mapped netlist as :data:`NETLIST_JSON` beside it (read by :mod:`generator.estimate.rtl_timing`).
    ``mapping_only``: stop after the DSP48E2 and block-RAM / UltraRAM mapping (their counts are final there; LUT
    and FF are not mapped yet). ``top``: the module synthesized (another RTL unit: out of context)."""
    opts = f"-family xcup -noiopad -flatten -nowidelut {'-uram ' if uram else ''}-top {top}"
    return "; ".join([
        "read_verilog -sv " + " ".join(p.name for p in srcs),
        f"synth_xilinx {opts} -run :coarse",
        # the coarse step of synth_xilinx without `share`
        "techmap -map +/cmp2lut.v -map +/cmp2lcu.v -D LUT_WIDTH=6", "alumacc", "opt", "memory -nomap", "opt_clean",
        f"synth_xilinx {opts} -run map_memory:{'map_ffram' if mapping_only else ''}",
        f"tee -q -o {stat_json.name} stat -json",
    ] + ([] if mapping_only else [f"write_json {NETLIST_JSON}"]))


def count(cells: dict, mapping_only: bool = False) -> dict:
    """{resource: count} from Yosys ``num_cells_by_type`` (see the module docstring for the rules); with
    ``mapping_only`` LUT and FF are None (not mapped)."""
    if mapping_only:
        return {"dsp48e2": cells.get("DSP48E2", 0),
                "bram36": cells.get("RAMB36E2", 0) + 0.5 * cells.get("RAMB18E2", 0),
                "uram": cells.get("URAM288", 0), "lut": None, "ff": None}
    return {
        "dsp48e2": cells.get("DSP48E2", 0),
        "bram36": cells.get("RAMB36E2", 0) + 0.5 * cells.get("RAMB18E2", 0),
        "uram": cells.get("URAM288", 0),
        "lut": sum(cells.get(c, 0) for c in LUT_CELLS) + sum(n * cells.get(c, 0) for c, n in LUTRAM_SITES.items()),
        "ff": sum(cells.get(c, 0) for c in FF_CELLS),
    }


def synthesize(board: Board, out: Path, uram: bool | None = None, timeout: float | None = None,
               log=print, reuse: bool = True, mapping_only: bool = False, top: str = TOP,
               also: tuple = (), extra: tuple = ()) -> RtlResources:
    """Synthesize ``board``'s RTL with Yosys into ``out`` (sources, ``yosys.log``, ``stat.json``) and count its
    resources.

    Args:
        board: the board (its accelerator configuration and its part's capacity, ``board.resources``).
        out: work folder.
        uram: let Yosys use URAM288 (``synth_xilinx -uram``); default: when the part has URAM.
        timeout: seconds before Yosys is stopped (None: no limit).
        log: progress printer (``lambda *a: None`` for silence).
        mapping_only: stop after DSP48E2 / RAM mapping (much faster on 32x32 arrays): ``used`` has LUT and FF
            None.
        top: the RTL module synthesized (default the whole accelerator; a unit such as ``post`` out of context).
        reuse: reuse the result of an earlier run in ``out`` when the Yosys sources, script and Yosys version are
            the same (``out/yosys/inputs.sha256``); ``seconds`` is then the earlier run's time.
        also: other work folders whose run is reused the same way when ``out`` has none (e.g. the whole-design
            run of ``invoke timing``, the same script).
        extra: more source files (paths) compiled after the RTL's: a unit not yet in the design (``top`` among them).

    Raises RtlResourceError when yosys is not installed (``apt-get install yosys``), fails or times out.
    Synthesis of the default boards' 32x32 arrays takes a long time (see the README); the 8x8 test configuration
    a few minutes.
    """
    exe = yosys()
    if exe is None:
        raise RtlResourceError("yosys not found on PATH: install it with `apt-get install yosys` "
                               "(./setup.sh does), then run again")
    out = Path(out)
    uram = board.resources.uram > 0 if uram is None else uram
    rb = board          # buffers bound to URAM only when Yosys may use it (ram_tdp STYLE from generator.backends.rtl.ram_styles)
    if not uram and board.resources.uram > 0:
        rb = board.model_copy(update={"resources": board.resources.model_copy(update={"uram": 0})})
    srcs = write_rtl(rb, out / "src")
    for p in map(Path, extra):
        atomic_write(out / "src" / p.name, p.read_bytes())
        srcs.append(out / "src" / p.name)
    ys = yosys_sources(srcs, out / "yosys")
    stat_json = out / "yosys" / "stat.json"
    logf = out / "yosys" / "yosys.log"
    script = yosys_script(ys, uram, stat_json, mapping_only, top)
    cmd = [exe, "-q", "-l", logf.name, "-p", script]
    a = board.accelerator
    version = subprocess.run([exe, "-V"], capture_output=True, text=True).stdout.strip()
    h = hashlib.sha256("\0".join([version, script] + [p.read_text() for p in ys]).encode()).hexdigest()
    stamp, timef = out / "yosys" / "inputs.sha256", out / "yosys" / "seconds.txt"
    netlist = out / "yosys" / NETLIST_JSON
    for y in [out / "yosys"] + [Path(o) / "yosys" for o in also] if reuse else []:
        st, tf = y / "inputs.sha256", y / "seconds.txt"
        if st.exists() and st.read_text() == h and (y / stat_json.name).exists() and tf.exists() and (
                mapping_only or (y / NETLIST_JSON).exists()):
            log(f"yosys: reusing {y / stat_json.name} (same sources, script and {version})")
            return _result(board, json.loads((y / stat_json.name).read_text())["design"]["num_cells_by_type"],
                           float(tf.read_text()), y / logf.name, uram, mapping_only, top)
    for f in (stamp, stat_json, netlist):
        f.unlink(missing_ok=True)
    log(f"yosys synth_xilinx -family xcup: {board.name} Tn x Tm = {a.tn} x {a.tm}, top {top} (log: {logf})")
    t0 = time.time()
    try:
        r = subprocess.run(cmd, cwd=out / "yosys", capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RtlResourceError(f"yosys did not finish within {timeout:g} s ({board.name}); log: {logf}") from None
    secs = time.time() - t0
    if r.returncode != 0 or not stat_json.exists():
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
        raise RtlResourceError(f"yosys failed on the {board.name} RTL (exit {r.returncode}); log: {logf}\n{tail}")
    atomic_write(timef, f"{secs:.1f}")
    atomic_write(stamp, h)
    return _result(board, json.loads(stat_json.read_text())["design"]["num_cells_by_type"], secs, logf, uram,
                   mapping_only, top)


def _result(board: Board, cells: dict, secs: float, logf: Path, uram: bool, mapping_only: bool,
            top: str = TOP) -> RtlResources:
    a = board.accelerator
    try:
        est = hls_resources.estimate(board)
    except Exception:                                            # noqa: BLE001 - the comparison is informative
        est = None
    units = {}
    if not mapping_only and (logf.parent / NETLIST_JSON).exists():
        mods = json.loads((logf.parent / NETLIST_JSON).read_text()).get("modules", {})
        mod = mods.get(top) or mods.get("\\" + top)
        if mod is not None:
            units = cells_by_unit(mod, sorted(logf.parent.glob("*.sv")), top)
    return RtlResources(board=board.name, part=board.part, tn=a.tn, tm=a.tm, used=count(cells, mapping_only),
                        capacity=board.resources.model_dump(), cells=dict(cells), seconds=secs, log=logf,
                        estimate=est, uram_enabled=uram, units=units)


def unit_table(units: dict) -> str:
    """Markdown table of :attr:`RtlResources.units`: per unit the resources :func:`count` gives (LUT with the
    LUTRAM / SRL sites), of its LUTs the LUT3s, its CARRY4 cells; largest LUT count first, then the total."""
    rows = ["| unit | LUT | of which LUT3 | CARRY4 | FF | DSP48E2 | BRAM36 | URAM |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    tot: dict = {}
    for u, cells in sorted(units.items(), key=lambda kv: (-count(kv[1])["lut"], kv[0])) + [("total", None)]:
        cells = tot if cells is None else cells
        if u != "total":
            for k, v in cells.items():
                tot[k] = tot.get(k, 0) + v
        r = count(cells)
        rows.append(f"| {u} | {r['lut']:,} | {cells.get('LUT3', 0):,} | {cells.get('CARRY4', 0):,} | {r['ff']:,} | "
                    f"{r['dsp48e2']} | {r['bram36']:g} | {r['uram']} |")
    return "\n".join(rows)


def check(board: Board, out: Path, **kw) -> RtlResources:
    """:func:`synthesize`, refusing a design that does not fit: raises RtlResourceError naming the board, part,
    configuration and every resource (synthesized / capacity), like :func:`generator.estimate.hls_resources.check`."""
    r = synthesize(board, out, **kw)
    over = r.over()
    if over:
        nums = ", ".join(f"{k} {r.used[k]:g} / {r.capacity[k]}{' (over)' if k in over else ''}" for k in RESOURCE_KEYS
                         if r.used[k] is not None)
        raise RtlResourceError(
            f"the RTL of board {board.name} ({board.part}), Tn={r.tn} x Tm={r.tm}, does not fit after synthesis: "
            f"{', '.join(over)} over capacity (Yosys synth_xilinx / capacity: {nums}); reduce tn/tm or the buffer "
            f"sizes in boards/{board.name}.yaml")
    return r


def report(r: RtlResources) -> str:
    """Markdown report: the comparison table, the memory and DSP cells, the run time."""
    mem = {k: v for k, v in r.cells.items() if k.startswith(("RAMB", "URAM")) or k in LUTRAM_SITES}
    return (f"## {r.board} ({r.part}), Tn x Tm = {r.tn} x {r.tm}: RTL synthesized by Yosys "
            f"(synth_xilinx -family xcup{' -uram' if r.uram_enabled else ''}) in {r.seconds:.0f} s\n\n{r.table()}\n\n"
            f"DSP48E2 expected from the structure: {r.tn} x {r.tm} PEs + {r.tm} requantization + {r.tm} "
            f"element-wise product + {PRE_DSP} PRE = {r.tn * r.tm + 2 * r.tm + PRE_DSP}"
            + ("" if r.estimate is None else f" (the HLS estimate's PRE: {r.estimate.dsp_pre})")
            + f". Memory cells: {', '.join(f'{k} {v}' for k, v in sorted(mem.items()))}.\n"
            + ("" if r.used.get("lut") is None else
               f"LUT and FF are Yosys' mapping, not Vivado's: of the LUTs {r.cells.get('LUT3', 0)} are LUT3 (Yosys "
               f"builds multi-operand sums from LUT3 full adders); Yosys 0.23 packs no register into the DSP48E2s "
               f"it infers (requantization, element-wise product), so theirs are in FFs (the PE array's DSP48E2s "
               f"are instantiated, rtl/pe_dsp.sv, with their registers).\n")
            + ("" if not r.units else
               "\nBy unit (the top level's instances; the PE array and the requantization lanes on their own): a cell "
               "by its name or RTL source, ABC's LUTs by the unit of the cells they feed "
               f"(generator/estimate/netlist.py `cells_by_unit`):\n\n{unit_table(r.units)}\n"))


if __name__ == "__main__":   # python -m generator.estimate.rtl_resources [board ...]
    import sys

    from generator.spec.board import known_boards, load_board
    from generator import build_dir

    for name in sys.argv[1:] or known_boards():
        b = load_board(name)
        res = check(b, build_dir("rtl_resources", name))
        print(report(res))
