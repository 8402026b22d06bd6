"""Odd inputs handled correctly (issue 11): image modes and EXIF orientation (host/preprocess.py load_image), class
names and YOLO parameters from the model (generator/flows/pipeline.py), artifact keys, non-overlapping captions
(host/draw.py label_boxes), ``invoke TASK --help`` for every task."""
from generator import ROOT_DIR
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from PIL import Image

from generator.eval import data
from generator.flows.pipeline import (calib_cache_path, compile_model, detections_from_heads, model_key, quantize_image,
                                resolve_class_names)
from generator.frontend.darknet import darknet_to_onnx
from generator.exec import run_golden
from host.draw import label_boxes
from host.preprocess import BACKGROUND, ImageError, load_image

ROOT = ROOT_DIR
INVOKE = str(Path(sys.executable).parent / "invoke")
BUS = data.all_real_images()["bus"]


def _invoke(*args, timeout=300):
    return subprocess.run([INVOKE, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _png16(path, a16):
    """Write uint16 [H, W, 3] as a 48-bit RGB PNG (Pillow has no 16-bit RGB mode to save from)."""
    h, w, _ = a16.shape
    raw = b"".join(b"\x00" + a16[y].astype(">u2").tobytes() for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _composite(rgb, alpha):
    """Independent alpha compositing on BACKGROUND (float, rounded)."""
    a = alpha.astype(np.float64)[..., None] / 255
    return np.round(rgb.astype(np.float64) * a + np.array(BACKGROUND, np.float64) * (1 - a))


# ---------------------------------------------------------------------------------------------------- image modes

RNG = np.random.default_rng(11)
RGB = RNG.integers(0, 256, (9, 13, 3), dtype=np.uint8)
ALPHA = RNG.integers(0, 256, (9, 13), dtype=np.uint8)
ALPHA[0, :3] = (0, 255, 128)


def _case(mode, tmp_path):
    """(file written in MODE, independently computed expected RGB float array, tolerance in levels)."""
    if mode == "L":
        g = RGB[..., 0]
        Image.fromarray(g, "L").save(tmp_path / "x.png")
        return tmp_path / "x.png", np.repeat(g[..., None], 3, 2), 0
    if mode == "I;16":
        v = RNG.integers(0, 65536, RGB.shape[:2]).astype(np.uint16)
        v[0, :3] = (0, 65535, 32896)
        Image.fromarray(v).save(tmp_path / "x.png")
        assert Image.open(tmp_path / "x.png").mode == "I;16"
        return tmp_path / "x.png", np.repeat(np.floor(v / 257 + 0.5)[..., None], 3, 2), 0
    if mode == "RGB48":
        v = RNG.integers(0, 65536, RGB.shape).astype(np.uint16)
        _png16(tmp_path / "x.png", v)
        return tmp_path / "x.png", v >> 8, 0       # Pillow's decoder keeps the high byte
    if mode == "P":
        im = Image.fromarray(RGB).quantize(16)
        im.save(tmp_path / "x.png")
        pal = np.array(im.getpalette(), np.uint8).reshape(-1, 3)
        return tmp_path / "x.png", pal[np.asarray(im)], 0
    if mode == "P+transparency":
        im = Image.fromarray(RGB).quantize(16)
        idx = np.asarray(im)
        t = int(idx[4, 4])
        im.info["transparency"] = t
        im.save(tmp_path / "x.png", transparency=t)
        pal = np.array(im.getpalette(), np.uint8).reshape(-1, 3)
        exp = pal[idx].astype(np.float64)
        exp[idx == t] = BACKGROUND
        return tmp_path / "x.png", exp, 0
    if mode == "RGBA":
        Image.fromarray(np.dstack([RGB, ALPHA]), "RGBA").save(tmp_path / "x.png")
        return tmp_path / "x.png", _composite(RGB, ALPHA), 1
    if mode == "LA":
        g = RGB[..., 1]
        Image.fromarray(np.dstack([g, ALPHA]), "LA").save(tmp_path / "x.png")
        return tmp_path / "x.png", _composite(np.repeat(g[..., None], 3, 2), ALPHA), 1
    if mode == "CMYK":
        cmyk = RNG.integers(0, 256, (9, 13, 4), dtype=np.uint8)
        Image.fromarray(cmyk, "CMYK").save(tmp_path / "x.tif")
        c = cmyk.astype(np.float64)
        exp = (255 - c[..., :3]) * (255 - c[..., 3:]) / 255
        return tmp_path / "x.tif", np.round(exp), 1
    raise AssertionError(mode)


@pytest.mark.parametrize("mode", ["L", "I;16", "RGB48", "P", "P+transparency", "RGBA", "LA", "CMYK"])
def test_image_modes_convert_to_rgb8(tmp_path, mode):
    path, expected, tol = _case(mode, tmp_path)
    got = load_image(path)
    assert got.dtype == np.uint8 and got.shape == RGB.shape and got.flags.c_contiguous
    assert np.abs(got.astype(np.float64) - expected).max() <= tol


def test_unsupported_mode_is_an_image_error(tmp_path):
    Image.fromarray(np.zeros((4, 4), np.float32) + 0.5, "F").save(tmp_path / "f.tif")
    with pytest.raises(ImageError, match=r"f\.tif: .*'F'"):
        load_image(tmp_path / "f.tif")


def test_sixteen_bit_gray_is_not_clipped(tmp_path):
    """The reported bug: a 16-bit PNG became all white. 8-bit levels stored as v*257 come back exactly."""
    g8 = np.asarray(Image.open(BUS).convert("L"))
    Image.fromarray(g8.astype(np.uint16) * 257).save(tmp_path / "bus16.png")
    got = load_image(tmp_path / "bus16.png")
    assert np.array_equal(got, np.repeat(g8[..., None], 3, 2))


# ---------------------------------------------------------------------------- whole frames through the simulator

@pytest.fixture(scope="module")
def compiled():
    return compile_model("zcu19eg", "int8-asym", progress=False, require_detection=True)


def _detect(comp, img):
    heads, _, _, _ = run_golden(comp.program, comp.qgraph, quantize_image(comp, img), progress=False)
    return detections_from_heads(comp, heads, img.shape[1], img.shape[0])


def _iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / u


def _persons(dets):
    return sorted((d["box"] for d in dets if d["label"] == "person"), key=lambda b: b[0])


@pytest.fixture(scope="module")
def plain(compiled):
    img = load_image(BUS)
    return img, _detect(compiled, img)


def test_48bit_png_of_bus_gives_the_same_detections(compiled, plain, tmp_path):
    img, dets = plain
    _png16(tmp_path / "bus48.png", img.astype(np.uint16) * 257)
    got = load_image(tmp_path / "bus48.png")
    assert np.array_equal(got, img)
    d48 = _detect(compiled, got)
    assert len(_persons(dets)) == 3 and d48 == dets


def _exif_rotated_jpeg(path):
    """bus.jpg stored rotated 90 degrees counter-clockwise with EXIF orientation 6 ("rotate 90 CW to view")."""
    im = Image.open(BUS).transpose(Image.Transpose.ROTATE_90)
    exif = Image.Exif()
    exif[0x0112] = 6
    im.save(path, quality=95, exif=exif)


def test_exif_rotated_jpeg_gives_upright_persons(compiled, plain, tmp_path):
    img, dets = plain
    p = tmp_path / "bus_rot.jpg"
    _exif_rotated_jpeg(p)
    assert load_image(p, exif_transpose=False).shape == (810, 1080, 3)     # the stored, sideways grid
    up = load_image(p)
    assert up.shape == img.shape == (1080, 810, 3)
    assert np.abs(up.astype(int) - img.astype(int)).mean() < 3              # only JPEG re-encoding noise
    got, want = _persons(_detect(compiled, up)), _persons(dets)
    assert len(got) == len(want) == 3
    for a, b in zip(got, want):
        assert _iou(a, b) > 0.85, (a, b)


def test_invoke_detect_draws_the_upright_image(tmp_path):
    p = tmp_path / "bus_rot.jpg"
    _exif_rotated_jpeg(p)
    r = _invoke("detect", "--image", str(p), "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert Image.open(tmp_path / "o" / "detections.png").size == (810, 1080)
    dets = json.loads((tmp_path / "o" / "detections.json").read_text())
    persons = _persons(dets)
    assert len(persons) == 3 and all(b[3] > b[1] + 300 for b in persons)    # standing people: tall boxes
    assert (tmp_path / "o" / "artifacts" / "program.bin").is_file()       # artifacts under --out
    assert not list(tmp_path.glob("o/*/*/program.bin"))


# -------------------------------------------------------------------------------------- names and model metadata

def _names_cfg(tmp_path, names_line):
    cfg = data.yolov4_tiny_cfg().read_text().replace("[net]\n", f"[net]\n{names_line}\n", 1)
    assert names_line in cfg
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "my.cfg").write_text(cfg)
    return tmp_path / "m" / "my.cfg"


def test_names_come_from_the_cfg(tmp_path):
    names = [f"thing{i}" for i in range(80)]
    names[0] = "human"
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "my.names").write_text("\n".join(names) + "\n")
    cfg = _names_cfg(tmp_path, "names=my.names")                 # relative to the cfg's folder, not the cwd
    model = darknet_to_onnx(cfg, data.yolov4_tiny_weights(), tmp_path / "my.onnx")
    meta = {p.key: json.loads(p.value) for p in model.metadata_props}
    assert meta["class_names"] == names
    c = compile_model("zcu19eg", "int8-asym", model=tmp_path / "my.onnx", progress=False, require_detection=True)
    assert c.names == names
    img = load_image(BUS)
    labels = {d["label"] for d in _detect(c, img)}
    assert "human" in labels and "person" not in labels
    # --names overrides the model's
    assert resolve_class_names(meta, [f"n{i}" for i in range(80)])[0] == "n0"


def test_names_count_must_match_classes(tmp_path):
    from generator.frontend.darknet import DarknetError
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "few.names").write_text("a\nb\n")
    cfg = _names_cfg(tmp_path, "names=few.names")
    with pytest.raises(DarknetError, match=r"few\.names: 2 class names, but \[yolo\] at my\.cfg:\d+ has classes=80"):
        darknet_to_onnx(cfg, data.yolov4_tiny_weights())
    cfg = _names_cfg(tmp_path, "names=missing.names")
    with pytest.raises(DarknetError, match=r"my\.cfg:2 \[net\]: names=missing\.names: no such file"):
        darknet_to_onnx(cfg, data.yolov4_tiny_weights())


def test_onnx_without_yolo_metadata(compiled, tmp_path):
    """Fails before any simulation, naming the options; --yolo-cfg + --names make it compile for detection."""
    m = onnx.load(str(compiled.model_path))
    del m.metadata_props[:]
    bare = tmp_path / "bare.onnx"
    onnx.save(m, str(bare))
    r = _invoke("detect", "--model", str(bare), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "no YOLO head parameters" in r.stderr and "--yolo-cfg" in r.stderr
    assert "golden simulator" not in r.stdout and not (tmp_path / "o" / "artifacts").exists()
    d = data.yolov4_tiny_dir()
    c = compile_model("zcu19eg", "int8-asym", model=bare, progress=False, yolo_cfg=d / "yolov4-tiny.cfg",
                      names=d / "coco.names", require_detection=True)
    assert [y["mask"] for y in c.qgraph.metadata["darknet_yolo"]] == [[3, 4, 5], [1, 2, 3]]
    assert c.names == data.coco_names()


def test_model_key_separates_models_with_the_same_stem(compiled, tmp_path):
    other = tmp_path / compiled.model_path.name
    m = onnx.load(str(compiled.model_path))
    del m.metadata_props[:]
    onnx.save(m, str(other))
    assert other.stem == compiled.model_path.stem
    assert model_key(other) != model_key(compiled.model_path)
    assert model_key(other).startswith(other.stem + "-")
    assert calib_cache_path(other) != calib_cache_path(compiled.model_path)


# ----------------------------------------------------------------------------------------------------- captions

def _disjoint(rects):
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1]):
                return False
    return True


