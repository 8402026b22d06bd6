"""The host's post-processing reads only the candidates (host/decode.py ``candidates=True``: the score threshold on the
integer codes through :func:`host.yolo.sigmoid_gate`, then decode and NMS of the cells above it) and gives the same
detections as the full decode (``candidates=False``: every cell dequantized and decoded, today's path kept as the
reference), bit for bit on boxes and scores:

* on the golden simulator's YOLOv4-tiny heads of every shipped image (int8, and int16 on two of them), as int64
  arrays and as the driver's int8 [C, H, W] views of an NHWC buffer, reading each cell's objectness and the channels
  of the (cell, anchor) pairs whose objectness passes, nothing else;
* at the driver's call site;
* on random darknet heads (hypothesis: codes drawn at the threshold's boundary found by the full decode, heads with no
  candidate), each head's decode arrays equal too;
* on YOLOv5-, YOLOX- and YOLOv8-shaped exports (random heads): the gate says "a candidate" exactly when a score of
  the full tail's output exceeds the threshold."""
from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np
import onnx
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from generator.eval import data
from generator.exec import run_golden
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.flows.artifacts import write_artifacts
from generator.flows.decoding import decode_entries, head_decoder
from generator.flows.pipeline import class_names, load_model, quantize_image
from generator.frontend.yolo_family import build
from host.decode import Decoder, Head
from host.driver import YoloAccelerator
from host.manifest_types import Export
from host.preprocess import load_image
from host.tail import run_tail
from host.yolo import YoloHead, code_range, decode, decode_codes, finish, sigmoid_gate

from helpers import compiled_model

THRESHOLDS = (0.25, 0.1, 0.5, 0.9)
ANCHORS = [(10, 14), (23, 27), (37, 58), (81, 82), (135, 169), (344, 319)]


def _images() -> dict:
    imgs = {k: load_image(v) for k, v in data.all_real_images().items()}
    imgs["page"] = load_image(data.page_image())
    return imgs


def _nhwc_views(heads: dict, dtype) -> dict:
    """The heads as the driver hands them over: [C, H, W] views of a contiguous NHWC buffer of ``dtype``."""
    return {k: np.ascontiguousarray(v.transpose(1, 2, 0)).astype(dtype).transpose(2, 0, 1) for k, v in heads.items()}


class _Tracked(np.ndarray):
    """An integer head that records which of its elements indexing reads (``reads``: flat indices of the [C, H, W]
    base array)."""

    def __getitem__(self, key):
        base = self.base_array
        ids = np.arange(base.size).reshape(base.shape)[key]
        self.reads.append(np.asarray(ids).ravel())
        return np.asarray(base)[key]


def _tracked(q: np.ndarray) -> _Tracked:
    t = q.view(_Tracked)
    t.base_array, t.reads = q, []
    return t


def _tracked_run(dec: Decoder, heads: dict, thresh: float, img_w: int, img_h: int) -> tuple[list, dict]:
    """(detections, {head: flat indices read, in reading order}) of the candidate path run on heads that record their
    reads: what :meth:`Decoder.detect` runs for darknet heads, :func:`host.yolo.decode_codes` of each head through its
    :func:`host.yolo.sigmoid_gate`, then :func:`host.yolo.finish`."""
    parts, reads = [], {}
    for h in dec.heads:
        q = _tracked(heads[h.name])
        nf = 5 + h.yolo.classes
        s = np.broadcast_to(np.asarray(h.scale, np.float32).reshape(-1), (h.yolo.channels,))
        gate = sigmoid_gate(s[np.arange(len(h.yolo.mask)) * nf + 4], h.zero_point, thresh, *code_range(q.dtype))
        parts.append(decode_codes(q, h.yolo, s, h.zero_point, gate, dec.net_w, dec.net_h, img_w, img_h, thresh))
        reads[h.name] = np.concatenate(q.reads)
    return finish(parts, dec.names, thresh, 0.45, img_w, img_h), reads


