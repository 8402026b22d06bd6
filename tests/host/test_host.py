"""Host-side pipeline (host/) against independent references (detection metrics: tests/eval/test_metrics.py).

The references below are plain-Python, loop-by-loop transcriptions of darknet (AlexeyAB) C code, written here
independently of the vectorized implementations they check.
"""
from __future__ import annotations

import ctypes
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from host.preprocess import ImageError, darknet_resize, load_image, preprocess, quantize_input
from host.yolo import YoloHead, decode, detect, nms

ROOT = Path(__file__).resolve().parents[2]
f32 = np.float32

# yolov4-tiny.cfg [yolo] sections
ANCHORS = [(10, 14), (23, 27), (37, 58), (81, 82), (135, 169), (344, 319)]
TINY_HEADS = [YoloHead(ANCHORS, [3, 4, 5], 80, 1.05), YoloHead(ANCHORS, [1, 2, 3], 80, 1.05)]
NAMES = [f"c{i}" for i in range(80)]


# ----------------------------------------------------------------------------------------------- resize
def ref_resize_image(img_u8: np.ndarray, w: int, h: int) -> np.ndarray:
    """image.c load_image_stb (/255.) + resize_image, transcribed loop by loop with C float semantics."""
    ih, iw, ch = img_u8.shape
    im = [[[f32(float(img_u8[r, c, k]) / 255.0) for c in range(iw)] for r in range(ih)] for k in range(ch)]

    def get_pixel(m, x, y, k):
        return m[k][y][x]

    if iw == w and ih == h:
        return np.array(im, dtype=f32).transpose(1, 2, 0)
    part = [[[f32(0)] * w for _ in range(ih)] for _ in range(ch)]
    resized = [[[f32(0)] * w for _ in range(h)] for _ in range(ch)]
    w_scale = f32(iw - 1) / f32(w - 1)
    h_scale = f32(ih - 1) / f32(h - 1)
    for k in range(ch):
        for r in range(ih):
            for c in range(w):
                if c == w - 1 or iw == 1:
                    val = get_pixel(im, iw - 1, r, k)
                else:
                    sx = f32(c) * w_scale
                    ix = int(sx)
                    dx = f32(sx - f32(ix))
                    val = f32((f32(1) - dx) * get_pixel(im, ix, r, k)) + f32(dx * get_pixel(im, ix + 1, r, k))
                part[k][r][c] = f32(val)
    for k in range(ch):
        for r in range(h):
            sy = f32(r) * h_scale
            iy = int(sy)
            dy = f32(sy - f32(iy))
            for c in range(w):
                resized[k][r][c] = f32((f32(1) - dy) * get_pixel(part, c, iy, k))
            if r == h - 1 or ih == 1:
                continue
            for c in range(w):
                resized[k][r][c] = f32(resized[k][r][c] + f32(dy * get_pixel(part, c, iy + 1, k)))
    return np.array(resized, dtype=f32).transpose(1, 2, 0)


@pytest.mark.parametrize("src_hw,dst_wh", [((23, 37), (16, 20)),    # 37x23 -> 16x20 (down in x, up in y)
                                           ((11, 9), (25, 31)),     # upscaling both ways
                                           ((40, 50), (13, 7)),     # downscaling both ways
                                           ((1, 9), (5, 4))])       # single-row source
def test_darknet_resize_matches_loop_reference(src_hw, dst_wh):
    rng = np.random.default_rng(sum(src_hw) * 7 + sum(dst_wh))
    img = rng.integers(0, 256, size=(*src_hw, 3), dtype=np.uint8)
    got = darknet_resize(img, *dst_wh)
    ref = ref_resize_image(img, *dst_wh)
    assert got.dtype == np.float32 and got.shape == (dst_wh[1], dst_wh[0], 3)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)
    assert 0.0 <= got.min() and got.max() <= 1.0


def test_darknet_resize_identity_and_errors():
    img = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    np.testing.assert_array_equal(darknet_resize(img, 5, 4), (img / 255.0).astype(f32))
    with pytest.raises(ValueError):
        darknet_resize(img.astype(np.float32), 3, 3)
    with pytest.raises(ValueError):
        darknet_resize(img, 0, 3)


