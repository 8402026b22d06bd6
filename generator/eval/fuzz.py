"""Random-layer fuzzing across the executors (``invoke fuzz``).

Each case is a random single layer or small graph, drawn from ``(seed, case index)`` alone so that any case can be
re-run by itself: convolutions with IC and OC in 1..600, H and W in 1..64, kernels 1/3/5/7, stride 1/2,
padding 0..K//2 (a quarter of them asymmetric: each side its own), ReLU / LeakyReLU / linear and the table
activations (SiLU, Sigmoid, Mish, HardSwish, Tanh, GELU, in their exported forms), fused max-pool 2/3 with stride 1/2 (and
darknet's bottom/right padding), nearest upsampling x2/x4, chains, concat (shared DDR regions), channel split
(views), stand-alone pool (2/3/5/9, padded on any side, ceil_mode) / activation / upsample copy layers, quantized
fully-connected layers (Flatten + Gemm), zero weight channels, every quantization mode with per-channel and
per-tensor weights, inputs beyond the calibration range
(saturation), and PE arrays with Tm != Tn. A few cases are degenerate on purpose (an output of zero size, a layer
that fits no buffer): the compiler must refuse those with one clear line naming the node.

Executors (run through the executor interface :mod:`generator.exec`), each compared bit for bit:

* ``golden``: the golden ISA simulator (:mod:`generator.exec.golden`) on the DDR image;
* ``ref``: the independent integer reference (:mod:`generator.ref.int_ref`), which derives every quantization
  parameter from the float weights and calibration ranges itself; compared with the parameters ``quantize.py``
  stored and with the golden simulator's DDR image on every region;
* ``csim``: the HLS kernel (:mod:`generator.backends.hls`) compiled with g++ (:mod:`generator.exec.csim`), one build
  per hardware configuration, programs fetched from DDR; the whole DDR image against the golden simulator's;
* ``rtl``: the SystemVerilog RTL under Verilator (:mod:`generator.exec.rtl`), one build per configuration; the
  whole DDR image against the golden simulator's.

In half the cases the hardware executors (``csim``, ``rtl``) run a variant of the program whose POSTs draw the
identity above the activation table's window at the instruction level (``id_above`` on and off, ``id_shift``
0..15, ``zp_id`` anywhere in its field; :func:`generator.eval.fuzz_space.identity_variant`), against the golden
simulator's run of that variant; ``ref`` checks the compiler's own program.

A case fails when an executor differs, or when anything raises other than a clean refusal of the compiler
(:class:`~generator.ir.graph.GraphError`, :class:`~generator.quant.quantize.QuantError`,
:class:`~generator.codegen.program.ScheduleError`). Every failure prints a one-line reproducer.
"""
from __future__ import annotations
from generator import ROOT_DIR, build_dir

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from generator.eval.fuzz_space import (ACTS, KINDS, MAC_BUDGET, QUANT_MODES, build_model, draw_case,  # noqa: F401
                                       identity_variant, mixed_bits)
from generator.spec.board import BOARDS_DIR, Board


def rtl_sim_tiny() -> dict:
    """The RTL tests' tiny configuration (:data:`generator.exec.rtl.TINY`), the base of the fuzzer's."""
    from generator.exec.rtl import TINY as base
    return dict(base)

ROOT = ROOT_DIR
EXECUTORS = ("golden", "ref", "csim", "rtl")
#: accelerator overrides of the tiny configurations: buffers small enough to force tiling, but a WBUF bank holds
#: one 8x8 kernel (64 words) and the PBUF every output channel of a 600-channel layer with a second output
TINY = dict(rtl_sim_tiny(), wbuf_bank_bytes=8192, pbuf_entries=1280)
#: hardware configurations the fuzzer draws from: name -> (board file, accelerator overrides)
CONFIGS = {
    "tiny": ("zcu19eg", TINY),
    "tiny-8x16": ("zcu19eg", dict(TINY, tm=16, wbuf_bank_bytes=16384)),
    "tiny-16x8": ("zcu19eg", dict(TINY, tn=16, ibuf_bank_bytes=6144, wbuf_bank_bytes=16384)),
    # Tm not a power of two: PBUF / TBUF records and WBUF elements at a power-of-two lane pitch, OBUF rows of 24
    "tiny-16x24": ("zcu19eg", dict(TINY, tn=16, tm=24, ibuf_bank_bytes=6144, wbuf_bank_bytes=49152)),
    # a 256-bit m_axi split over two 128-bit HP ports (rtl/axi_hp_split.sv; 32-byte beats: Tm >= 32)
    "tiny-16x32-2hp": ("zcu19eg", dict(TINY, tn=16, tm=32, ibuf_bank_bytes=6144, wbuf_bank_bytes=65536,
                                       axi_data_width_bits=256, hp_ports=2)),
    # the PE array double-pumped (rtl/pe_array_2x.sv on clk2x: four int8 / two int16 pixels per step, IBUF and
    # ACC copies; the HLS kernel runs the same programs single-pumped)
    "tiny-2x": ("zcu19eg", dict(TINY, pump=2)),
    # a 512-bit m_axi over four 128-bit HP ports (rtl/axi_hp_ports.sv: a tree of three splitters; the fetch takes two
    # instructions per beat)
    "tiny-16x32-4hp": ("zcu19eg", dict(TINY, tn=16, tm=32, ibuf_bank_bytes=6144, wbuf_bank_bytes=65536,
                                       axi_data_width_bits=512, hp_ports=4)),
    "zcu19eg": ("zcu19eg", {}),
    "zcu102": ("zcu102", {}),
}