def _expected_reads(dec: Decoder, heads: dict, thresh: float) -> dict:
    """{head: flat indices} the candidate path may read: every cell's objectness, and the ``5 + classes`` channels of
    each (cell, anchor) whose float32 objectness (dequantized as the full decode does) exceeds ``thresh``."""
    fl = dec.dequantize(heads)
    out = {}
    for h in dec.heads:
        C, H, W = heads[h.name].shape
        nf, na = 5 + h.yolo.classes, len(h.yolo.mask)
        ids = np.arange(C * H * W).reshape(C, H, W)
        want = [ids[np.arange(na) * nf + 4].ravel()]
        for a in range(na):
            obj = (1.0 / (1.0 + np.exp(-fl[h.name][0, a * nf + 4]))).astype(np.float32)
            want.append(ids[a * nf:(a + 1) * nf][:, obj > np.float32(thresh)].ravel())
        out[h.name] = np.unique(np.concatenate(want))
    return out


@pytest.fixture(scope="module")
def shipped():
    """{(quant, image): (decoder, integer heads {name: int64 [C, H, W]}, image)} of YOLOv4-tiny on the golden simulator:
    every shipped image in int8-asym, bus and zidane in int16-sym."""
    out = {}
    imgs = _images()
    for quant, names in (("int8-asym", list(imgs)), ("int16-sym", ["bus", "zidane"])):
        c = compiled_model("zcu19eg", quant)
        dec = head_decoder(c.qgraph, class_names(c))
        for n in names:
            heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, imgs[n]))
            out[quant, n] = (dec, heads, imgs[n])
    return out


def test_shipped_images_candidates_equal_the_full_decode(shipped):
    found = 0
    for (quant, name), (dec, heads, img) in shipped.items():
        dtype = np.int8 if quant.startswith("int8") else np.int16
        views = _nhwc_views(heads, dtype)
        for t in THRESHOLDS:
            ref = dec.detect(heads, img.shape[1], img.shape[0], t, candidates=False)
            assert dec.detect(heads, img.shape[1], img.shape[0], t) == ref, (quant, name, t)
            assert dec.detect(views, img.shape[1], img.shape[0], t) == ref, (quant, name, t)
            dets, reads = _tracked_run(dec, heads, t, img.shape[1], img.shape[0])
            assert dets == ref, (quant, name, t)
            want = _expected_reads(dec, heads, t)
            for h in dec.heads:                 # those elements only, each once (a candidate's objectness twice)
                got, n_obj = reads[h.name], heads[h.name][0].size * len(h.yolo.mask)
                n_cand = (want[h.name].size - n_obj) // (4 + h.yolo.classes)
                assert np.array_equal(np.unique(got), want[h.name]), (quant, name, t, h.name)
                assert got.size == want[h.name].size + n_cand < heads[h.name].size / 20
            found += len(ref)
        if name == "bus":
            assert {d["label"] for d in dec.detect(heads, img.shape[1], img.shape[0])} >= {"person", "bus"}
    assert found > 50


def test_driver_post_processing_reads_the_candidates_and_equals_the_full_decode(tmp_path):
    c = compiled_model("zcu19eg", "int8-asym")
    pkg = write_artifacts(c, tmp_path / "pkg")
    img = load_image(data.sample_images()["bus"])
    with active(GoldenSimDevice("zcu19eg")):
        acc = YoloAccelerator(pkg, timeout_s=300.0)
        dets = acc.detect(img)
        views = {h.name: v.transpose(2, 0, 1) for h, v in zip(acc.manifest.heads, acc.sets[0].heads)}
        assert all(v.dtype == np.int8 and not v.flags.c_contiguous for v in views.values())
        ref = acc.decoder.detect(views, img.shape[1], img.shape[0], acc.thresh, acc.nms, candidates=False)
    assert dets and dets == ref