def test_labels_do_not_overlap_and_stay_inside(plain):
    img, dets = plain
    h, w = img.shape[:2]
    crowded = list(dets)
    crowded += [{"label": f"cls{i}", "class_id": i, "score": 0.5, "box": [100 + 3 * i, 50, 300, 400]}
                for i in range(12)]                                  # twelve boxes sharing a top edge
    crowded += [{"label": "edge", "class_id": 1, "score": 0.9, "box": [w - 5, 0, w + 40, 20]},   # at the corner
                {"label": "edge", "class_id": 2, "score": 0.9, "box": [-30, h - 10, 10, h + 5]}]
    rng = np.random.default_rng(0)
    many = [{"label": "person", "score": 0.5, "box": [*rng.uniform(0, 300, 2), *rng.uniform(300, 600, 2)]}
            for _ in range(100)]                                     # 100 overlapping boxes in a 640x480 frame
    for ds, w, h in ((dets, w, h), (crowded, w, h), (many, 640, 480)):
        rects = label_boxes(ds, w, h)
        assert len(rects) == len(ds)
        assert _disjoint(rects)
        assert all(0 <= r[0] < r[2] <= w and 0 <= r[1] < r[3] <= h for r in rects)


# ------------------------------------------------------------------------------------------------------ CLI help