class FuzzError(ValueError):
    """Bad fuzzer arguments (unknown executor or configuration)."""


def config_board(name: str, board: str | None = None) -> Board:
    """The Board of fuzz configuration ``name`` (:data:`CONFIGS`); ``board`` replaces its board file.
    Raises FuzzError for an unknown name."""
    if name not in CONFIGS:
        raise FuzzError(f"unknown fuzz configuration {name!r}; one of {', '.join(CONFIGS)}")
    bname, acc = CONFIGS[name]
    raw = yaml.safe_load((BOARDS_DIR / f"{board or bname}.yaml").read_text())
    raw["accelerator"].update(acc)
    return Board.model_validate(raw)


# ------------------------------------------------------------------------------------------- executors
@dataclass
class Outcome:
    """Result of one case: ``status`` "pass", "refused" or "fail"; ``detail`` one line; seconds per stage."""
    case: dict
    status: str
    detail: str = ""
    seconds: dict = field(default_factory=dict)

    def describe(self) -> str:
        """Short text of the case: kind, input shape, layers, quant mode, configuration."""
        c = self.case
        ls = []
        for L in c["layers"]:
            if L["op"] == "conv":
                t = f"conv{L['k']}s{L['s']}p{L['p']}->{L['oc']}{'/' + L['act']}"
                t += f"+pool{L['pool']}" if L.get("pool") else ""
                t += f"+up{L['up']}" if L.get("up") else ""
            elif L["op"] == "fc":
                t = f"fc->{L['oc']}/{L['act']}"
            else:
                t = L["op"] + (f"({L['what']})" if "what" in L else "")
            ls.append(t)
        return (f"{c['kind']} {'x'.join(map(str, c['in_shape'][1:]))} [{', '.join(ls)}] "
                f"{c['mode']}-{'pc' if c['per_channel'] else 'pt'} {c['config']} sat{c['saturate']:g}"
                + (" +id" if c.get("identity") is not None else "") + (" mixed" if c.get("mixed") is not None else "")
                + (f" pre{c['pre']['frame_w']}x{c['pre']['frame_h']}-{c['pre']['mode']}" if c.get("pre") else ""))


def compile_case(case: dict, board: str | None = None):
    """Build, calibrate (two random inputs), quantize and compile ``case``; returns (float graph, calibration
    ranges, QuantConfig, quantized graph, Program, the case's random generator after calibration; a case with
    ``mixed`` draws each layer's output precision, :func:`generator.eval.fuzz_space.mixed_bits`). Raises the
    compiler's refusals (GraphError, QuantError, ScheduleError)."""
    from generator import codegen
    from generator.frontend.onnx_loader import load_onnx
    from generator.ir import passes
    from generator.quant.quantize import QuantConfig, calibrate, quantize
    from generator.spec.hw import HwConfig

    brd = config_board(case["config"], board)
    cfg = QuantConfig.from_mode(case["mode"], case["per_channel"])
    hw = HwConfig.from_board(brd, cfg.bits)
    model = build_model(case)
    g = passes.run_all(load_onnx(model))
    pre = case.get("pre")
    if pre:    # the model's pixel handling, as an export's metadata states it
        g.metadata.update(input_resize=pre["mode"], input_format=pre["format"])
    shp = g.tensors[g.inputs[0]].shape
    rng = np.random.default_rng(case["model_seed"])
    span = 255.0 if pre and pre["format"] != "rgb01" else 1.0
    ranges = calibrate(g, [rng.random(shp).astype(np.float32) * span for _ in range(2)], progress=False)
    gq = quantize(g, ranges, cfg, {8: hw.at(8).acc_bits, 16: hw.at(16).acc_bits},
                  region_bits=mixed_bits(g, cfg.bits, case.get("mixed")))
    frame = (pre["frame_w"], pre["frame_h"]) if pre else None
    return g, ranges, cfg, gq, codegen.compile_program(gq, hw, pre=frame), rng