def _fastest_ms(f, n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _peak_bytes(f) -> int:
    """Peak bytes numpy allocates while ``f`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_post_processing_time_and_bytes_of_bus():
    """YOLOv4-tiny int8 bus.jpg, heads as the driver hands them over (int8 [C, H, W] views of the NHWC buffers):
    decode + NMS at most 2 ms (fastest of 5; issue 45), the heads' bytes read (element reads, one byte each) at most
    1/20 of the full decode's. ``pytest -s`` prints both paths' figures, measured in the same run (on one core:
    ``taskset -c 0``)."""
    c = compiled_model("zcu19eg", "int8-asym")
    img = load_image(data.sample_images()["bus"])
    heads, _, _, _ = run_golden(c.program, c.qgraph, quantize_image(c, img))
    dec = head_decoder(c.qgraph, class_names(c))
    views = _nhwc_views(heads, np.int8)
    w, h = img.shape[1], img.shape[0]
    full = lambda: dec.detect(views, w, h, 0.25, 0.45, candidates=False)     # noqa: E731
    cand = lambda: dec.detect(views, w, h, 0.25, 0.45)                       # noqa: E731
    assert cand() == full() != []                                           # (the gates made once, untimed)
    ms_full, ms_cand = _fastest_ms(full), _fastest_ms(cand)
    dets, reads = _tracked_run(dec, heads, 0.25, w, h)
    assert dets == full()
    read = sum(v.size for v in reads.values())
    total = sum(v.size for v in heads.values())
    lines = 0                                   # 64-byte lines of the NHWC buffers holding the elements read
    for k, v in reads.items():
        ch, y, x = np.unravel_index(v, heads[k].shape)
        lines += np.unique(((y * heads[k].shape[2] + x) * heads[k].shape[0] + ch) // 64).size
    print(f"\nbus.jpg decode + NMS, fastest of 5: full {ms_full:.3f} ms, candidates {ms_cand:.3f} ms; head bytes read: "
          f"full {total}, candidates {read} (64-byte lines: full {sum(-(-v.size // 64) for v in heads.values())}, "
          f"candidates {lines}); peak numpy allocation: full {_peak_bytes(full)} B, candidates {_peak_bytes(cand)} B")
    assert ms_cand <= 2.0
    assert read * 20 <= total


# ------------------------------------------------------------------------------------------- random darknet heads
def _boundary(dec: Decoder, h: Head, a: int, thresh: float, lo: int, hi: int) -> int | None:
    """The smallest code of anchor ``a``'s objectness that the full decode keeps at ``thresh``, or None if it keeps
    none: a probe head of one column, one row per code of a window around the analytic boundary (its other channels
    at the zero point), decoded by :func:`host.yolo.decode` for an image of one pixel per cell, so each kept box's
    centre row names its code."""
    nf = 5 + h.yolo.classes
    s = float(np.broadcast_to(np.asarray(h.scale, np.float64).reshape(-1), (h.yolo.channels,))[a * nf + 4])
    mid = int(np.clip(h.zero_point + math.log(thresh / (1 - thresh)) / s, lo - 1, hi + 1))
    codes = np.arange(min(max(mid - 64, lo), hi), max(min(mid + 64, hi), lo) + 1)
    probe = np.full((h.yolo.channels, codes.size, 1), h.zero_point, np.int64)
    probe[a * nf + 4, :, 0] = codes
    fl = Decoder([h], 416, 416, dec.names).dequantize({h.name: probe})[h.name]
    boxes, _, _ = decode(fl, h.yolo, 416, 416, 1, codes.size, thresh)
    rows = np.floor((boxes[:, 1].astype(np.float64) + boxes[:, 3]) / 2).astype(np.int64)
    return int(codes[rows].min()) if rows.size else None


@st.composite
def darknet_case(draw):
    """(decoder, {name: integer head}, thresh, mode): 1-2 heads of 1-3 anchors and 1-4 classes, int8 / int16 / int64
    codes, per-channel or one scale; ``mode`` "random", "boundary" (objectness codes one below, at and one above the
    full decode's boundary) or "empty" (every objectness code below it)."""
    nc = draw(st.integers(1, 4))
    bits = draw(st.sampled_from([8, 16]))
    dtype = draw(st.sampled_from([np.int8 if bits == 8 else np.int16, np.int64]))
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    thresh = draw(st.sampled_from([0.25, 0.005, 0.5, 0.75, 0.999]))
    mode = draw(st.sampled_from(["random", "boundary", "empty"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    heads = []
    for k in range(draw(st.integers(1, 2))):
        na = draw(st.integers(1, 3))
        yh = YoloHead(ANCHORS, list(range(k, k + na)), nc, draw(st.sampled_from([1.0, 1.05, 2.0])))
        unit = 48.0 / (hi - lo)     # about [-24, 24] in the float domain: sigmoid(cls) reaches 1.0 in float32
        scale = [float(v) for v in rng.uniform(0.2, 3.0, yh.channels) * unit] if draw(st.booleans()) \
            else float(rng.uniform(0.2, 3.0) * unit)
        heads.append(Head(f"h{k}", scale, int(rng.integers(lo // 4, hi // 4)), yh))
    dec = Decoder(heads, 416, 416, [f"c{i}" for i in range(nc)])
    tensors = {}
    for h in heads:
        H, W = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        q = rng.integers(lo, hi + 1, (h.yolo.channels, H, W))
        nf = 5 + nc
        for a in range(len(h.yolo.mask)):
            b = _boundary(dec, h, a, thresh, lo, hi)
            if mode == "boundary" and b is not None:
                q[a * nf + 4] = np.clip(b + rng.integers(-1, 2, (H, W)), lo, hi)
                q[a * nf + 5:a * nf + nf] = np.where(rng.random((nc, H, W)) < 0.5, hi, q[a * nf + 5:a * nf + nf])
            elif mode == "empty":
                q[a * nf + 4] = lo if b is None or b == lo else rng.integers(lo, b, (H, W))
        tensors[h.name] = q.astype(dtype)
    return dec, tensors, thresh, mode


@given(darknet_case())
def test_random_heads_candidates_equal_the_full_decode(case):
    dec, tensors, thresh, mode = case
    note(f"{mode} thresh {thresh} {[(h.scale, h.zero_point) for h in dec.heads]}")
    ref = dec.detect(tensors, 640, 480, thresh, candidates=False)
    assert dec.detect(tensors, 640, 480, thresh) == ref
    if mode == "empty":
        assert ref == []
    for h in dec.heads:                         # each head's decode: boxes, objectness, class probabilities
        q = tensors[h.name]
        nf = 5 + h.yolo.classes
        s = np.broadcast_to(np.asarray(h.scale, np.float32).reshape(-1), (h.yolo.channels,))
        gate = sigmoid_gate(s[np.arange(len(h.yolo.mask)) * nf + 4], h.zero_point, thresh, *code_range(q.dtype))
        got = decode_codes(q, h.yolo, s, h.zero_point, gate, 416, 416, 640, 480, thresh)
        want = decode(dec.dequantize(tensors)[h.name], h.yolo, 416, 416, 640, 480, thresh)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w)


# ------------------------------------------------------------------------------------------------------ exports
def _export_decoder(tmp_path, family: str, rng) -> Decoder:
    """The decoder of a ``family``-shaped export (64x64, 6 classes, random weights) with random per-channel scales
    and zero points for its integer heads."""
    path = tmp_path / f"{family}.onnx"
    onnx.save(build(family, 64, "silu", 17, classes=6, seed=5), str(path))
    g = load_model(path)
    names = [f"c{i}" for i in range(6)]
    _, exp = decode_entries(g, names)
    shapes = g.metadata["host_tail_input_shapes"]
    heads = [Head(k, [float(v) for v in rng.uniform(0.02, 0.08, shapes[k][1])], int(rng.integers(-8, 8)))
             for k in g.metadata["host_tail_inputs"]]
    return Decoder(heads, 64, 64, names, Export.from_dict(exp, "export"), g.metadata["host_tail_consts"])


def _any_score_passes(dec: Decoder, tensors: dict, thresh: float) -> bool:
    """Whether a score of the full tail's output (objectness of "obj", a class probability of "noobj") exceeds
    ``thresh``: the tail run on every dequantized head."""
    e = dec.export
    vals = {k: v.reshape(e.input_shapes[k]) for k, v in dec.dequantize(tensors).items()}
    out = np.asarray(run_tail(e.tail, dec.consts, vals)[e.output], np.float32)
    score = out[0, :, 4] if e.format == "obj" else out[0, 4:, :]
    return bool((score > np.float32(thresh)).any())


@pytest.mark.parametrize("family", ["yolov5n", "yolox_nano", "yolov8n"])
def test_export_gate_says_candidate_exactly_when_a_score_passes(tmp_path, family):
    """Every head channel in turn holds one element swept across the threshold's boundary (the others at the lowest
    code), then random heads: the gate's answer is the full tail's, and the detections equal the full decode's."""
    rng = np.random.default_rng(3)
    dec = _export_decoder(tmp_path, family, rng)
    thresh, seen = 0.5, []
    shapes = {h.name: dec.export.input_shapes[h.name][1:] for h in dec.heads}
    cases = []
    for h in dec.heads:
        s = np.asarray(h.scale, np.float64)
        for c in range(shapes[h.name][0]):
            base = {k: np.full(shp, -128, np.int8) for k, shp in shapes.items()}
            y, x = (int(rng.integers(0, n)) for n in shapes[h.name][1:])
            mid = int(round(h.zero_point + math.log(thresh / (1 - thresh)) / s[c]))
            for code in range(max(mid - 2, -128), min(mid + 2, 127) + 1):
                t = {k: v.copy() for k, v in base.items()}
                t[h.name][c, y, x] = code
                cases.append(t)
    for shift in range(0, 120, 6):
        cases.append({k: rng.integers(-128, 128 - shift, shp).astype(np.int8) for k, shp in shapes.items()})
    for t in cases:
        want = _any_score_passes(dec, t, thresh)
        assert dec.export_has_candidates(t, thresh) == want
        ref = dec.detect(t, 640, 480, thresh, candidates=False)
        assert dec.detect(t, 640, 480, thresh) == ref
        seen.append((want, bool(ref)))
    assert {w for w, _ in seen} == {True, False} and any(r for _, r in seen)


def _partial_tail() -> Export:
    """A hand-written "obj" tail whose objectness fills part of a channel: head ``h`` [1, 6, 3, 2] (4 box fields,
    objectness, one class), of which only the first two rows of cells are output rows (Slice, Reshape, Transpose,
    Split, Sigmoid, Concat), so the gate holds element indices, not channels."""
    def node(op, ins, outs, **attrs):
        return {"name": outs[0], "op": op, "inputs": ins, "outputs": outs, "attrs": attrs}
    tail = [node("Slice", ["h", "st", "en", "ax"], ["sl"]), node("Reshape", ["sl", "shp"], ["r"]),
            node("Transpose", ["r"], ["t"], perm=[0, 2, 1]), node("Split", ["t", "sz"], ["box", "obj", "cls"], axis=2),
            node("Sigmoid", ["obj"], ["so"]), node("Sigmoid", ["cls"], ["sc"]),
            node("Concat", ["box", "so", "sc"], ["out"], axis=2)]
    return Export(format="obj", output="out", tail=tail, consts="-", input_shapes={"h": [1, 6, 3, 2]})


def test_export_gate_of_a_score_filling_part_of_a_channel():
    consts = {"st": np.array([0]), "en": np.array([2]), "ax": np.array([2]), "shp": np.array([1, 6, 4]),
              "sz": np.array([4, 1, 1])}
    dec = Decoder([Head("h", 0.05, 3)], 8, 8, ["a"], _partial_tail(), consts)
    rng = np.random.default_rng(5)
    mid = 3 + round(math.log(0.5 / 0.5) / 0.05)
    seen = set()
    for row in range(3):                  # the boundary codes at a cell of each row (row 2 is no output row)
        for code in range(mid - 2, mid + 3):
            q = np.full((6, 3, 2), -128, np.int8)
            q[4, row, int(rng.integers(0, 2))] = code
            q[5] = 127
            want = _any_score_passes(dec, {"h": q}, 0.5)
            assert dec.export_has_candidates({"h": q}, 0.5) == want
            assert dec.detect({"h": q}, 8, 8, 0.5) == dec.detect({"h": q}, 8, 8, 0.5, candidates=False)
            seen.add((row, want))
    assert seen == {(0, False), (0, True), (1, False), (1, True), (2, False)}
