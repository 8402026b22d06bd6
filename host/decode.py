"""The one head decoder: a network's head tensors -> detections, driven by the manifest's head and export entries.

The driver (:class:`host.driver.YoloAccelerator`), the golden flow
(:func:`generator.flows.pipeline.detections_from_heads`) and the accuracy table's float reference
(:func:`generator.flows.accuracy.float_detections`) all decode through :class:`Decoder`. The driver builds it from
the typed manifest (:meth:`Decoder.from_manifest`); the generator from the same head and export entries the manifest
writer stores (:func:`generator.flows.pipeline.head_decoder`). Per head a :class:`Head`: its name, how to dequantize
it (``scale``: one, or one per channel; ``zero_point``; no scale for a float tensor) and its darknet YOLO parameters
(:class:`host.yolo.YoloHead`). Then either

* darknet YOLO heads (no ``export`` entry): every head dequantized to float [1, C, H, W], decoded and NMS'd by
  :func:`host.yolo.detect` (``get_yolo_box`` with ``scale_x_y``, darknet's per-class NMS; the image stretched to the
  network input, so the boxes scale back by the two axes' ratios); or
* an export with its decode in the graph (:class:`host.manifest_types.Export`: YOLOv5, YOLOX, YOLOv8): the heads
  dequantized, reshaped to their ONNX shapes (``input_shapes``), the host tail run on them
  (:func:`host.tail.run_tail`, with the tail's constants and, when given, the float network input under
  ``graph_input``), its decoded output turned into detections by :func:`host.exported.detect_exported` (the boxes
  mapped back through the export's ``resize``). A float model run whole (onnxruntime) gives the decoded output
  itself: a tensor named as the export's ``output`` is decoded directly, without the tail.

Dequantization is ``(q - zero_point) * scale`` in float32 (the scale as float32, per channel over axis 0 of the
[C, H, W] head). Detections are ``{"label", "class_id", "score", "box": [x1, y1, x2, y2]}`` in pixels of the original
image, sorted by score (:func:`host.yolo.listing`). numpy only (PYNQ 3.x: Python 3.10, numpy 1.x; no onnx, no
``generator``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .exported import FORMATS, detect_exported
from .manifest_types import Export, Manifest
from .tail import run_tail
from .yolo import YoloHead, detect

__all__ = ["Head", "Decoder"]


@dataclass(frozen=True)
class Head:
    """One head as the decoder reads it: tensor ``name``; ``scale`` (a number, or a list of one per channel) and
    ``zero_point`` that dequantize its integers, or ``scale`` None for a float tensor; ``yolo``: its darknet YOLO
    parameters (None for the head of an export)."""
    name: str
    scale: float | list | None = None
    zero_point: int = 0
    yolo: YoloHead | None = None


class Decoder:
    """Head tensors -> detections (see the module text).

    Args:
        heads: the :class:`Head` of every head, in the manifest's order (the graph's output order).
        net_w, net_h: network input size in pixels.
        names: class names; empty: a darknet program compiled without names, labelled ``class <k>``.
        export: the export entry (a decode in the graph) or None (darknet YOLO heads).
        consts: the host tail's constants ({name: array}, ``tail_consts.npz``), for an export.
    Raises:
        ValueError: without ``export`` a head has no YOLO parameters or the heads disagree on the class count; an
            export of an unknown format.
    """

    def __init__(self, heads, net_w: int, net_h: int, names, export: Export | None = None, consts: dict | None = None):
        self.heads = list(heads)
        self.net_w, self.net_h = int(net_w), int(net_h)
        self.export, self.consts = export, dict(consts or {})
        self._scales = {h.name: None if h.scale is None else np.asarray(h.scale, np.float32).reshape(-1, 1, 1)
                        for h in self.heads}
        if export is not None:
            if export.format not in FORMATS:
                raise ValueError(f"export format {export.format!r}: not one of {FORMATS}")
            self.names = list(names)
            return
        missing = [h.name for h in self.heads if h.yolo is None]
        if missing:
            raise ValueError(f"heads {missing} have no YOLO parameters and there is no export entry")
        classes = {h.yolo.classes for h in self.heads}
        if len(classes) > 1:
            raise ValueError(f"YOLO heads disagree on the number of classes: {sorted(classes)}")
        self.names = list(names) or [f"class {k}" for k in range(max(classes, default=0))]

    @classmethod
    def from_manifest(cls, m: Manifest, consts: dict | None = None) -> "Decoder":
        """The decoder of a deployment package: its typed manifest's heads, ``net``, ``names`` and ``export``, and
        the export's constants (``consts``, :func:`host.package.load_tail_consts`). Raises ValueError as the
        constructor."""
        heads = [Head(t.name, t.scale, t.zero_point, t.yolo) for t in m.heads]
        return cls(heads, m.net.width, m.net.height, m.names, m.export, consts)

    def dequantize(self, tensors: dict) -> dict:
        """{head name: float32 [1, C, H, W]} of ``tensors`` ({name: [C, H, W] or [1, C, H, W]}: integers for a head
        with a scale, dequantized as ``(q - zero_point) * scale``; float for a head without, taken as they are)."""
        out = {}
        for h in self.heads:
            v, s = tensors[h.name], self._scales[h.name]
            if s is not None:
                v = (np.asarray(v).astype(np.float32) - h.zero_point) * s
            if np.ndim(v) == 3:
                v = v[None]
            out[h.name] = v
        return out

    def detect(self, tensors: dict, img_w: int, img_h: int, thresh: float = 0.25, nms: float = 0.45,
               graph_input: np.ndarray | None = None) -> list:
        """Detections of one frame.

        Args:
            tensors: {head name: its tensor} (see :meth:`dequantize`); for an export, instead, the decoded output
                under the export's ``output`` name (a float model run whole).
            img_w, img_h: the original image's size in pixels.
            thresh: score threshold (darknet ``-thresh``); nms: IoU threshold of the per-class NMS.
            graph_input: the float network input [1, C, H, W], for an export tail that reads it (else None).
        Returns:
            the detection list (module text), sorted by score.
        Raises:
            KeyError: a head's tensor missing. ValueError: a head of the wrong shape, too few class names.
            host.tail.HostTailError: a tail node the host cannot run, or a tensor it needs missing.
        """
        e = self.export
        if e is None:
            fl = self.dequantize(tensors)
            return detect([fl[h.name] for h in self.heads], [h.yolo for h in self.heads], self.net_w, self.net_h,
                          img_w, img_h, self.names, thresh=thresh, nms_thresh=nms)
        if e.output in tensors:
            out = tensors[e.output]
        else:
            vals = {k: v.reshape(e.input_shapes.get(k, v.shape)) for k, v in self.dequantize(tensors).items()}
            if graph_input is not None and e.graph_input:
                vals[e.graph_input] = np.asarray(graph_input, np.float32)
            out = run_tail(e.tail, self.consts, vals)[e.output]
        return detect_exported(out, e.format, self.net_w, self.net_h, img_w, img_h, self.names, thresh, nms,
                               e.resize)