def pre_frame(pre: dict) -> tuple[np.ndarray, int]:
    """The camera frame of a PRE case (:func:`generator.eval.fuzz_space._pre_variant`): (uint8 [frame_h, frame_w, 3],
    its row pitch in bytes)."""
    img = np.random.default_rng(pre["seed"]).integers(0, 256, (pre["frame_h"], pre["frame_w"], 3), dtype=np.uint8)
    return img, 3 * pre["frame_w"] + pre["pitch_extra"]


def pre_reference_input(ref, g, pre: dict, img: np.ndarray) -> np.ndarray:
    """The integer input [3, H, W] the independent reference runs on for a PRE case: :func:`host.pre.pre_run` of the
    frame with the reference's own input scale and zero point (:class:`generator.ref.int_ref.IndependentRef`)."""
    from host.pre import pre_geometry, pre_quant, pre_run

    _, _, h, w = g.tensors[g.inputs[0]].shape
    reg = g.tensors[g.inputs[0]].region
    (s, zp), bits = ref.regions[reg], ref.rbits[reg]
    geo = pre_geometry(img.shape[1], img.shape[0], w, h, pre["mode"])
    q = pre_quant(s, zp, bits, pre["format"], "bgr" if pre["bgr"] else "rgb")
    return pre_run(img, geo, q).transpose(2, 0, 1).astype(np.int64)   # (img: the bytes in DDR, in the frame's order)


def _ddr_diff(run, gold: np.ndarray) -> str:
    """"" when the run of a program executor ended well with ``gold``'s DDR image, else one line saying how not."""
    diff = np.flatnonzero(run.ddr != gold)
    if not (run.timeout or run.status or diff.size):
        return ""
    return (f"{'timeout, ' if run.timeout else ''}status {run.status:#x}, {diff.size} DDR bytes differ"
            + (f", first at {int(diff[0]):#x}" if diff.size else ""))


class Fuzzer:
    """Runs cases on the named executors (through :mod:`generator.exec`). One C-simulation and one RTL build per
    configuration, made on first use under ``work``/csim-<config> and build/rtl_sim/fuzz-<config>.

    Args: executors: subset of :data:`EXECUTORS` ("golden" is always run: every other executor is compared
        with it); board: board file replacing each configuration's own (None: as in :data:`CONFIGS`);
        work: scratch folder.
    Raises FuzzError for an unknown executor.
    """

    def __init__(self, executors, board: str | None = None, work: Path | None = None):
        bad = [e for e in executors if e not in EXECUTORS]
        if bad:
            raise FuzzError(f"unknown executor(s) {bad}; choose from {', '.join(EXECUTORS)}")
        self.executors = ["golden"] + [e for e in EXECUTORS if e in executors and e != "golden"]
        self.board = board
        self.work = Path(work or build_dir("fuzz"))
        self._engines = {}

    def _engine(self, name: str, cfg: str):
        """The program executor ``name`` of configuration ``cfg``, made on first use."""
        from generator.exec import program_executor

        if (name, cfg) not in self._engines:
            tag = f"fuzz-{cfg}" + (f"-{self.board}" if self.board else "")
            self._engines[name, cfg] = program_executor(name, config_board(cfg, self.board),
                                                        self.work / f"csim-{cfg}", tag)
        return self._engines[name, cfg]

    def run_case(self, case: dict) -> Outcome:
        """Compile and run one case on every executor; never raises for a property of the case."""
        from generator.codegen.program import ScheduleError
        from generator.exec import run_frame, runtime
        from generator.ref.int_ref import IndependentRef, compare_ddr
        from generator.ir.graph import GraphError
        from generator.quant.quantize import QuantError

        sec, stage, t0 = {}, "compile", time.time()
        try:
            try:
                g, ranges, cfg, gq, prog, rng = compile_case(case, self.board)
            except (GraphError, QuantError, ScheduleError) as e:
                msg = str(e)
                if "\n" in msg or not msg:
                    return Outcome(case, "fail", f"refusal is not one line: {msg!r}", sec)
                return Outcome(case, "refused", msg, sec)
            if case["kind"] == "degenerate":
                return Outcome(case, "fail", "a zero-size output was compiled instead of refused", sec)
            sec["compile"] = time.time() - t0
            sat = case["saturate"]
            x = rng.random(g.tensors[g.inputs[0]].shape).astype(np.float32) * sat - (sat - 1) / 2
            ref = IndependentRef(g, ranges, cfg.bits, cfg.symmetric, cfg.per_channel,
                                 region_bits=gq.metadata["quant"].get("region_bits"))
            frame = None
            if case.get("pre"):     # a camera frame through PRE; the reference's input: host.pre.pre_run of it
                img, pitch = pre_frame(case["pre"])
                ddr, bases, frame = runtime.build_frame_ddr(prog, img, case["pre"]["bgr"], pitch)
                xq = pre_reference_input(ref, g, case["pre"], img)
            else:
                xq = ref.quantize_input(x)
                ddr, bases = runtime.build_ddr(prog, xq)
            sizes = dict(prog.layout.sizes)      # every access checked against its own base register's buffer
            # the hardware's program: the identity above the table's window drawn at the instruction level
            hw_prog = identity_variant(prog, case.get("identity")) if set(self.executors) & {"csim", "rtl"} else prog
            gold = hw_gold = None
            for stage in self.executors:
                t = time.time()
                if stage == "golden":
                    golden = self._engine("golden", case["config"])
                    run, _ = run_frame(golden, prog, ddr, bases, sizes, frame)
                    gold, bad = run.ddr, run.error
                    if hw_prog is not prog and not bad:
                        run, _ = run_frame(golden, hw_prog, ddr, bases, sizes, frame)
                        hw_gold, bad = run.ddr, run.error and f"identity variant: {run.error}"
                    hw_gold = gold if hw_gold is None else hw_gold
                elif stage == "ref":
                    bad = "; ".join((ref.check_params(gq) or compare_ddr(ref, ref.run(xq), prog, gold, bases))[:3])
                else:
                    opts = {"case": "fuzz-case", "timeout_cycles": 20_000_000} if stage == "rtl" else {}
                    run, _ = run_frame(self._engine(stage, case["config"]), hw_prog, ddr, bases, sizes, frame, **opts)
                    bad = _ddr_diff(run, hw_gold)
                sec[stage] = time.time() - t
                if bad:
                    return Outcome(case, "fail", f"{stage}: {bad}", sec)
        except Exception as e:   # noqa: BLE001 - anything else is a defect the fuzzer reports
            import traceback
            tb = traceback.extract_tb(e.__traceback__)[-1]
            return Outcome(case, "fail", f"{stage}: {type(e).__name__}: {e} ({Path(tb.filename).name}:{tb.lineno})"
                           .replace("\n", " "), sec)
        return Outcome(case, "pass", "", sec)