def test_help_works_for_every_task():
    r = _invoke("--list")
    tasks = [l.split()[0] for l in r.stdout.splitlines()[2:] if l.startswith("  ") and not l.startswith("   ")]
    assert {"compile", "detect", "build", "package", "disasm"} <= set(tasks)
    for t in tasks:
        r = _invoke(t, "--help")
        assert r.returncode == 0 and "Usage:" in r.stdout and f" {t} " in r.stdout, (t, r.stdout, r.stderr)


def test_compile_from_darknet_files_writes_everything_under_out(tmp_path):
    d = data.yolov4_tiny_dir()
    r = _invoke("compile", "--cfg", str(d / "yolov4-tiny.cfg"), "--weights", str(d / "yolov4-tiny.weights"),
                "--names", str(d / "coco.names"), "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "manifest.json", "program.asm", "program.bin", "schedule.png", "schedule.txt", "weights.bin",
        "yolov4-tiny.onnx"]
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert m["names"] == data.coco_names()
    # the calibration choices: every region's method (the graph outputs per channel, as their scale lists say)
    # and every convolution's bias correction
    cal = m["calibration"]
    assert {r["name"] for r in m["regions"]} == set(cal["regions"])
    for h in m["heads"]:
        assert cal["regions"][h["region"]]["method"] == "minmax per channel" and len(h["scale"]) == h["channels"]
    assert {v["method"] for v in cal["regions"].values()} <= {"input", "minmax", "percentile", "mse", "kl",
                                                              "minmax per channel"}
    assert len(cal["bias_correction"]) == len(m["layers"])


