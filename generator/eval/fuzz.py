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
* ``ref``: the independent integer reference (:mod:`generator.exec.int_ref`), which derives every quantization
  parameter from the float weights and calibration ranges itself; compared with the parameters ``quantize.py``
  stored and with the golden simulator's DDR image on every region;
* ``csim``: the HLS kernel (:mod:`generator.backends.hls`) compiled with g++ (:mod:`generator.exec.csim`), one build
  per hardware configuration, programs fetched from DDR; the whole DDR image against the golden simulator's;
* ``rtl``: the SystemVerilog RTL under Verilator (:mod:`generator.exec.rtl`), one build per configuration; the
  whole DDR image against the golden simulator's.

A case fails when an executor differs, or when anything raises other than a clean refusal of the compiler
(:class:`~generator.ir.graph.GraphError`, :class:`~generator.quant.quantize.QuantError`,
:class:`~generator.codegen.program.ScheduleError`). Every failure prints a one-line reproducer.
"""
from __future__ import annotations
from generator import ROOT_DIR

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

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
    "zcu19eg": ("zcu19eg", {}),
    "zcu102": ("zcu102", {}),
}
QUANT_MODES = [("int8-asym", True), ("int8-asym", False), ("int8-sym", True), ("int8-sym", False),
               ("int16-sym", True), ("int16-sym", False), ("int16-asym", True), ("int16-asym", False)]
#: multiply-accumulates allowed per case, by the slowest executor asked for
MAC_BUDGET = {"golden": 40_000_000, "ref": 40_000_000, "csim": 6_000_000, "rtl": 1_500_000}
KINDS = ["conv", "conv", "conv", "chain", "concat", "split", "standalone", "fc", "degenerate"]


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


# ------------------------------------------------------------------------------------------- case drawing
def _logint(rng, lo, hi):
    """An integer in [lo, hi], log-uniform (small values as likely as large ones per octave)."""
    return int(min(hi, max(lo, round(float(np.exp(rng.uniform(np.log(lo), np.log(hi + 1)))) - 0.5))))


#: convolution activations drawn: leaky, relu, linear, and POST-table ones as exported (modelgen.Builder.act)
ACTS = ["leaky", "relu", "linear", "silu", "Sigmoid", "mish", "hardswish_mul", "Tanh", "gelu_erf"]


def _act(b, y, act):
    return b.leaky(y) if act == "leaky" else b.relu(y) if act == "relu" else y if act == "linear" else b.act(y, act)


def _conv_spec(rng, H, W, allow_pool=True, allow_up=True):
    k = int(rng.choice([1, 3, 5, 7], p=[0.3, 0.4, 0.15, 0.15]))
    s = int(rng.choice([1, 2], p=[0.7, 0.3]))
    p = int(rng.integers(0, k // 2 + 1))
    if k > 1 and rng.random() < 0.25:                  # asymmetric: top, left, bottom, right (SAME_UPPER & co.)
        p = [int(v) for v in rng.integers(0, k // 2 + 1, 4)]
    pt, pl, pb, pr = p if isinstance(p, list) else [p] * 4
    act = str(rng.choice(ACTS, p=[0.22, 0.15, 0.2, 0.12, 0.06, 0.06, 0.06, 0.06, 0.07]))
    spec = dict(op="conv", oc=_logint(rng, 1, 600), k=k, s=s, p=p, act=act,
                wscale=float(rng.choice([1.0, 1.0, 3.0])), zero_oc=bool(rng.random() < 0.1))
    OH, OW = (H + pt + pb - k) // s + 1, (W + pl + pr - k) // s + 1
    if allow_pool and rng.random() < 0.35 and min(OH, OW) >= 3:
        pk = int(rng.choice([2, 3]))
        ps = int(rng.choice([1, 2]))
        pe = int(rng.choice([0, pk - 1]))
        spec["pool"] = [pk, ps, pe]
        OH, OW = (OH + pe - pk) // ps + 1, (OW + pe - pk) // ps + 1
    if allow_up and rng.random() < 0.2:
        spec["up"] = int(rng.choice([2, 4]))
        OH, OW = OH * spec["up"], OW * spec["up"]
    return spec, OH, OW


def draw_case(seed: int, index: int, configs: list[str], executors: list[str]) -> dict:
    """The case ``index`` of ``seed`` (a JSON-able dict): graph kind, input shape, layers, quantization mode,
    hardware configuration, input saturation factor. Depends only on (seed, index, configs, executors)."""
    rng = np.random.default_rng([seed, index])
    budget = min(MAC_BUDGET[e] for e in executors)
    kind = str(rng.choice(KINDS))
    mode, pc = QUANT_MODES[int(rng.integers(len(QUANT_MODES)))]
    cfg = str(rng.choice(configs))
    for _ in range(200):
        H, W = _logint(rng, 1, 64), _logint(rng, 1, 64)
        ic = _logint(rng, 1, 600)
        layers = []
        if kind == "degenerate":
            k = int(rng.choice([3, 5, 7]))
            H = W = int(rng.integers(1, k - 1))
            layers.append(dict(op="conv", oc=_logint(rng, 1, 64), k=k, s=1, p=0, act="leaky", wscale=1.0,
                               zero_oc=False))
        elif kind in ("conv", "chain"):
            h, w = H, W
            for i in range(1 if kind == "conv" else int(rng.integers(2, 4))):
                spec, h, w = _conv_spec(rng, h, w, allow_up=kind == "conv")
                if h < 1 or w < 1:
                    break
                layers.append(spec)
            else:
                if h * w > 64 * 64 * 4:
                    continue
        elif kind == "concat":
            a, h, w = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            a.update(s=1, p=a["k"] // 2)
            b = dict(op="conv", oc=_logint(rng, 1, 300), k=int(rng.choice([1, 3])), s=1, act="leaky",
                     wscale=1.0, zero_oc=False)
            b["p"] = b["k"] // 2
            layers = [a, b, dict(op="concat", pool=bool(rng.random() < 0.5) and min(H, W) >= 2)]
        elif kind == "split":
            a = dict(op="conv", oc=2 * _logint(rng, 1, 300), k=1, s=1, p=0, act="leaky", wscale=1.0, zero_oc=False)
            b, _, _ = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            layers = [a, dict(op="split", half=int(rng.integers(0, 2))), b]
        elif kind == "standalone":
            a, h, w = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            a.update(s=1, p=a["k"] // 2)
            c = dict(op="conv", oc=_logint(rng, 1, 200), k=3, s=1, p=1, act="leaky", wscale=1.0, zero_oc=False)
            tail = str(rng.choice(["pool", "relu", "leaky", "up"]))
            pk = int(rng.choice([2, 3, 5, 9], p=[0.35, 0.35, 0.2, 0.1]))
            ps = 1 if pk == 9 else int(rng.choice([1, 2]))
            pads = [int(v) for v in rng.integers(0, pk, 4)] if rng.random() < 0.5 else [0, 0, 0, 0]
            if pk == 9:   # split into a chain: every side's padding below the links' windows
                pads = [min(v, 4) for v in pads]
            layers = [a, c, dict(op="standalone", what=tail, pk=pk, ps=ps, up=int(rng.choice([2, 4])), pads=pads,
                                 ceil=int(ps == 2 and rng.random() < 0.5))]
            if tail == "pool" and min(H + pads[0] + pads[2], W + pads[1] + pads[3]) < pk:
                continue
            for n, p0, p1 in ((H, pads[0], pads[2]), (W, pads[1], pads[3])):   # no ceil_mode where a last window
                layers[2]["ceil"] *= -(-(n + p0 + p1 - pk) // ps) * ps < n + p0  # starts in the padding (ONNX disagrees)
        elif kind == "fc":
            H = W = _logint(rng, 1, 8)     # square: a fully-connected layer becomes an H x W convolution
            ic = _logint(rng, 1, 128)
            layers = [dict(op="fc", oc=_logint(rng, 1, 600), act=str(rng.choice(["linear", "relu", "leaky"])))]
            if rng.random() < 0.5:
                layers.append(dict(op="fc", oc=_logint(rng, 1, 100), act="linear"))
        if not layers:
            continue
        case = dict(seed=seed, index=index, kind=kind, in_shape=[1, ic, H, W], layers=layers, mode=mode,
                    per_channel=pc, config=cfg, saturate=float(rng.choice([1.0, 1.0, 2.0, 4.0])),
                    model_seed=int(rng.integers(1 << 30)))
        if kind == "degenerate" or 0 <= _macs(case) <= budget:
            return case
    return case


def _macs(case) -> int:
    """Multiply-accumulates of the case's convolutions and FC layers (negative when a tensor would be empty)."""
    return build_model(case, shapes_only=True)


