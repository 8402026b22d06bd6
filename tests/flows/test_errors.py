"""Bad input gives a clear error naming what was wrong and where, never a traceback or a wrong result."""
from generator import ROOT_DIR
from pathlib import Path

import numpy as np
import pytest

from generator.spec.board import BoardError, load_board
from generator.codegen import ScheduleError
from generator.frontend.onnx_loader import load_onnx
from generator.ir.graph import GraphError
from generator.quant.quantize import QuantConfig, QuantError
from helpers import board, compile_small
from generator.frontend.modelgen import Builder
from helpers import invoke as _invoke, one_line_error as _one_line_error  # noqa: E402

ROOT = ROOT_DIR





def test_unknown_board_lists_known_boards():
    with pytest.raises(BoardError, match="unknown board 'zcu999'.*zcu102.*zcu19eg"):
        load_board("zcu999")
    r = _invoke("compile", "--board", "zcu999")
    assert r.returncode == 2 and "unknown board 'zcu999'" in r.stderr and "Traceback" not in r.stderr


def test_bad_board_key_is_named(tmp_path):
    text = (ROOT / "boards" / "zcu19eg.yaml").read_text().replace("tn: 32", "tnn: 32")
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(BoardError, match=r"accelerator\.tnn"):
        load_board(p)