def test_quantize_input_round_half_up_and_clip():
    x = np.array([0.0, 0.5, 1.5, 2.5, -0.5, -1.5, 1000.0, -1000.0], dtype=np.float32)
    q = quantize_input(x, 1.0, 0, 8)
    assert q.dtype == np.int8
    assert q.tolist() == [0, 1, 2, 3, 0, -1, 127, -128]
    q16 = quantize_input(x, 0.5, 10, 16)
    assert q16.dtype == np.int16
    assert q16.tolist() == [10, 11, 13, 15, 9, 7, 2010, -1990]
    # int8-asym input region: scale 1/255, zero point -128 represents every 8-bit pixel exactly
    pix = np.arange(256, dtype=np.uint8).reshape(1, 256, 1).repeat(3, axis=2)
    qp = quantize_input(darknet_resize(pix, 256, 1), 1 / 255, -128, 8)
    np.testing.assert_array_equal(qp[0, :, 0].astype(int), np.arange(256) - 128)
    with pytest.raises(ValueError):
        quantize_input(x, 1.0, 0, 4)


# ------------------------------------------------------------------ the real darknet C library, when installed
LIBDARKNET = Path("/usr/lib/darknet/libdarknet.so")   # Debian package `darknet` (pjreddie 2018; same
                                                      # resize_image / do_nms_sort code as AlexeyAB's)


class _CImage(ctypes.Structure):        # darknet.h: typedef struct { int w, h, c; float *data; } image;
    _fields_ = [("w", ctypes.c_int), ("h", ctypes.c_int), ("c", ctypes.c_int),
                ("data", ctypes.POINTER(ctypes.c_float))]


class _CBox(ctypes.Structure):          # box: x, y (centre), w, h
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float), ("w", ctypes.c_float), ("h", ctypes.c_float)]


class _CDetection(ctypes.Structure):    # pjreddie detection (AlexeyAB appends fields; do_nms_sort is the same)
    _fields_ = [("bbox", _CBox), ("classes", ctypes.c_int), ("prob", ctypes.POINTER(ctypes.c_float)),
                ("mask", ctypes.POINTER(ctypes.c_float)), ("objectness", ctypes.c_float),
                ("sort_class", ctypes.c_int)]


def _libdarknet():
    if not LIBDARKNET.is_file():
        pytest.skip(f"{LIBDARKNET} not installed (apt-get install darknet)")
    lib = ctypes.CDLL(str(LIBDARKNET))
    lib.resize_image.argtypes = [_CImage, ctypes.c_int, ctypes.c_int]
    lib.resize_image.restype = _CImage
    lib.load_image_color.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.load_image_color.restype = _CImage
    lib.free_image.argtypes = [_CImage]
    lib.do_nms_sort.argtypes = [ctypes.POINTER(_CDetection), ctypes.c_int, ctypes.c_int, ctypes.c_float]
    return lib


def _c_image_to_hwc(lib, im) -> np.ndarray:
    a = np.ctypeslib.as_array(im.data, shape=(im.c, im.h, im.w)).transpose(1, 2, 0).copy()
    lib.free_image(im)
    return a


