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

Only the candidates are read (``candidates=True``, the default): the score threshold is applied to the integer codes
first, against a gate computed once per threshold from the head's scale and zero point
(:func:`host.yolo.sigmoid_gate`: the smallest code whose float score passes, every code evaluated):

* darknet heads: a (cell, anchor) can pass only if its objectness ``sigmoid(obj)`` passes (the class score is
  ``sigmoid(obj) * sigmoid(cls) <= sigmoid(obj)``), so the objectness channels of every cell are compared with the
  gate and only the ``5 + classes`` channels of the pairs at or above it are dequantized, decoded and NMS'd
  (:func:`host.yolo.decode_codes`);
* exports: the scores the export decode thresholds (objectness for ``"obj"``, every class probability for
  ``"noobj"``) are, in YOLOv5, YOLOX and YOLOv8, the tail's Sigmoid of one head element the tail only moves
  (:func:`host.tail.trace_sigmoid_sources`); those elements are compared with their channel's gate, and a frame with
  none at or above it gives no detection without running the tail; otherwise the tail runs over every anchor (its
  box decode, e.g. YOLOv8's DFL, mixes the channels of each anchor) and the threshold applies after it, on the
  candidates' rows. An export whose scores are no such Sigmoid has no gate: the tail decides.

Both give the same detections as ``candidates=False``, which dequantizes and decodes every cell, bit for bit.

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
from .tail import HostTailError, run_tail, trace_sigmoid_sources
from .yolo import YoloHead, check_heads, code_range, decode, decode_codes, detect, finish, sigmoid_gate

__all__ = ["Head", "Decoder"]

#: gates kept per decoder (one per head, threshold and code range; one per threshold for an export)
_MAX_GATES = 256


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
        self._gates = {}            # (head name, thresh, lo, hi) -> int64 [na]: sigmoid_gate, once per threshold
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

    def _decode_head(self, h: Head, v, img_w: int, img_h: int, thresh: float):
        """:func:`host.yolo.decode_codes` of head ``h``'s integer tensor ``v`` through its (cached) objectness gate;
        :func:`host.yolo.decode` of the dequantized tensor for a float head (no scale, or a float array)."""
        v, s = np.asarray(v), self._scales[h.name]
        if s is None or v.dtype.kind not in "iu":
            return decode(self._dequantize_one(h, v), h.yolo, self.net_w, self.net_h, img_w, img_h, thresh)
        if v.ndim not in (3, 4) or v.shape[-3] != h.yolo.channels or s.size not in (1, h.yolo.channels):
            raise ValueError(f"head {h.name}: [1, {h.yolo.channels}, H, W] (len(mask)*(5+classes)) with "
                             f"{h.yolo.channels} or one scale expected, got {v.shape} and {s.size} scales")
        lo, hi = code_range(v.dtype)
        key = (h.name, float(thresh), lo, hi)
        gate = self._gates.get(key)
        if gate is None:
            self._bound_cache()
            nf = 5 + h.yolo.classes
            s_obj = np.broadcast_to(s.reshape(-1), (h.yolo.channels,))[np.arange(len(h.yolo.mask)) * nf + 4]
            gate = self._gates[key] = sigmoid_gate(s_obj, h.zero_point, thresh, lo, hi)
        return decode_codes(v, h.yolo, s.reshape(-1), h.zero_point, gate, self.net_w, self.net_h, img_w, img_h,
                            thresh)

    def _bound_cache(self):
        if len(self._gates) >= _MAX_GATES:     # (a sweep over many thresholds: start over)
            self._gates.clear()

    def export_has_candidates(self, tensors: dict, thresh: float) -> bool:
        """Whether any row of the export's output can pass ``thresh``, read from the integer heads through the
        export's gate (:meth:`_export_gate`); True when there is no gate (the tail then decides)."""
        heads = [np.asarray(tensors[h.name]) for h in self.heads]
        key = ("export", float(thresh)) + tuple((v.dtype.str, v.shape) for v in heads)
        if key not in self._gates:
            self._bound_cache()
            self._gates[key] = self._export_gate(heads, thresh)
        gate = self._gates[key]
        if gate is None:
            return True
        return any(bool((v[idx] >= g).any()) for v, (idx, g) in zip(heads, gate))

    def _export_gate(self, heads: list, thresh: float):
        """The integer gate of an export's scores, or None where there is none.

        The scores the export decode thresholds (objectness of ``"obj"``, every class probability of ``"noobj"``:
        :func:`host.exported.detect_exported`) are found as the Sigmoid of one head element that the tail only moves
        (:func:`host.tail.trace_sigmoid_sources`); each such element's gate is the smallest code that passes
        (:func:`host.yolo.sigmoid_gate` of its channel's scale). A row of the output can pass only if one of its
        score elements is at or above its gate. Returns per head ``(index, gate)``: the index of those elements
        (the channel indices when they fill whole channels, as in YOLOv5, YOLOX and YOLOv8; else channel, row and
        column arrays) and their gates, broadcastable to the elements; None for float heads, a tail reading the
        network input, or a score that is not such a Sigmoid."""
        e = self.export
        if any(self._scales[h.name] is None or v.dtype.kind not in "iu" or v.ndim not in (3, 4) for h, v in
               zip(self.heads, heads)) or any(e.graph_input in n["inputs"] for n in e.tail):
            return None
        shapes = {h.name: list(e.input_shapes.get(h.name, (1,) + v.shape[-3:])) for h, v in zip(self.heads, heads)}
        try:
            lab = trace_sigmoid_sources(e.tail, self.consts, shapes, e.output)
        except (HostTailError, ValueError):
            return None
        score = lab[0, :, 4] if e.format == "obj" else lab[0, 4:, :]
        if score.size == 0 or (score > -2).any():
            return None
        ids, out, off = -score.ravel() - 2, [], 0
        for h, v in zip(self.heads, heads):
            chw, n = v.shape[-3:], int(np.prod(v.shape[-3:]))
            mine = ids[(ids >= off) & (ids < off + n)] - off
            c, y, x = np.unravel_index(mine, chw)
            lo, hi = code_range(v.dtype)
            chans = np.unique(c)
            s = np.broadcast_to(self._scales[h.name].reshape(-1), (chw[0],))[chans]
            per = np.zeros(chw[0], np.int64)
            per[chans] = sigmoid_gate(s, h.zero_point, thresh, lo, hi)
            if np.unique(mine).size == chans.size * chw[1] * chw[2]:      # whole channels (the three families)
                idx, g = (chans,) if v.ndim == 3 else (0, chans), per[chans].reshape(-1, 1, 1)
            else:
                idx, g = (c, y, x) if v.ndim == 3 else (0, c, y, x), per[c]
            out.append((idx, g))
            off += n
        return out

    def dequantize(self, tensors: dict) -> dict:
        """{head name: float32 [1, C, H, W]} of ``tensors`` ({name: [C, H, W] or [1, C, H, W]}: integers for a head
        with a scale, dequantized as ``(q - zero_point) * scale``; float for a head without, taken as they are)."""
        return {h.name: self._dequantize_one(h, tensors[h.name]) for h in self.heads}

    def _dequantize_one(self, h: Head, v) -> np.ndarray:
        s = self._scales[h.name]
        if s is not None:
            v = (np.asarray(v).astype(np.float32) - h.zero_point) * s
        return v[None] if np.ndim(v) == 3 else v

    def detect(self, tensors: dict, img_w: int, img_h: int, thresh: float = 0.25, nms: float = 0.45,
               graph_input: np.ndarray | None = None, candidates: bool = True) -> list:
        """Detections of one frame.

        Args:
            tensors: {head name: its tensor} (see :meth:`dequantize`); for an export, instead, the decoded output
                under the export's ``output`` name (a float model run whole).
            img_w, img_h: the original image's size in pixels.
            thresh: score threshold (darknet ``-thresh``); nms: IoU threshold of the per-class NMS.
            graph_input: the float network input [1, C, H, W], for an export tail that reads it (else None).
            candidates: True: read only the candidates (module text: the integer gates); False: dequantize and
                decode every cell (the reference the candidate path equals bit for bit).
        Returns:
            the detection list (module text), sorted by score.
        Raises:
            KeyError: a head's tensor missing. ValueError: a head of the wrong shape, too few class names.
            host.tail.HostTailError: a tail node the host cannot run, or a tensor it needs missing.
        """
        e = self.export
        if e is None and candidates:
            check_heads(len(self.heads), [h.yolo for h in self.heads], self.names)
            parts = [self._decode_head(h, tensors[h.name], img_w, img_h, thresh) for h in self.heads]
            return finish(parts, self.names, thresh, nms, img_w, img_h)
        if e is None:
            fl = self.dequantize(tensors)
            return detect([fl[h.name] for h in self.heads], [h.yolo for h in self.heads], self.net_w, self.net_h,
                          img_w, img_h, self.names, thresh=thresh, nms_thresh=nms)
        if e.output in tensors:
            out = tensors[e.output]
        else:
            if candidates and not self.export_has_candidates(tensors, thresh):
                return []
            vals = {k: v.reshape(e.input_shapes.get(k, v.shape)) for k, v in self.dequantize(tensors).items()}
            if graph_input is not None and e.graph_input:
                vals[e.graph_input] = np.asarray(graph_input, np.float32)
            out = run_tail(e.tail, self.consts, vals)[e.output]
        return detect_exported(out, e.format, self.net_w, self.net_h, img_w, img_h, self.names, thresh, nms,
                               e.resize)