def test_image_that_is_not_an_image(tmp_path):
    f = tmp_path / "notes.jpg"
    f.write_text("this is text, not a JPEG")
    r = _invoke("detect", "--image", str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "notes.jpg" in r.stderr and "Traceback" not in r.stderr
    r = _invoke("detect", "--image", str(tmp_path / "missing.png"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "missing.png" in r.stderr


def test_unsupported_ops_are_all_listed():
    b = Builder([1, 4, 8, 8])
    y = b.conv("x", 4)
    s = b.op("Softmax", [y], [1, 4, 8, 8], axis=1)
    z = b.op("Sin", [s], [1, 4, 8, 8])
    w = b.conv(z, 4)
    with pytest.raises(GraphError, match=r"2 unsupported ONNX node\(s\), by op type:\n  Sin x 1: Sin_\w+\n"
                                         r"  Softmax x 1: Softmax_\w+\nsupported ops: Add, AveragePool"):
        load_onnx(b.model([w]))


def test_unsupported_listing_names_every_node_grouped_and_wrapped():
    """A YOLOX-like stem (Focus: four spatial slices, a quotient x / Erf(x), a residual Add) is refused with every
    unsupported node named once (the Focus folds into its convolution and the residual Adds compile; Erf has no
    table, a quotient of two tensors no unit and a stride-2 row slice outside a Focus no layer), grouped by op type
    with counts, the spatial Slice and the quotients with their reason, every line at most 100 characters, then the
    supported ops."""
    b = Builder([1, 3, 16, 16])
    sl = []
    for hs, ws in ((0, 0), (1, 0), (0, 1), (1, 1)):
        sl.append(b.op("Slice", ["x", b.const(np.array([hs, ws], np.int64)), b.const(np.array([16, 16], np.int64)),
                                 b.const(np.array([2, 3], np.int64)), b.const(np.array([2, 2], np.int64))],
                       [1, 3, 8, 8]))
    y = b.conv(b.concat(*sl), 8)
    for _ in range(3):
        s = b.op("Erf", [y], [1, 8, 8, 8])
        m = b.op("Div", [y, s], [1, 8, 8, 8])
        y = b.op("Add", [b.conv(m, 8), y], [1, 8, 8, 8])
    rows = b.op("Slice", [y, b.const(np.array([0], np.int64)), b.const(np.array([8], np.int64)),
                          b.const(np.array([2], np.int64)), b.const(np.array([2], np.int64))], [1, 8, 4, 8])
    with pytest.raises(GraphError) as e:
        load_onnx(b.model([b.conv(rows, 4)]))
    msg = str(e.value)
    lines = msg.splitlines()
    assert lines[0] == "7 unsupported ONNX node(s), by op type:"
    assert [ln.split(":")[0].strip() for ln in lines if ln.startswith("  ") and not ln.startswith("   ")] == [
        "Div x 3 (a quotient of two tensors)", "Erf x 3",
        "Slice x 1 (not a channel slice (axis 1, step 1) nor part of a Focus)"]
    assert all(len(ln) <= 100 for ln in lines)
    body = lines[1:next(i for i, ln in enumerate(lines) if ln.startswith("supported ops"))]
    names = [n.strip() for ln in body for n in ln.split(": ", 1)[-1].split(",")]
    assert sorted(n for n in names if n) == sorted(set(n for n in names if n)) and len([n for n in names if n]) == 7
    assert "supported ops: Add, AveragePool, BatchNormalization" in msg


def test_unsupported_tail_runs_on_the_host():
    b = Builder([1, 4, 8, 8])
    y = b.conv("x", 6)
    s = b.op("Sigmoid", [y], [1, 6, 8, 8])
    t = b.op("Reshape", [s, b.const(np.array([1, 6, 64], np.int64))], [1, 6, 64])
    g = load_onnx(b.model([t]))
    assert g.outputs == [y]
    assert [n["op"] for n in g.metadata["host_tail"]] == ["Sigmoid", "Reshape"]


def test_accumulator_overflow_is_an_error_not_a_wrong_result():
    b = Builder([1, 64, 6, 6])
    m = b.model([b.conv("x", 8, k=3, scale=1.0)])
    with pytest.raises(QuantError, match=r"layer \w+: accumulator could overflow.*16-bit"):
        compile_small(m, "int8-asym", brd=board(acc_bits_int8=16))


def test_layer_that_fits_no_buffer_names_the_layer():
    b = Builder([1, 64, 40, 40])
    m = b.model([b.conv("x", 64, k=3)])
    with pytest.raises(ScheduleError, match=r"layer \w+: no tiling fits the buffers"):
        compile_small(m, "int8-asym", brd=board(ibuf_bank_bytes=256))


def test_unknown_quant_mode():
    with pytest.raises(QuantError, match="int8-asym"):
        QuantConfig.from_mode("int4")





def _typo_cfg(tmp_path, old, new):
    from generator.eval import data

    text = data.yolov4_tiny_cfg().read_text()
    assert old in text
    p = tmp_path / "typo.cfg"
    p.write_text(text.replace(old, new, 1))
    line = text[:text.index(old)].count("\n") + 1
    return p, line


@pytest.mark.parametrize("old,new,hint", [("pad=1", "pd=1", "did you mean 'pad'?"),
                                          ("activation=leaky", "activaton=leaky", "did you mean 'activation'?")])
def test_cfg_typo_is_named_with_the_nearest_key(tmp_path, old, new, hint):
    from generator.eval import data

    cfg, line = _typo_cfg(tmp_path, old, new)
    key = new.split("=")[0]
    r = _invoke("compile", "--cfg", str(cfg), "--weights", str(data.yolov4_tiny_weights()),
                "--out", str(tmp_path / "o"))
    _one_line_error(r, f"typo.cfg:{line} [convolutional]: unknown key '{key}'", hint)
    assert "logistic" not in r.stderr


def test_empty_onnx(tmp_path):
    (tmp_path / "empty.onnx").write_bytes(b"")
    _one_line_error(_invoke("compile", "--model", str(tmp_path / "empty.onnx")), "empty.onnx", "empty file")
    r = _invoke("detect", "--model", str(tmp_path / "empty.onnx"), "--out", str(tmp_path / "o"))
    _one_line_error(r, "empty.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"\x07not a protobuf" * 50)
    _one_line_error(_invoke("compile", "--model", str(tmp_path / "junk.onnx")), "junk.onnx")


def test_disasm_missing_program(tmp_path):
    _one_line_error(_invoke("disasm", "--program", str(tmp_path / "missing.bin")), "missing.bin", "no such file")
    (tmp_path / "empty.bin").write_bytes(b"")
    _one_line_error(_invoke("disasm", "--program", str(tmp_path / "empty.bin")), "empty.bin", "empty file")


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    for task in ("compile", "detect", "build", "package"):
        r = _invoke(task, "--out", str(f))
        _one_line_error(r, str(f), "not a folder")
        assert "compiled in" not in r.stdout and "golden simulator" not in r.stdout
        r = _invoke(task, "--out", str(f / "sub"))                  # a folder under a file cannot be created
        _one_line_error(r, str(f / "sub"), "not writable")
    assert f.read_text() == "x"


def test_out_that_cannot_be_written(tmp_path):
    """An existing folder where no file can be created: /proc/self refuses new files even to root (tests run as
    root here, and root ignores permission bits, so a chmod 555 folder would not test the probe)."""
    if Path("/proc/self").is_dir():
        _one_line_error(_invoke("detect", "--out", "/proc/self"), "/proc/self", "not writable")
    import os
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.geteuid() != 0:      # permission bits do not stop root: only /proc/self above tests the probe then
            _one_line_error(_invoke("compile", "--out", str(ro)), str(ro), "not writable")
    finally:
        ro.chmod(0o755)
