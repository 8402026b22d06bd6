"""Generated bad inputs for the property tests (Hypothesis): a sandbox of valid small inputs (a small darknet
YOLO model, its ONNX conversion, images, a calibration folder, a program) and the mutations drawn on them (bytes:
truncation, flips, inserted garbage, a float32 NaN / Inf / huge value; text: a dropped, duplicated or rewritten
line). Used by ``tests/flows/test_cli_property.py`` and ``tests/host/test_package_property.py``."""
from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import numpy as np
from hypothesis import strategies as st


sys.path.insert(0, str(Path(__file__).resolve().parent / "frontend"))
from test_darknet_small import SMALL_CFG, _random_weights, _write_weights  # noqa: E402

from helpers import invoke  # noqa: E402
#: a flow given bad input must refuse it before any long work: no example may take longer than this (s)
TIMEOUT_S = 240


def make_sandbox(d: Path) -> Path:
    """A folder with a small darknet model (cfg, weights, names), its ONNX conversion, an image, a calibration
    folder and a compiled program.bin: the valid inputs that the examples mutate."""
    from generator.frontend.darknet import darknet_to_onnx
    from generator.eval import data
    from PIL import Image

    (d / "small.cfg").write_text(SMALL_CFG)
    _write_weights(d / "small.weights", _random_weights(np.random.default_rng(20261128)))
    (d / "small.names").write_text("cat\ndog\n")
    darknet_to_onnx(str(d / "small.cfg"), str(d / "small.weights"), str(d / "small.onnx"),
                    names=str(d / "small.names"))
    with Image.open(data.sample_images()["bus"]) as im:
        im.convert("RGB").resize((96, 128)).save(d / "image.jpg", quality=90)
        im.convert("RGB").resize((64, 48)).save(d / "image.png")
    (d / "calib").mkdir()
    shutil.copy(d / "image.jpg", d / "calib" / "a.jpg")
    shutil.copy(d / "image.png", d / "calib" / "b.png")
    r = run_invoke(["compile", "--model", str(d / "small.onnx"), "--out", str(d / "compiled")])
    assert r.returncode == 0, r.stderr[-2000:]
    shutil.copy(d / "compiled" / "program.bin", d / "program.bin")
    shutil.rmtree(d / "compiled")
    return d


def run_invoke(args):
    """``invoke ARGS`` in a subprocess from the repository root (:func:`helpers.invoke`, :data:`TIMEOUT_S`)."""
    return invoke(*args, timeout=TIMEOUT_S)


# ------------------------------------------------------------------------------------------------- the mutations
def mutate(blob: bytes, how: tuple) -> bytes:
    """Apply one drawn mutation to a file's bytes: ("truncate", fraction), ("flip", [(pos fraction, xor)]),
    ("garbage", pos fraction, bytes), ("nan", pos fraction) (four bytes of a float32 NaN / Inf)."""
    kind = how[0]
    n = len(blob)
    if kind == "truncate":
        return blob[:int(n * how[1])]
    b = bytearray(blob)
    if kind == "flip":
        for f, x in how[1]:
            if n:
                b[min(int(f * n), n - 1)] ^= x
        return bytes(b)
    if kind == "garbage":
        k = int(how[1] * n)
        return bytes(b[:k]) + how[2] + bytes(b[k:])
    if kind == "float":   # a float32 NaN / Inf / huge value written over 4 aligned bytes (weights, initializers)
        k = (int(how[1] * max(n - 4, 0)) // 4) * 4
        b[k:k + 4] = np.array([how[2]], "<f4").tobytes()
        return bytes(b)
    raise AssertionError(kind)


#: a position in a file as a fraction of its length, in [0, 1] (drawn as an integer: shrinks to the start)
FRACTION = st.integers(0, 4096).map(lambda k: k / 4096)

MUTATIONS = st.one_of(
    st.tuples(st.just("truncate"), FRACTION.map(lambda f: f * 0.999)),
    st.tuples(st.just("flip"), st.lists(st.tuples(FRACTION, st.integers(1, 255)), min_size=1, max_size=16)),
    st.tuples(st.just("garbage"), FRACTION, st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("float"), FRACTION, st.sampled_from([math.nan, math.inf, -math.inf, 3e38, -1.0])))


def mutate_text(text: str, how: tuple) -> str:
    """A line-level mutation of a text file (cfg, names): ("drop", line), ("dup", line), ("value", line, new)
    (the value after ``=`` replaced)."""
    lines = text.splitlines()
    if not lines:
        return text
    i = int(how[1] * (len(lines) - 1))
    if how[0] == "drop":
        del lines[i]
    elif how[0] == "dup":
        lines.insert(i, lines[i])
    elif how[0] == "value":
        if "=" in lines[i]:
            lines[i] = lines[i].split("=", 1)[0] + "=" + how[2]
        else:
            lines[i] = how[2]
    return "\n".join(lines) + "\n"


TEXT_MUTATIONS = st.one_of(
    st.tuples(st.sampled_from(["drop", "dup"]), FRACTION),
    st.tuples(st.just("value"), FRACTION,
              st.one_of(st.sampled_from(["nan", "inf", "-1", "0", "1e30", "", "1,2,3", "abc", "-0.5", "9999999"]),
                        st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=12))))
