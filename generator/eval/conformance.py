"""Conformance against the ONNX backend node tests that ship inside the ``onnx`` wheel.

Each folder ``onnx/backend/test/data/node/<test>/`` holds ``model.onnx`` and ``test_data_set_0/input_*.pb`` /
``output_*.pb``. :func:`select_tests` picks every folder whose model uses only operators this compiler knows
(:data:`KNOWN_OPS`: the loader's ``SUPPORTED`` set plus ops it leaves to a host tail or refuses: Add, Mul,
Sigmoid, Reshape). :func:`run_test` then either

* compiles the model for ``zcu19eg`` in ``int16-sym`` (per-channel weights), calibrating on the test's own input
  (the input range comes from that data, see :func:`generator.quant.quantize.calibrate`), runs the program in the
  golden ISA simulator, dequantizes the outputs, runs the host tail (:func:`host.tail.run_tail`) if the model has
  one, and compares with the expected outputs: **pass** when every output has SQNR >= :data:`SQNR_MIN_DB` dB
  and a max abs error <= :data:`MAX_ERR_REL` x the expected output's max |value| (both bounds stated in the
  table; int16 with the 2x calibration headroom leaves ~15 bits of resolution); else **FAIL** with the numbers;
* or **refused**: the compiler raised one of :data:`REFUSALS` (GraphError, QuantError, ScheduleError,
  HostTailError) before any simulation; the reason is the exception's message on one line, which names the node.

Any other exception, a refusal raised after simulation started, or a result outside tolerance is a **FAIL**.

Graph inputs other than the first that feed a weight / parameter slot (Conv W and B, Gemm B and C,
BatchNormalization statistics, Reshape shape, Slice starts/ends/axes/steps, Split sizes, Resize roi/scales/sizes,
Upsample scales) are the test's fixed data: the runner bakes them into initializers (this compiler takes weights
at compile time). Every other extra input stays a graph input and is refused by the loader.

Run ``python -m generator.eval.conformance`` for the table and the counts (``-v`` prints every refusal reason).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from host.tail import HostTailError, run_tail

from generator import codegen

from generator.ir import passes

from generator.exec import run_golden
from generator.spec.board import load_board
from generator.codegen import ScheduleError
from generator.frontend.onnx_loader import SUPPORTED, load_onnx
from generator.spec.hw import HwConfig
from generator.ir.graph import GraphError
from generator.quant.quantize import QuantConfig, QuantError, calibrate, quantize

NODE_DIR = Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"
KNOWN_OPS = set(SUPPORTED) | {"Add", "Mul", "Sigmoid", "Reshape"}
REFUSALS = (GraphError, QuantError, ScheduleError, HostTailError)
SQNR_MIN_DB = 40.0
MAX_ERR_REL = 0.01
BOARD, QUANT = "zcu19eg", "int16-sym"
PARAM_SLOTS = {"Conv": {1, 2}, "BatchNormalization": {1, 2, 3, 4}, "Gemm": {1, 2}, "MatMul": {1},
               "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Split": {1}, "Resize": {1, 2, 3}, "Upsample": {1}}


@dataclass
class Outcome:
    """One test's result. status: "pass", "refused" or "FAIL"; detail: the refusal message, the failure, or
    the metrics of a pass; ops: the model's op types; sqnr_db / err_rel: worst output (passes and FAILs that
    got that far)."""
    name: str
    status: str
    detail: str
    ops: list = field(default_factory=list)
    sqnr_db: float | None = None
    err_rel: float | None = None
    seconds: float = 0.0


def select_tests(node_dir: Path = NODE_DIR) -> list[Path]:
    """Node-test folders whose model's op types are all in :data:`KNOWN_OPS` (function expansions
    ``*_expanded*`` included when they qualify). Sorted by name."""
    out = []
    for d in sorted(Path(node_dir).iterdir()):
        m = d / "model.onnx"
        if not m.is_file() or not (d / "test_data_set_0").is_dir():
            continue
        ops = {n.op_type for n in onnx.load(str(m), load_external_data=False).graph.node}
        if ops and ops <= KNOWN_OPS:
            out.append(d)
    return out


def _read_pb(path: Path, vi) -> np.ndarray | None:
    """A test-data file as an array when the model's value info says it is a tensor; None otherwise
    (sequence / optional / map data: the loader refuses those inputs)."""
    if not vi.type.HasField("tensor_type"):
        return None
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def load_case(folder: Path):
    """(model, {input name: array or None}, {output name: array or None}) of a node-test folder."""
    model = onnx.load(str(folder / "model.onnx"))
    ds = folder / "test_data_set_0"
    init = {i.name for i in model.graph.initializer}
    ins = [i for i in model.graph.input if i.name not in init]
    xs = {vi.name: _read_pb(ds / f"input_{k}.pb", vi) for k, vi in enumerate(ins) if (ds / f"input_{k}.pb").is_file()}
    ys = {vi.name: _read_pb(ds / f"output_{k}.pb", vi) for k, vi in enumerate(model.graph.output)
          if (ds / f"output_{k}.pb").is_file()}
    return model, xs, ys


def bake_parameters(model: onnx.ModelProto, xs: dict) -> tuple[onnx.ModelProto, dict]:
    """Move graph inputs that only feed weight / parameter slots (:data:`PARAM_SLOTS`) into initializers with
    the test's values. Returns (new model, remaining inputs)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    slots: dict[str, list] = {}
    for n in g.node:
        for k, i in enumerate(n.input):
            if i:
                slots.setdefault(i, []).append(k in PARAM_SLOTS.get(n.op_type, ()))
    baked = [i for i, v in xs.items() if v is not None and slots.get(i) and all(slots[i])
             and i not in {o.name for o in g.output}]
    for name in baked:
        g.initializer.append(numpy_helper.from_array(xs[name], name))
    keep = [vi for vi in g.input if vi.name not in baked]
    del g.input[:]
    g.input.extend(keep)
    return m, {k: v for k, v in xs.items() if k not in baked}