def reproducer(case: dict, executors, configs, board=None) -> str:
    """The one-line command that re-runs ``case`` alone (same executors and configurations: both enter the draw)."""
    b = f" --board {board}" if board else ""
    return (f"invoke fuzz --seed {case['seed']} --case {case['index']} --executors {','.join(executors)} "
            f"--configs {','.join(configs)}{b}")


def fuzz(cases: int, seed: int, executors=("golden", "ref"), configs=None, board: str | None = None,
         only: int | None = None, work: Path | None = None, progress: bool = True, log=print) -> list[Outcome]:
    """Draw and run ``cases`` cases of ``seed`` (or only case ``only``) on ``executors``; ``log`` gets one line
    per failure (with its reproducer) and the summary; the last line is ``N passed, M failed``.

    Args: configs: hardware configurations to draw from (default: every configuration of :data:`CONFIGS` when
        only golden/ref run, the tiny ones when csim or rtl runs, without the two- and four-HP-port ones when csim
        runs: the HLS kernel has one m_axi per module); board: board file for every configuration.
    Returns: the outcomes. Raises FuzzError for an unknown executor or configuration.
    """
    executors = list(executors)
    if configs is None:
        two_ports = {c for c, (_, acc) in CONFIGS.items() if acc.get("hp_ports", 1) > 1}
        configs = list(CONFIGS) if set(executors) <= {"golden", "ref"} else [
            c for c in CONFIGS if c.startswith("tiny") and not ("csim" in executors and c in two_ports)]
    for c in configs:
        config_board(c, board)
    fz = Fuzzer(executors, board, work)
    idx = [only] if only is not None else list(range(cases))
    out = []
    t0 = time.time()
    from tqdm import tqdm
    for k in tqdm(idx, desc="fuzz", unit="case", disable=not progress):
        case = draw_case(seed, k, configs, fz.executors)
        o = fz.run_case(case)
        out.append(o)
        if o.status == "fail":
            log(f"FAIL case {k}: {o.describe()}: {o.detail}\n"
                f"    reproduce: {reproducer(case, fz.executors, configs, board)}")
    ref = [o for o in out if o.status == "refused"]
    if ref:
        log(f"{len(ref)} case(s) refused cleanly by the compiler:")
        for o in ref:
            log(f"  case {o.case['index']}: {o.detail}")
    n_fail = sum(o.status == "fail" for o in out)
    log(f"executors {','.join(fz.executors)}, configurations {','.join(configs)}, seed {seed}: "
        f"{time.time() - t0:.1f} s")
    log(f"{len(out) - n_fail} passed, {n_fail} failed")
    return out


def outcomes_json(outs: list[Outcome]) -> str:
    """The outcomes as JSON (case, status, detail, seconds per stage)."""
    return json.dumps([dict(case=o.case, status=o.status, detail=o.detail, seconds=o.seconds) for o in outs], indent=1)
