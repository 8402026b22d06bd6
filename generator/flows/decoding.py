"""The decode description of a model's outputs, built once: what the manifest stores in its heads' ``yolo`` and its
``export`` entry (:mod:`generator.flows.artifacts`), and what the generator's flows decode with
(:class:`host.decode.Decoder`, the driver's decoder), so the golden flow, the driver and the float reference decode
the same way.

* darknet YOLO heads: each graph output's object of the ``darknet_yolo`` metadata (anchors, mask, classes,
  ``scale_x_y``; :func:`generator.flows.pipeline.check_yolo_heads`);
* an export with its decode in the graph (YOLOv5, YOLOX, YOLOv8; :func:`exported_output`):
  the host-tail nodes, the ONNX shapes of the accelerator outputs it reads, its constants' file
  (:data:`TAIL_CONSTS`), the graph input, the decoded output and its format, and the model's resize mode
  (:func:`generator.flows.calibration.input_resize`).
"""
from __future__ import annotations

from generator.codegen.allocate import manifest_scale
from generator.flows.calibration import input_resize, net_size
from generator.ir.graph import Graph
from host.decode import Decoder, Head
from host.exported import output_format
from host.manifest_types import Export
from host.yolo import YoloHead

#: file of the host tail's constants beside manifest.json (``export`` models)
TAIL_CONSTS = "tail_consts.npz"


def exported_output(g: Graph, names) -> tuple[str, str] | None:
    """(output name, format) when ``g``'s host tail ends in one decoded YOLO output (an export with the decode in
    the graph: YOLOv5, YOLOX, YOLOv8; :func:`host.exported.output_format` for ``len(names)`` classes), else None."""
    outs = g.metadata.get("host_tail_outputs") or {}
    if len(outs) != 1 or not names:
        return None
    (o, shape), = outs.items()
    fmt = output_format(shape, len(names)) if shape else None
    return (o, fmt) if fmt else None


def decode_entries(g: Graph, names) -> tuple[dict, dict | None]:
    """``(yolo, export)`` of graph ``g`` with class names ``names`` (a list, or None), as the manifest stores them:
    ``yolo`` {output: its ``darknet_yolo`` metadata object, or None} for every graph output (the last object naming
    it), ``export`` the manifest's ``export`` entry (:data:`host.manifest.OPTIONAL`) when ``g``'s host tail ends in
    one decoded YOLO output for ``names``, else None."""
    yolo = {o: None for o in g.outputs}
    for y in g.metadata.get("darknet_yolo", []):
        if y.get("output") in yolo:
            yolo[y["output"]] = y
    exp = exported_output(g, names) if g.metadata.get("host_tail_outputs") else None
    if exp is None:
        return yolo, None
    return yolo, {"format": exp[1], "output": exp[0], "tail": g.metadata["host_tail"], "consts": TAIL_CONSTS,
                  "input_shapes": g.metadata.get("host_tail_input_shapes", {}), "graph_input": g.inputs[0],
                  "resize": input_resize(g)}


def head_decoder(g: Graph, names, quantized: bool = True) -> Decoder:
    """The :class:`host.decode.Decoder` of ``g``'s outputs from :func:`decode_entries` (through the typed manifest's
    converters: :meth:`host.yolo.YoloHead.from_dict`, :meth:`host.manifest_types.Export.from_dict`), with the tail's
    constants of the graph's metadata. ``quantized``: the heads are integers dequantized by each output's scale (one,
    or one per channel, as the manifest's ``scale``: :func:`generator.codegen.allocate.manifest_scale`) and zero
    point; else they are float (the float model's outputs). Raises ValueError as the decoder (a darknet output without
    YOLO parameters: check first with :func:`generator.flows.pipeline.check_detection`)."""
    yolo, export = decode_entries(g, names)
    heads = []
    for o in g.outputs:
        t = g.tensors[o]
        heads.append(Head(o, manifest_scale(t) if quantized else None, int(t.zero_point) if quantized else 0,
                          YoloHead.from_dict(yolo[o]) if yolo[o] is not None else None))
    w, h = net_size(g)
    return Decoder(heads, w, h, names or [], Export.from_dict(export, "export") if export else None,
                   g.metadata.get("host_tail_consts", {}) if export else None)