def _metrics(ref: np.ndarray, got: np.ndarray) -> tuple[float, float]:
    ref, got = np.asarray(ref, np.float64).ravel(), np.asarray(got, np.float64).ravel()
    err = ref - got
    sig, noise = float(np.sum(ref ** 2)), float(np.sum(err ** 2))
    sqnr = float("inf") if noise == 0 else (10 * np.log10(sig / noise) if sig > 0 else -float("inf"))
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    rel = float(np.abs(err).max() / scale) if scale > 0 else (0.0 if not err.size or not np.abs(err).max() else 1.0)
    return sqnr, rel


def compile_case(model: onnx.ModelProto, x: np.ndarray, board: str = BOARD, quant: str = QUANT):
    """Loader, passes, calibration on ``x`` (float32 [1, C, H, W]), quantization and program.
    Returns (quantized graph, program). Raises the refusals of :data:`REFUSALS`."""
    cfg = QuantConfig.from_mode(quant, per_channel=True)
    hw = HwConfig.from_board(load_board(board), cfg.bits)
    g = passes.run_all(load_onnx(model))
    inp = g.tensors[g.inputs[0]]
    if tuple(np.shape(x)) != tuple(inp.shape):
        raise GraphError(f"graph input {inp.name!r}: test data has shape {list(np.shape(x))}, the model declares "
                         f"{list(inp.shape)}")
    if not np.all(np.isfinite(x)):
        raise QuantError(f"graph input {inp.name!r}: calibration data has non-finite values")
    ranges = calibrate(g, [np.asarray(x, np.float32)], progress=False)
    gq = quantize(g, ranges, cfg, hw.acc_bits)
    return gq, codegen.compile_program(gq, hw)


def run_compiled(gq, prog, x: np.ndarray) -> dict:
    """Quantize ``x``, run the golden simulator, dequantize the outputs and run the host tail.
    Returns ``{tensor name: float array}`` (accelerator outputs as [1, C, H, W] plus every host-tail tensor)."""
    t = gq.tensors[gq.inputs[0]]
    q = QuantConfig(bits=int(t.dtype[3:]))
    xq = np.clip(np.floor(np.asarray(x, np.float64)[0] / t.scale + 0.5) + t.zero_point, q.qmin, q.qmax)
    outs, _, _, _ = run_golden(prog, gq, xq.astype(np.int64))
    return host_outputs(gq, outs, x)


def host_outputs(gq, outs: dict, x: np.ndarray) -> dict:
    """The accelerator outputs ``outs`` ({name: int [C, H, W]}) dequantized (float32 [1, C, H, W], reshaped to
    the ONNX shapes the host tail reads) and, if the model has a host tail, every tensor it computes
    (:func:`host.tail.run_tail`, with ``x``, float32 [1, C, H, W], as the graph input). Raises HostTailError."""
    vals = {}
    for o, v in outs.items():
        to = gq.tensors[o]
        vals[o] = ((v.astype(np.float64) - to.zero_point) * to.deq_scale).astype(np.float32)[None]
    tail = gq.metadata.get("host_tail")
    if tail:
        for k, shp in gq.metadata.get("host_tail_input_shapes", {}).items():
            if k in vals and vals[k].size == int(np.prod(shp)):
                vals[k] = vals[k].reshape(shp)
        vals = run_tail(tail, gq.metadata.get("host_tail_consts", {}),
                        {**vals, gq.inputs[0]: np.asarray(x, np.float32)})
    return vals


