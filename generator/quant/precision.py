"""Per-layer mixed precision: which layer outputs are int16 and which int8 (issue 43).

The accelerator runs each instruction at its own precision (:mod:`generator.spec.isa`, the ``prec`` fields): a layer
computes in its input region's precision (int8: two multiplies per DSP48E2, int16: one) and writes its output
region in that region's precision, the requantization between precisions at a layer boundary being POST's ordinary
requantization onto the output's grid. So precision is a property of a DDR *region*, chosen here per layer output:

* a region written by several layers (a concatenation) takes the widest precision its writers ask for;
* every output of a layer (its extra pooled outputs) shares one precision, and so do both factors of an element-wise
  product (``emul``: both are read into one IBUF word by LOADs of one precision);
* the graph input keeps the base precision (the host quantizes the image: int8-asym holds 8-bit pixels exactly).

A *precision spec* (the ``--precision`` option) is a comma-separated list of items:

* ``int8`` / ``int16``: every layer's output in that precision (the default: the quantization mode's);
* ``<glob>=int8`` / ``<glob>=int16``: the layers whose names match the shell pattern (``fnmatch``; later items win);
* ``auto`` or ``auto:<dB>``: int16 where int8 costs too much, by the sensitivity analysis of
  :func:`generator.quant.auto_precision.choose` (the lowest per-layer SQNR target, default :data:`AUTO_TARGET_DB`),
  before the explicit overrides.

TensorRT and OpenVINO choose per-layer precision the same way (a per-layer sensitivity on calibration data); the
DPU runs one precision.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.quant.quantize import QuantError

#: the lowest per-layer SQNR (dB, fake-quantized against float on the calibration images) ``auto`` aims for
AUTO_TARGET_DB = 25.0


@dataclass(frozen=True)
class PrecisionSpec:
    """A parsed ``--precision`` spec (module docstring): ``default`` bits of every layer output (None: the
    quantization mode's), ``auto`` (the sensitivity analysis chooses), ``target_db`` (its per-layer SQNR target,
    dB), ``overrides`` ((glob, bits), ...) applied in order after it."""
    default: int | None = None
    auto: bool = False
    target_db: float = AUTO_TARGET_DB
    overrides: tuple = ()

    @property
    def uniform(self) -> bool:
        """True when the spec asks for nothing beyond one precision everywhere."""
        return not self.auto and not self.overrides

    @property
    def text(self) -> str:
        """The canonical spec text (for cache keys and reports); ``""`` for the default."""
        items = ([f"int{self.default}"] if self.default else []) + (
            [f"auto:{self.target_db:g}"] if self.auto else []) + [f"{gl}=int{b}" for gl, b in self.overrides]
        return ",".join(items)


def _bits(word: str, item: str) -> int:
    if word not in ("int8", "int16"):
        raise QuantError(f"--precision item {item!r}: {word!r} is not int8 or int16")
    return int(word[3:])


def parse_precision(spec: str | None) -> PrecisionSpec:
    """Parse a ``--precision`` spec (module docstring; None or "" for the default). Raises QuantError naming the
    item that is not ``auto[:dB]``, ``int8``, ``int16`` or ``<glob>=int8|int16``."""
    default, auto, target, over = None, False, AUTO_TARGET_DB, []
    for item in [s.strip() for s in (spec or "").split(",") if s.strip()]:
        if item == "auto" or item.startswith("auto:"):
            auto = True
            if ":" in item:
                try:
                    target = float(item.split(":", 1)[1])
                except ValueError:
                    raise QuantError(f"--precision item {item!r}: the target after 'auto:' is not a number of "
                                     f"dB") from None
                if not 0 < target < 200:
                    raise QuantError(f"--precision item {item!r}: the SQNR target must be in (0, 200) dB")
        elif "=" in item:
            glob, word = (s.strip() for s in item.split("=", 1))
            if not glob:
                raise QuantError(f"--precision item {item!r}: no layer pattern before '='")
            over.append((glob, _bits(word, item)))
        else:
            default = _bits(item, item)
    return PrecisionSpec(default, auto, target, tuple(over))


def layer_bits(g: Graph, spec: PrecisionSpec, base_bits: int, auto_int16=()) -> dict:
    """{Macro layer name: bits of its outputs} under ``spec`` for a graph quantized in ``base_bits`` mode:
    the spec's default (else ``base_bits``), int16 for the layers in ``auto_int16`` (the automatic choice), then
    the overrides in order. Raises QuantError for an override pattern that matches no layer (naming it and a few
    layer names)."""
    names = [n.name for n in g.macro_nodes()]
    out = {k: spec.default or base_bits for k in names}
    for k in auto_int16:
        out[k] = 16
    for glob, b in spec.overrides:
        hit = fnmatch.filter(names, glob)
        if not hit:
            raise QuantError(f"--precision {glob}=int{b}: no layer matches {glob!r} (layers: {', '.join(names[:4])}"
                             f"{', ...' if len(names) > 4 else ''})")
        for k in hit:
            out[k] = b
    return out


def region_bits(g: Graph, bits_of_layer: dict, base_bits: int) -> dict:
    """{region: 8 or 16} from each layer's requested output precision (module docstring's rules: the widest
    writer of a region, one precision per layer's outputs and per product's factors; graph inputs at
    ``base_bits``). Raises QuantError when a rule would change a graph input's precision (a product of the
    image with a layer output of another precision)."""
    tensors = g.tensors
    bits = {r: 8 for r in g.regions}
    inputs = {tensors[i].region for i in g.inputs}
    for r in inputs:
        bits[r] = base_bits
    for n in g.macro_nodes():
        for o in n.outputs:
            r = tensors[o].region
            if r not in inputs:
                bits[r] = max(bits[r], bits_of_layer.get(n.name, base_bits))
    groups = [[tensors[o].region for o in n.outputs] for n in g.macro_nodes()]
    groups += [[tensors[i].region for i in n.inputs[:kind_of(n.attrs["macro"]).operands]] for n in g.macro_nodes()
               if kind_of(n.attrs["macro"]).operands > 1]   # (a product's factors)
    changed = True
    while changed:   # widen every group to its widest member until nothing changes
        changed = False
        for grp in groups:
            b = max(bits[r] for r in grp)
            for r in grp:
                if bits[r] != b:
                    if r in inputs:
                        raise QuantError(f"region {r}: the graph input is int{base_bits}, but it shares a "
                                         f"precision with an int{b} region ({', '.join(grp)})")
                    bits[r], changed = b, True
    return bits


def mixed_ranges(g: Graph, stats: dict, cfg, rbits: dict, method: str = "auto") -> tuple[dict, dict, dict]:
    """(ranges, headroom, choices) as :func:`generator.quant.ranges.select_ranges` would give them, each region (and
    each table layer's pre-activation key) chosen for its own precision in ``rbits`` ({region: bits}), then the
    int8 table layers' pre-activation ranges tied to their outputs
    (:func:`generator.quant.table_ranges.tie_table_ranges`). ``cfg``: the base :class:`QuantConfig`."""
    from dataclasses import replace

    from generator.ref.float_ref import PRE_ACT
    from generator.quant.ranges import select_ranges
    from generator.quant.table_ranges import tie_table_ranges

    key_bits = dict(rbits)
    for n in g.macro_nodes():
        key_bits[PRE_ACT.format(n.name)] = rbits[g.tensors[n.outputs[0]].region]
    sel = {b: select_ranges({k: v for k, v in stats.items() if key_bits.get(k, cfg.bits) == b},
                            replace(cfg, bits=b), inputs=g.inputs, method=method)
           for b in sorted(set(key_bits.get(k, cfg.bits) for k in stats))}
    ranges, headroom, choices = ({k: v for s in sel.values() for k, v in s[i].items()} for i in range(3))
    ranges, choices = tie_table_ranges(g, stats, ranges, choices, replace(cfg, bits=8), headroom, region_bits=rbits)
    return ranges, headroom, choices


def mixed_precision(g: Graph, qg: Graph, stats: dict, cfg, spec: PrecisionSpec, images: list, acc: dict, bias_correction: bool,
                    calib_method: str, log=print):
    """The graph ``g`` quantized again with the per-layer precision of ``spec``
    (:mod:`generator.quant.precision`; ``auto``: :func:`generator.quant.auto_precision.choose` on ``qg``, the
    uniformly quantized graph, and ``images``); ``qg`` itself when every region keeps ``cfg.bits``. Records
    ``metadata["precision"]`` (the spec, the auto rounds, the int16 layers). Raises QuantError."""
    from generator.quant.auto_precision import choose
    from generator.quant.bias import correct_bias
    from generator.quant.quantize import quantize
    from generator.quant.ranges import channel_ranges

    chosen, report = [], None
    if spec.auto:
        chosen, report = choose(g, qg, images, spec.target_db, log)
    lbits = layer_bits(g, spec, cfg.bits, chosen)
    rbits = region_bits(g, lbits, cfg.bits)
    widened = widened_layers(g, lbits, rbits)
    for name, r in widened:
        log(f"precision: layer {name} was asked int{lbits[name]} but writes int{rbits[r]}: its region {r} shares "
            f"one precision with a wider layer (a concatenation's writers, a product's factors)")
    if all(b == cfg.bits for b in rbits.values()):
        out = qg.copy()
    else:
        ranges, headroom, choices = mixed_ranges(g, stats, cfg, rbits, calib_method)
        out = quantize(g, ranges, cfg, acc, headroom=headroom, calibration=choices,
                       channel_ranges=channel_ranges(stats), region_bits=rbits)
        if bias_correction:
            out = correct_bias(out, g, images, acc)
    wide = sorted(n.name for n in out.macro_nodes() if out.regions[out.tensors[n.outputs[0]].region].bits == 16)
    out.metadata["precision"] = {"spec": spec.text, "auto": report, "int16_layers": wide,
                                 "widened": [name for name, _ in widened]}
    return out


def widened_layers(g: Graph, bits_of_layer: dict, rbits: dict) -> list:
    """[(layer, region)]: the Macro layers whose requested output precision (``bits_of_layer``) the region rules
    (:func:`region_bits`, ``rbits``) widened, with the region that did it, in graph order."""
    out = []
    for n in g.macro_nodes():
        for o in n.outputs:
            r = g.tensors[o].region
            if rbits.get(r, 0) > bits_of_layer.get(n.name, rbits.get(r, 0)):
                out.append((n.name, r))
                break
    return out