def build_model(case: dict, shapes_only: bool = False):
    """The ONNX model of ``case`` (outputs named in the model). With ``shapes_only``: the case's MAC count."""
    from generator.frontend.modelgen import Builder

    b = Builder(case["in_shape"], seed=case["model_seed"])
    macs = 0

    def conv(x, L):
        nonlocal macs
        y = b.conv(x, L["oc"], k=L["k"], s=L["s"], p=L["p"], scale=L["wscale"] / np.sqrt(b.shapes[x][1] * L["k"] ** 2))
        _, ic, _, _ = b.shapes[x]
        _, oc, oh, ow = b.shapes[y]
        if min(oh, ow) <= 0:
            macs = -1 << 62          # an empty tensor: only the degenerate kind draws these
        macs += max(oh, 0) * max(ow, 0) * oc * ic * L["k"] ** 2
        if L.get("zero_oc") and not shapes_only:
            w = b.inits[-2] if len(b.inits) >= 2 else None
            if w is not None:
                from onnx import numpy_helper as nh
                arr = nh.to_array(w).copy()
                arr[0] = 0
                b.inits[-2] = nh.from_array(arr, w.name)
        y = _act(b, y, L["act"])
        if L.get("pool"):
            pk, ps, pe = L["pool"]
            y = b.maxpool(y, k=pk, s=ps, pad_end=pe)
        if L.get("up"):
            y = b.upsample(y, L["up"])
        return y

    outs = []
    cur = "x"
    layers = case["layers"]
    if case["kind"] in ("conv", "chain", "degenerate"):
        for L in layers:
            cur = conv(cur, L)
        outs = [cur]
    elif case["kind"] == "concat":
        a = conv("x", layers[0])
        c = conv(a, layers[1])
        cat = b.concat(c, a)
        outs = [b.maxpool(cat) if layers[2]["pool"] else cat]
    elif case["kind"] == "split":
        a = conv("x", layers[0])
        parts = b.split(a)
        outs = [conv(parts[layers[1]["half"]], layers[2])]
    elif case["kind"] == "standalone":
        a = conv("x", layers[0])
        c = conv(a, layers[1])
        cat = b.concat(a, c)
        t = layers[2]
        if t["what"] == "pool":   # padding -inf on any side (SPP, auto_pad, ceil_mode)
            y = b.maxpool(cat, k=t["pk"], s=t["ps"], pads=t.get("pads"), ceil_mode=t.get("ceil", 0))
        elif t["what"] == "relu":
            y = b.relu(cat)
        elif t["what"] == "leaky":
            y = b.leaky(cat)
        else:
            y = b.upsample(cat, t["up"])
        outs = [y, c]
    elif case["kind"] == "fc":
        y = "x"
        for L in layers:
            k = int(np.prod(b.shapes[y][1:]))
            macs += k * L["oc"]
            y = b.fc(y, L["oc"]) if len(b.shapes[y]) == 4 else b.fc_next(y, L["oc"])
            y = _act(b, y, L["act"])
        outs = [y]
    if shapes_only:
        return macs
    return b.model(outs, check=case["kind"] != "degenerate")


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
                f"{c['mode']}-{'pc' if c['per_channel'] else 'pt'} {c['config']} sat{c['saturate']:g}")


