"""``--precision auto``: which layer outputs of an int8 network to keep in int16 (issue 43).

Sensitivity analysis on the calibration images with the fake-quantized execution of
:mod:`generator.quant.fakequant` (a layer kept exact there stands in for the same layer in int16: int16's rounding
is 256 times finer). An int8 network loses by accumulation (each layer alone keeps 25-36 dB on the DocLayNet
YOLOv8n; the error of the first layers travels through all later ones), so a layer's own low SQNR may be
inherited. The choice therefore walks the network front to back:

1. run the int8 network with the layers chosen so far exact and measure every layer's SQNR against the float
   network (:func:`generator.quant.fakequant.layer_sqnr`, the worst over the images);
2. the *frontier*: the layers below the target whose inputs are all at or above it (the layers that cause a
   drop rather than inherit it); if there is none, the first layer below the target in graph order;
3. choose them (their outputs go to int16, so their readers compute in int16) and repeat, until every layer
   reaches the target or :data:`MAX_ROUNDS` rounds have run.

The cost, which the compile reports, is the latency model's: the chosen layers' readers run their convolutions at
one multiply per DSP48E2 instead of two, and move twice the bytes. This follows the per-layer sensitivity analysis
of mixed-precision post-training quantization (e.g. Dong et al., "HAWQ", ICCV 2019, with SQNR in place of the
Hessian trace; TensorRT's and OpenVINO's accuracy-aware per-layer precision).
"""
from __future__ import annotations

import numpy as np

from generator.ir.graph import Graph
from generator.quant.fakequant import layer_sqnr

#: at most this many rounds of fake-quantized runs (each runs every calibration image used)
MAX_ROUNDS = 8
#: calibration images the analysis runs (the first ones of the set)
AUTO_IMAGES = 2


def worst_sqnr(fg: Graph, qg: Graph, images, exact=()) -> dict:
    """{layer: the lowest SQNR (dB) of its output over ``images`` (float32 [1, C, H, W] each)} with the layers in
    ``exact`` kept in float (:func:`generator.quant.fakequant.layer_sqnr`)."""
    out: dict = {}
    for x in images:
        for k, v in layer_sqnr(fg, qg, x, exact=tuple(exact)).items():
            out[k] = min(out.get(k, np.inf), v)
    return out


def _frontier(qg: Graph, sq: dict, target: float, chosen: set) -> list:
    """The layers below ``target`` whose input layers are all at or above it (else the first below it)."""
    writers: dict = {}   # region -> the layers writing it (a concatenation has several)
    for n in qg.macro_nodes():
        for o in n.outputs:
            writers.setdefault(qg.tensors[o].region, []).append(n.name)
    low = [n for n in qg.macro_nodes() if sq.get(n.name, np.inf) < target and n.name not in chosen]
    front = []
    for n in low:
        ins = [w for i in n.inputs for w in writers.get(qg.tensors[i].region, [])]
        if all(sq.get(p, np.inf) >= target or p in chosen for p in ins):
            front.append(n.name)
    return (front or [low[0].name]) if low else []


def choose(fg: Graph, qg: Graph, images, target_db: float, log=None) -> tuple[list, dict]:
    """The layers whose outputs go to int16 (module docstring) and the report of each round.

    Args: fg: the float fused graph ``qg`` was quantized from (equalized, if it was); qg: the uniformly int8
        quantized graph; images: calibration inputs (float32 [1, C, H, W] each; the first :data:`AUTO_IMAGES`
        are used); target_db: the lowest per-layer SQNR to reach; log: a callable for one line per round.
    Returns: (layer names in the order chosen, {"rounds": [{"chosen": [...], "lowest_db": dB, "layer": name}],
        "lowest_db": the lowest layer SQNR after the last choice, "target_db": target_db}).
    """
    imgs = list(images)[:AUTO_IMAGES]
    chosen: list = []
    rounds = []
    sq = worst_sqnr(fg, qg, imgs)
    for _ in range(MAX_ROUNDS):
        lowest = min(sq, key=sq.get) if sq else None
        if lowest is None or sq[lowest] >= target_db:
            break
        front = _frontier(qg, sq, target_db, set(chosen))
        if not front:
            break
        chosen += front
        rounds.append({"chosen": front, "lowest_db": round(float(sq[lowest]), 2), "layer": lowest})
        if log:
            log(f"precision auto: lowest layer {lowest} at {sq[lowest]:.1f} dB < {target_db:g} dB: int16 outputs "
                f"for {len(front)} layer(s) ({', '.join(front[:3])}{', ...' if len(front) > 3 else ''})")
        sq = worst_sqnr(fg, qg, imgs, exact=chosen)
    low = min(sq.values()) if sq else float("inf")
    return chosen, {"rounds": rounds, "lowest_db": round(float(low), 2), "target_db": target_db}