def test_resize_and_load_bit_exact_vs_libdarknet():
    """darknet_resize == the C resize_image, and load_image == load_image_color, on every real image."""
    from generator.eval.data import all_real_images
    lib = _libdarknet()
    try:
        images = all_real_images()
    except Exception as e:  # DataMissingError
        pytest.skip(str(e))
    for name, path in images.items():
        img = load_image(path)
        c_loaded = _c_image_to_hwc(lib, lib.load_image_color(str(path).encode(), 0, 0))
        np.testing.assert_array_equal(c_loaded, (img / 255.0).astype(f32), err_msg=f"{name}: decode differs")
        chw = np.ascontiguousarray((img / 255.0).astype(f32).transpose(2, 0, 1))
        cim = _CImage(img.shape[1], img.shape[0], 3, chw.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        for (w, h) in ((416, 416), (608, 320)):
            ref = _c_image_to_hwc(lib, lib.resize_image(cim, w, h))
            np.testing.assert_array_equal(darknet_resize(img, w, h), ref, err_msg=f"{name} -> {w}x{h}")


def test_nms_vs_libdarknet_do_nms_sort():
    lib = _libdarknet()
    rng = np.random.default_rng(7)
    n, nc = 300, 6
    ctr = rng.uniform(0.2, 0.8, (n, 2)).astype(f32)            # clustered boxes: plenty of overlaps
    wh = rng.uniform(0.05, 0.3, (n, 2)).astype(f32)
    probs = rng.uniform(0, 1, (n, nc)).astype(f32)
    probs[probs < 0.6] = 0.0
    c_probs = probs.copy()
    dets = (_CDetection * n)()
    for i in range(n):
        dets[i].bbox = _CBox(*ctr[i], *wh[i])
        dets[i].classes = nc
        dets[i].prob = c_probs[i].ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        dets[i].objectness = 1.0
    lib.do_nms_sort(dets, n, nc, ctypes.c_float(0.45))          # writes through the prob pointers
    corners = np.concatenate([ctr - wh / 2, ctr + wh / 2], axis=1)
    got = nms(corners, probs, 0.45)
    assert (c_probs == 0).sum() > (probs == 0).sum() + 50        # the C NMS did suppress plenty
    np.testing.assert_array_equal(got, c_probs)


# ----------------------------------------------------------------------------------------------- images
def test_load_image_errors(tmp_path):
    txt = tmp_path / "notes.jpg"
    txt.write_text("this is not an image\n")
    with pytest.raises(ImageError) as e:
        load_image(txt)
    assert str(txt) in str(e.value)
    missing = tmp_path / "nope" / "missing.png"
    with pytest.raises(ImageError) as e:
        load_image(missing)
    assert str(missing) in str(e.value)
    assert isinstance(e.value, ValueError)


def test_load_image_modes(tmp_path):
    from PIL import Image
    rgba = np.zeros((5, 7, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 17
    Image.fromarray(rgba, "RGBA").save(tmp_path / "a.png")
    Image.fromarray(np.full((5, 7), 99, np.uint8), "L").save(tmp_path / "g.png")
    a, g = load_image(tmp_path / "a.png"), load_image(tmp_path / "g.png")
    assert a.shape == g.shape == (5, 7, 3) and a.dtype == np.uint8
    # alpha 17/255 composited on the gray-128 background (issue 11; tests/flows/test_inputs.py checks every mode)
    assert (np.abs(a[..., 0].astype(int) - round(200 * 17 / 255 + 128 * 238 / 255)) <= 1).all()
    assert (g == 99).all()


def _bus():
    from generator.eval.data import DataMissingError, sample_images
    try:
        p = sample_images()["bus"]
    except DataMissingError as e:
        pytest.skip(str(e))
    if not p.is_file():
        pytest.skip(f"{p} missing (run ./setup.sh)")
    return p


def test_load_bus_and_preprocess_layout():
    img = load_image(_bus())
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    q = preprocess(img, 416, 416, 1 / 255, -128, 8)
    assert q.shape == (416, 416, 3) and q.dtype == np.int8
    # NHWC: channel is the last axis and matches the resized RGB image
    x = darknet_resize(img, 416, 416)
    np.testing.assert_array_equal(q, quantize_input(x, 1 / 255, -128, 8))


# ----------------------------------------------------------------------------------------------- decode + nms
def _logistic(x):
    return 1.0 / (1.0 + math.exp(-x))


def ref_detections(heads, yheads, net_w, net_h, img_w, img_h, thresh, nms_thresh):
    """forward_yolo_layer + get_yolo_detections + do_nms_sort + draw_detections_v3 printing, loop by loop."""
    dets = []  # dicts: bbox (x, y, w, h relative), objectness, prob list
    for out, yh in zip(heads, yheads):
        _, C, H, W = out.shape
        nc = yh.classes
        o = out[0].astype(np.float64)
        for i in range(H * W):            # get_yolo_detections: cell-major, anchor minor
            row, col = i // W, i % W
            for n in range(len(yh.mask)):
                base = n * (5 + nc)
                objectness = _logistic(o[base + 4, row, col])
                if not objectness > thresh:
                    continue
                s = yh.scale_x_y
                tx = _logistic(o[base + 0, row, col]) * s - 0.5 * (s - 1)
                ty = _logistic(o[base + 1, row, col]) * s - 0.5 * (s - 1)
                aw, ah = yh.anchors[yh.mask[n]]
                box = ((col + tx) / W, (row + ty) / H,
                       math.exp(o[base + 2, row, col]) * aw / net_w, math.exp(o[base + 3, row, col]) * ah / net_h)
                prob = []
                for j in range(nc):
                    p = objectness * _logistic(o[base + 5 + j, row, col])
                    prob.append(p if p > thresh else 0.0)
                dets.append({"bbox": box, "objectness": objectness, "prob": prob})

    def overlap(x1, w1, x2, w2):
        l1, l2 = x1 - w1 / 2, x2 - w2 / 2
        r1, r2 = x1 + w1 / 2, x2 + w2 / 2
        return min(r1, r2) - max(l1, l2)

    def box_iou(a, b):
        w, h = overlap(a[0], a[2], b[0], b[2]), overlap(a[1], a[3], b[1], b[3])
        inter = 0.0 if (w < 0 or h < 0) else w * h
        union = a[2] * a[3] + b[2] * b[3] - inter
        return inter / union

    total = len(dets)
    nc = yheads[0].classes
    for k in range(nc):                   # do_nms_sort
        dets.sort(key=lambda d: -d["prob"][k])
        for i in range(total):
            if dets[i]["prob"][k] == 0:
                continue
            for j in range(i + 1, total):
                if box_iou(dets[i]["bbox"], dets[j]["bbox"]) > nms_thresh:
                    dets[j]["prob"][k] = 0.0
    found = []
    for d in dets:                        # draw_detections_v3: every class over the threshold
        for j in range(nc):
            if d["prob"][j] > thresh:
                x, y, w, h = d["bbox"]
                box = [(x - w / 2) * img_w, (y - h / 2) * img_h, (x + w / 2) * img_w, (y + h / 2) * img_h]
                box = [max(0.0, box[0]), max(0.0, box[1]), min(img_w - 1.0, box[2]), min(img_h - 1.0, box[3])]
                found.append((j, d["prob"][j], box))
    return found


def random_heads(rng, classes=80, n_planted=6, cluster=True):
    """Realistic raw yolov4-tiny heads: mostly confident-negative objectness, a few planted objects, some in
    neighbouring cells/anchors of the same object so NMS has work to do."""
    heads = []
    for (h, w) in ((13, 13), (26, 26)):
        a = np.empty((1, 3 * (5 + classes), h, w), np.float32)
        for n in range(3):
            b = n * (5 + classes)
            a[0, b:b + 2] = rng.normal(0, 1.5, (2, h, w))
            a[0, b + 2:b + 4] = rng.normal(0, 0.7, (2, h, w))
            a[0, b + 4] = rng.normal(-7, 2.5, (h, w))
            a[0, b + 5:b + 5 + classes] = rng.normal(-6, 2.5, (classes, h, w))
        for _ in range(n_planted):
            r, c, n = rng.integers(1, h - 1), rng.integers(1, w - 1), rng.integers(3)
            cls = rng.integers(classes)
            cells = [(r, c, n)]
            if cluster:
                cells += [(r, c + 1, n), (r + 1, c, n), (r, c, (n + 1) % 3)]
            for (rr, cc, nn) in cells:
                b = nn * (5 + classes)
                a[0, b + 4, rr, cc] = rng.uniform(1.0, 6.0)
                a[0, b + 5 + cls, rr, cc] = rng.uniform(0.5, 6.0)
                if rng.random() < 0.5:    # a second, weaker class on the same box
                    a[0, b + 5 + (cls + 7) % classes, rr, cc] = rng.uniform(-1.0, 2.0)
                a[0, b + 2:b + 4, rr, cc] = rng.normal(0.5, 0.3, 2)
        heads.append(a)
    return heads


@pytest.mark.parametrize("seed", range(6))
def test_detect_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    heads = random_heads(rng, n_planted=4 + seed)
    img_w, img_h = 810, 1080
    got = detect(heads, TINY_HEADS, 416, 416, img_w, img_h, NAMES, thresh=0.25, nms_thresh=0.45)
    ref = ref_detections(heads, TINY_HEADS, 416, 416, img_w, img_h, 0.25, 0.45)
    assert len(ref) > 5, "test data should produce detections"
    assert len(got) == len(ref)
    # the reference has no order requirement; compare as sorted multisets
    key = lambda t: (t[0], round(t[1], 4), [round(v, 1) for v in t[2]])
    g = sorted(((d["class_id"], d["score"], d["box"]) for d in got), key=key)
    r = sorted(ref, key=key)
    for (gc, gs, gb), (rc, rs, rb) in zip(g, r):
        assert gc == rc
        assert gs == pytest.approx(rs, abs=1e-5)
        np.testing.assert_allclose(gb, rb, atol=2e-3)
    scores = [d["score"] for d in got]
    assert scores == sorted(scores, reverse=True)
    for d in got:
        assert d["label"] == NAMES[d["class_id"]]
        x1, y1, x2, y2 = d["box"]
        assert 0 <= x1 <= x2 <= img_w - 1 and 0 <= y1 <= y2 <= img_h - 1


def test_decode_single_planted_box():
    """One hand-computed box: cell (row 4, col 7) of the 13x13 head, anchor mask[1] = (135, 169)."""
    yh = TINY_HEADS[0]
    a = np.full((1, 255, 13, 13), -20.0, np.float32)
    b = 1 * 85
    a[0, b + 0, 4, 7] = 0.0        # sigmoid 0.5 -> 0.5*1.05 - 0.025 = 0.5
    a[0, b + 1, 4, 7] = 0.0
    a[0, b + 2, 4, 7] = 0.0        # exp(0) = 1 -> w = 135/416
    a[0, b + 3, 4, 7] = math.log(2.0)
    a[0, b + 4, 4, 7] = 4.0
    a[0, b + 5 + 3, 4, 7] = 2.0
    boxes, obj, probs = decode(a, yh, 416, 416, 832, 416, 0.25)
    assert boxes.shape == (1, 4) and probs.shape == (1, 80)
    cx, cy = (7 + 0.5) / 13 * 832, (4 + 0.5) / 13 * 416
    w, h = 135 / 416 * 832, 2 * 169 / 416 * 416
    np.testing.assert_allclose(boxes[0], [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], rtol=1e-5)
    assert obj[0] == pytest.approx(_logistic(4.0), rel=1e-6)
    assert probs[0, 3] == pytest.approx(_logistic(4.0) * _logistic(2.0), rel=1e-6)
    assert np.count_nonzero(probs) == 1


def test_nms_greedy_chain():
    """A suppresses B (IoU 0.6 > 0.45); B is then dead, so it does not suppress C although IoU(B, C) > 0.45."""
    boxes = np.array([[0, 0, 10, 10], [2.5, 0, 12.5, 10], [5, 0, 15, 10], [50, 50, 60, 60]], np.float32)
    probs = np.array([[0.9], [0.8], [0.7], [0.6]], np.float32)
    out = nms(boxes, probs, 0.45)
    # IoU(A,B) = 75/125 = 0.6, IoU(A,C) = 50/150 = 0.33, IoU(B,C) = 0.6
    np.testing.assert_allclose(out[:, 0], [0.9, 0.0, 0.7, 0.6])
    assert YoloHead.from_dict({"anchors": [[1, 2]], "mask": [0], "classes": 3, "extra": 1}).scale_x_y == 1.0


# ----------------------------------------------------------------------------------------------- draw
def test_draw_detections(tmp_path):
    from PIL import Image
    from host.draw import draw_detections
    img = np.full((60, 80, 3), 255, np.uint8)
    dets = [{"label": "dog", "class_id": 16, "score": 0.87, "box": [10.0, 20.0, 50.0, 55.0]},
            {"label": "person", "class_id": 0, "score": 0.5, "box": [-5.0, -5.0, 200.0, 300.0]}]
    out = tmp_path / "d.png"
    im = draw_detections(img, dets, out)
    assert isinstance(im, Image.Image) and im.size == (80, 60)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    arr = np.asarray(im)
    assert (arr != 255).any() and (img == 255).all()


# ----------------------------------------------------------------------------------------------- budget
def test_pre_plus_post_processing_time():
    img = load_image(_bus())
    heads = random_heads(np.random.default_rng(123), n_planted=8)
    h, w = img.shape[:2]

    def frame():
        q = preprocess(img, 416, 416, 1 / 255, -128, 8)
        dets = detect(heads, TINY_HEADS, 416, 416, w, h, NAMES)
        return q, dets

    for _ in range(3):
        _, dets = frame()
    assert dets
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        frame()
        times.append((time.perf_counter() - t0) * 1e3)
    med = float(np.median(times))
    print(f"\npre+post processing of bus.jpg ({w}x{h}) -> 416x416 + 2 heads: median {med:.2f} ms "
          f"(min {min(times):.2f}, max {max(times):.2f}), {len(dets)} detections")
    # The budget is for the frame's own work: the fastest of 15 runs is robust to other load on the 2 cores, not
    # to the machine itself (an idle run of this 2-core VM measured minima of 9.8 to 16.0 ms from one run to the
    # next); 30 ms is twice the slowest minimum seen and still far below a per-pixel Python loop (seconds). The
    # median is what docs/measurements.md reports.
    assert min(times) < 30.0


def test_host_imports_without_onnx_or_generator():
    code = ("import sys; sys.modules['onnx']=None; sys.modules['onnxruntime']=None; "
            "sys.modules['generator']=None; sys.modules['scipy']=None; sys.modules['cv2']=None; "
            "import host.preprocess, host.yolo, host.draw, host.manifest, host.registers, host.errors, "
            "host.manifest_check, host.package, host.manifest_types, host.decode")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
