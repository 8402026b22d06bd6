"""Layer-level integer reference of the quantized graph (numpy).

Executes each Macro layer as whole-tensor integer arithmetic (convolution with the zero point as padding,
bias, :func:`~generator.ref.kernels.requantize`, max-pool, upsample) into region buffers. It is independent of the
instruction stream: tests require the golden ISA simulator's DDR results to equal it bit for bit, and accuracy
evaluation uses it because it is fast. Convolutions run in float64, exact for these operand widths.
"""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph
from generator.kinds import kind_of
from generator.ref.kernels import maxpool2d, requantize, table_activate, upsample_nearest
from generator.spec.isa import record_multiplier


def init_regions(g: Graph, x_q: np.ndarray) -> dict:
    """Region images {name: int64 [C, H, W]} (interiors) holding the zero point, the input region ``x_q``."""
    regions = {name: np.full((r.channels, r.h, r.w), r.zero_point, np.int64) for name, r in g.regions.items()}
    t_in = g.tensors[g.inputs[0]]
    regions[t_in.region][:] = np.asarray(x_q).reshape(regions[t_in.region].shape)
    return regions


def read_tensor(g: Graph, regions: dict, name: str) -> np.ndarray:
    """Tensor ``name``'s channels of its region image (int64 [C, H, W], a view)."""
    t = g.tensors[name]
    return regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]]


def layer_acc(g: Graph, n, regions: dict) -> np.ndarray:
    """Macro layer ``n``'s accumulators before the bias, int64 [OC, OH, OW]: its kind's integer core
    (:meth:`generator.kinds.base.LayerKind.int_acc`: the integer convolution with the input zero point as padding,
    the input itself for a copy layer, ``(a - zp_in) * (b - zp_b)`` for an emul layer, b [C, H, W] or [C, 1, 1])."""
    m, q = n.attrs["macro"], n.attrs["q"]
    kind = kind_of(m)
    xb = read_tensor(g, regions, n.inputs[1]) if kind.operands == 2 else None
    return kind.int_acc(m, read_tensor(g, regions, n.inputs[0]), xb, q["w"], q["zp_in"], q["zp_b"])


def write_layer(g: Graph, n, regions: dict, acc: np.ndarray) -> None:
    """Add the bias to ``acc`` (:func:`layer_acc`), requantize, pool / upsample, and write every output of
    layer ``n`` into its region image."""
    m, q = n.attrs["macro"], n.attrs["q"]
    acc = acc + q["bias"][:, None, None]
    for k, o in enumerate(n.outputs):
        p = q if k == 0 else q["side"][k - 1]
        (mp, sp), (mn, sn) = (record_multiplier(p[mk], p[sk], q["pre_shift"])
                              for mk, sk in (("mult_pos", "shift_pos"), ("mult_neg", "shift_neg")))
        table = q.get("table")
        y = requantize(acc, mp, sp, mn, sn, q["use_neg"], p["zp_out"], q["qmin"], q["qmax"], q["pre_shift"],
                       clamp=table is None)
        if table is not None:
            idn = q.get("identity")
            y = table_activate(y, table, q["qmin"], q["qmax"], None if idn is None else (idn[0], p["zp_out"], idn[1]))
        if k == 0:
            if m.pool:   # a copy layer's pads: the pool's -inf padding (its input border holds qmin)
                y = maxpool2d(y, *m.pool, pads=kind_of(m).pool_pads(m))
            y = upsample_nearest(y, m.upsample)
        else:
            y = maxpool2d(y, *m.side_pools[k - 1])
        t = g.tensors[o]
        regions[t.region][t.ch_offset:t.ch_offset + t.shape[1]] = y


def run_quantized(g: Graph, x_q: np.ndarray, keep_regions: bool = False) -> dict:
    """Run the quantized graph on an integer input image.

    Args: x_q: int [C, H, W] (or [1, C, H, W]) quantized with the input region's scale and zero point.
    Returns: ``{output name: int64 [1, C, H, W]}``; with ``keep_regions``, also ``{"regions": {name: int64 [C,H,W]}}``.
    """
    regions = init_regions(g, x_q)
    for n in g.macro_nodes():
        write_layer(g, n, regions, layer_acc(g, n, regions))
    out = {o: read_tensor(g, regions, o)[None] for o in g.outputs}
    if keep_regions:
        out["regions"] = regions
    return out


def dequantize(g: Graph, name: str, q: np.ndarray) -> np.ndarray:
    """Integer tensor -> float32 with the tensor's scale and zero point."""
    t = g.tensors[name]
    return ((q.astype(np.float64) - t.zero_point) * t.deq_scale).astype(np.float32)
