"""``--precision auto``: which layer outputs of an int8 network to keep in int16 (issue 43).

Sensitivity analysis on the calibration images with the fake-quantized execution of
:mod:`generator.quant.fakequant` (a layer kept exact there stands in for the same layer in int16: int16's rounding
is 256 times finer). An int8 network loses by accumulation (each layer alone keeps 25-36 dB on the DocLayNet
YOLOv8n; the error of the first layers travels through all later ones), so a layer's own low SQNR may be
inherited. The choice therefore walks the network front to back:

0. the layers nobody reads (the detection heads' last convolutions, :func:`free_int16`) are chosen first: int16
   costs them only their output bytes;
1. run the int8 network with the layers chosen so far exact and measure every layer's SQNR against the float
   network (:func:`generator.quant.fakequant.layer_sqnr`, the worst over the images);
2. take the lowest layer below the target that a choice can still raise, and choose its unchosen ancestors
   (itself included) whose own SQNR is below the target plus :data:`MARGIN_DB` (all of them if none is): the
   errors that add up to its drop;
3. their outputs go to int16 (so their readers compute in int16); repeat until every layer reaches the target, no
   choice is left, or :data:`MAX_ROUNDS` rounds have run.

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
#: a round chooses the worst layer's ancestors below the target plus this margin (dB): their errors add up
MARGIN_DB = 3.0


def worst_sqnr(fg: Graph, qg: Graph, images, exact=()) -> dict:
    """{layer: the lowest SQNR (dB) of its output over ``images`` (float32 [1, C, H, W] each)} with the layers in
    ``exact`` kept in float (:func:`generator.quant.fakequant.layer_sqnr`)."""
    out: dict = {}
    for x in images:
        for k, v in layer_sqnr(fg, qg, x, exact=tuple(exact)).items():
            out[k] = min(out.get(k, np.inf), v)
    return out


def _ancestors(qg: Graph, name: str) -> list:
    """The Macro layers whose outputs reach layer ``name`` (through DDR regions; a concatenation's every writer), in
    graph order, ``name`` last."""
    writers: dict = {}   # region -> the layers writing it
    for n in qg.macro_nodes():
        for o in n.outputs:
            writers.setdefault(qg.tensors[o].region, []).append(n.name)
    nodes = {n.name: n for n in qg.macro_nodes()}
    seen, todo = {name}, [name]
    while todo:
        for i in nodes[todo.pop()].inputs:
            for w in writers.get(qg.tensors[i].region, []):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
    return [k for k in nodes if k in seen]


def _pick(qg: Graph, sq: dict, target: float, chosen: set) -> tuple[str | None, list]:
    """(the lowest layer below ``target`` whose SQNR a choice can still raise, the layers to choose this round):
    that layer's unchosen ancestors (itself included) below ``target`` + :data:`MARGIN_DB`, else all of them."""
    for name in sorted((k for k in sq if sq[k] < target), key=sq.get):
        anc = [k for k in _ancestors(qg, name) if k not in chosen]
        if anc:
            near = [k for k in anc if sq.get(k, np.inf) < target + MARGIN_DB]
            return name, near or anc
    return None, []


def free_int16(qg: Graph) -> list:
    """The layers whose every output is a graph output no layer reads (the detection heads): in int16 they cost no
    compute (no reader computes in int16), only twice their output's bytes."""
    read = {qg.tensors[i].region for n in qg.macro_nodes() for i in n.inputs}
    outs = {qg.tensors[o].region for o in qg.outputs}
    return [n.name for n in qg.macro_nodes()
            if all(qg.tensors[o].region in outs and qg.tensors[o].region not in read for o in n.outputs)]


def choose(fg: Graph, qg: Graph, images, target_db: float, log=None) -> tuple[list, dict]:
    """The layers whose outputs go to int16 (module docstring) and the report of each round.

    Args: fg: the float fused graph ``qg`` was quantized from (equalized, if it was); qg: the uniformly int8
        quantized graph; images: calibration inputs (float32 [1, C, H, W] each; the first :data:`AUTO_IMAGES`
        are used); target_db: the lowest per-layer SQNR to reach; log: a callable for one line per round.
    Returns: (layer names in the order chosen, {"rounds": [{"chosen": [...], "lowest_db": dB, "layer": name}],
        "lowest_db": the lowest layer SQNR after the last choice, "target_db": target_db}).
    """
    imgs = list(images)[:AUTO_IMAGES]
    chosen = free_int16(qg)   # nothing reads them: int16 costs only their own output bytes
    rounds = [{"chosen": list(chosen), "lowest_db": None, "layer": None}] if chosen else []
    sq = worst_sqnr(fg, qg, imgs, exact=chosen)
    for _ in range(MAX_ROUNDS):
        lowest, pick = _pick(qg, sq, target_db, set(chosen))
        if lowest is None:
            break
        chosen += pick
        rounds.append({"chosen": pick, "lowest_db": round(float(sq[lowest]), 2), "layer": lowest})
        if log:
            log(f"precision auto: layer {lowest} at {sq[lowest]:.1f} dB < {target_db:g} dB: int16 outputs for "
                f"{len(pick)} layer(s) ({', '.join(pick[:3])}{', ...' if len(pick) > 3 else ''})")
        sq = worst_sqnr(fg, qg, imgs, exact=chosen)
    low = min(sq.values()) if sq else float("inf")
    return chosen, {"rounds": rounds, "lowest_db": round(float(low), 2), "target_db": target_db}