def compile_case(case: dict, board: str | None = None):
    """Build, calibrate (two random inputs), quantize and compile ``case``; returns (float graph, calibration
    ranges, QuantConfig, quantized graph, Program, the case's random generator after calibration). Raises the
    compiler's refusals (GraphError, QuantError, ScheduleError)."""
    from generator import codegen
    from generator.frontend.onnx_loader import load_onnx
    from generator.ir import passes
    from generator.quant.quantize import QuantConfig, calibrate, quantize
    from generator.spec.timing import HwConfig

    brd = config_board(case["config"], board)
    cfg = QuantConfig.from_mode(case["mode"], case["per_channel"])
    hw = HwConfig.from_board(brd, cfg.bits)
    model = build_model(case)
    g = passes.run_all(load_onnx(model))
    shp = g.tensors[g.inputs[0]].shape
    rng = np.random.default_rng(case["model_seed"])
    ranges = calibrate(g, [rng.random(shp).astype(np.float32) for _ in range(2)], progress=False)
    gq = quantize(g, ranges, cfg, hw.acc_bits)
    return g, ranges, cfg, gq, codegen.compile_program(gq, hw), rng


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
        self.work = Path(work or ROOT / "build" / "fuzz")
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
        from generator.exec import runtime
        from generator.exec.int_ref import IndependentRef, compare_ddr
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
            ref = IndependentRef(g, ranges, cfg.bits, cfg.symmetric, cfg.per_channel)
            xq = ref.quantize_input(x)
            ddr, bases = runtime.build_ddr(prog, xq)
            sizes = dict(prog.layout.sizes)      # every access checked against its own base register's buffer
            gold = None
            for stage in self.executors:
                t = time.time()
                if stage == "golden":
                    run = self._engine("golden", case["config"]).run(prog, ddr, bases, sizes)
                    gold, bad = run.ddr, run.error
                elif stage == "ref":
                    bad = "; ".join((ref.check_params(gq) or compare_ddr(ref, ref.run(xq), prog, gold, bases))[:3])
                else:
                    opts = {"case": "fuzz-case", "timeout_cycles": 20_000_000} if stage == "rtl" else {}
                    bad = _ddr_diff(self._engine(stage, case["config"]).run(prog, ddr, bases, sizes, **opts), gold)
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
        only golden/ref run, the tiny ones when csim or rtl runs); board: board file for every configuration.
    Returns: the outcomes. Raises FuzzError for an unknown executor or configuration.
    """
    executors = list(executors)
    if configs is None:
        configs = list(CONFIGS) if set(executors) <= {"golden", "ref"} else ["tiny", "tiny-8x16", "tiny-16x8"]
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