def run_test(folder: Path, board: str = BOARD, quant: str = QUANT) -> Outcome:
    """Run one node test (see the module docstring). Never raises for a model problem: the outcome says."""
    t0 = time.time()
    folder = Path(folder)
    name = folder.name
    stage = "load"
    ops: list = []
    try:
        model, xs, ys = load_case(folder)
        ops = sorted({n.op_type for n in model.graph.node})
        model, xs = bake_parameters(model, xs)
        stage = "compile"
        x = next(iter(xs.values()), None) if len(xs) == 1 else None
        if x is None:
            # the loader names the inputs and their readers (several inputs, or a non-tensor input)
            load_onnx(model)
            raise GraphError(f"model has {len(xs)} data inputs; expected one float32 tensor")
        gq, prog = compile_case(model, x, board, quant)
        stage = "simulate"
        vals = run_compiled(gq, prog, x)
    except REFUSALS as e:
        msg = " ".join(str(e).split()) or type(e).__name__          # (multi-line listings on one line)
        if stage == "simulate":
            return Outcome(name, "FAIL", f"{type(e).__name__} after simulation started: {msg}", ops,
                           seconds=time.time() - t0)
        return Outcome(name, "refused", f"{type(e).__name__}: {msg}", ops, seconds=time.time() - t0)
    except Exception as e:  # noqa: BLE001 - any other exception is a crash, reported as a failure
        return Outcome(name, "FAIL", f"crash in {stage}: {type(e).__name__}: {e}", ops, seconds=time.time() - t0)
    worst_s, worst_r, bad = float("inf"), 0.0, []
    for o, ref in ys.items():
        if o not in vals:
            bad.append(f"output {o!r} not produced")
            continue
        got = vals[o]
        if got.size != ref.size:
            bad.append(f"output {o!r}: {got.size} values, expected {ref.size} ({list(ref.shape)})")
            continue
        s, r = _metrics(ref, got.reshape(ref.shape))
        worst_s, worst_r = min(worst_s, s), max(worst_r, r)
        if not (s >= SQNR_MIN_DB and r <= MAX_ERR_REL):
            bad.append(f"output {o!r}: SQNR {s:.1f} dB, max abs error {r:.2%} of max |expected|")
    dt = time.time() - t0
    if bad:
        return Outcome(name, "FAIL", "; ".join(bad), ops, worst_s, worst_r, dt)
    return Outcome(name, "pass", f"SQNR {worst_s:.1f} dB, max abs error {worst_r:.3%} of max |expected|", ops,
                   worst_s, worst_r, dt)


def run_all(node_dir: Path = NODE_DIR, board: str = BOARD, quant: str = QUANT) -> list[Outcome]:
    """:func:`run_test` over :func:`select_tests`."""
    return [run_test(d, board, quant) for d in select_tests(node_dir)]


def reason_group(detail: str) -> str:
    """A refusal message reduced to its kind, for grouping: the exception type and the reason with node names,
    tensor names, numbers, listings and parenthesized details dropped (the op type is kept)."""
    import re
    etype, _, s = detail.partition(": ")
    s = s.split(";")[0]
    s = re.sub(r"\d+ unsupported ONNX node\(s\)( in the host-side tail)?, by op type: (.*)",
               lambda m: "unsupported op " + ", ".join(sorted(set(
                   op + (f" - {why}" if why else "")
                   for op, why in re.findall(r"(\w+) x \d+(?: \(((?:[^()]|\([^()]*\))*)\))?:", m.group(2)))))
               + (" in the host tail" if m.group(1) else ""), s)
    s = re.sub(r"node \S+ \((\w+)\)", r"\1", s)
    s = re.sub(r"element type \w+", "element type other than float32", s)
    prev = None
    while prev != s:   # drop parenthesized details, innermost first
        prev, s = s, re.sub(r"\s*\([^()]*\)", "", s)
    s = re.sub(r"'[^']*'", "'…'", s)
    s = re.sub(r"\[[^\]]*\]", "[…]", s)
    s = re.sub(r"\b\d+\b", "N", s)
    s = re.sub(r"=\w+", "=…", s)
    return f"{etype}: {s.strip()}"


def format_table(res: list[Outcome], verbose: bool = False) -> str:
    """The per-test table, counts, and refusals grouped by reason."""
    from collections import Counter, defaultdict

    w = max((len(r.name) for r in res), default=10)
    lines = [f"{'test':<{w}}  {'status':<8} detail", "-" * (w + 60)]
    for r in res:
        d = r.detail if verbose or r.status != "refused" else r.detail[:110]
        lines.append(f"{r.name:<{w}}  {r.status:<8} {d}")
    c = Counter(r.status for r in res)
    lines.append("")
    lines.append(f"{len(res)} node tests: {c['pass']} pass, {c['refused']} refused, {c['FAIL']} FAIL "
                 f"({BOARD}, {QUANT}; pass = SQNR >= {SQNR_MIN_DB:.0f} dB and max abs error <= "
                 f"{MAX_ERR_REL:.0%} of max |expected|)")
    groups = defaultdict(list)
    for r in res:
        if r.status == "refused":
            groups[reason_group(r.detail)].append(r.name)
    lines.append("refusals by reason:")
    for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(v):>3}  {k}")
    return "\n".join(lines)


def main(argv=None) -> int:
    """``python -m generator.eval.conformance [-v] [TEST_NAME_SUBSTRING ...]``: table and counts; exit 1 on a FAIL."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv
    pats = [a for a in argv if a != "-v"]
    t0 = time.time()
    dirs = [d for d in select_tests() if not pats or any(p in d.name for p in pats)]
    res = [run_test(d) for d in dirs]
    print(format_table(res, verbose))
    print(f"ran in {time.time() - t0:.1f} s")
    return 1 if any(r.status == "FAIL" for r in res) else 0


if __name__ == "__main__":
    sys.exit(main())