def test_calib_folder_is_what_calibration_uses(tmp_path, monkeypatch):
    """``--calib DIR``: the ranges are those of calibrate() on exactly the folder's images (non-image files
    ignored), cached apart from the shipped set's; a missing or image-less folder is refused with its name."""
    from generator.flows import calibration, pipeline
    from generator.flows.inputs import FlowError
    from generator.flows.request import ModelSource, Target, compile_request
    from generator.frontend.modelgen import Builder
    from generator.quant.quantize import calibrate
    from host.preprocess import darknet_resize

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    b = Builder([1, 3, 32, 32], seed=4)
    m = tmp_path / "m.onnx"
    m.write_bytes(b.model([b.conv(b.leaky(b.conv("x", 8, k=3)), 4, k=1)]).SerializeToString())
    cal = tmp_path / "cal"
    cal.mkdir()
    shipped = dict(data.debian_images())
    for n in ("dog", "eagle"):
        (cal / f"{n}.jpg").write_bytes(Path(shipped[n]).read_bytes())
    (cal / "notes.txt").write_text("not an image")
    c = compile_model("zcu19eg", "int8-asym", model=str(m), progress=False, calib=str(cal))
    xs = [darknet_resize(load_image(cal / f), 32, 32).transpose(2, 0, 1)[None] for f in ("dog.jpg", "eagle.jpg")]
    want = calibrate(c.graph, xs, progress=False, input_range=(0.0, 1.0))
    got = pipeline.calibration_ranges(c.graph, m, progress=False, calib=str(cal))
    assert set(got) == set(want) and all(got[k] == pytest.approx(want[k]) for k in want)
    default = pipeline.calibration_ranges(c.graph, m, progress=False)
    assert default != got
    # the ranges of the equalized graph (compile_model's default) for the folder's set and for the shipped set
    caches = {p.name for p in calib_cache_path(m).parent.iterdir() if p.name.startswith("calib")}
    own = sorted(caches - {f"calib-eq{pipeline.EQUALIZE_ALPHA:g}.json"})
    assert len(caches) == 2 and len(own) == 1 and own[0].startswith("calib-"), caches
    assert json.loads((calib_cache_path(m).parent / own[0]).read_text())["image_files"] == ["dog.jpg", "eagle.jpg"]
    with pytest.raises(FlowError, match="--calib .*nothere: no such folder"):
        compile_request(Target(), ModelSource(str(m), calib=str(tmp_path / "nothere")), progress=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FlowError, match="--calib .*empty: no image files"):
        compile_request(Target(), ModelSource(str(m), calib=str(tmp_path / "empty")), progress=False)
