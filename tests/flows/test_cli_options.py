"""The command line's options (issue 41, defects 5, 9, 11): every bad option value exits 2 with one ``error:`` line
naming the option, never a traceback nor a silent success; ``invoke disasm`` streams the program (``--limit`` reads
only what it prints) and names the index of a bad instruction; an image whose header claims a huge size is refused
by name through ``--image`` and ``--calib``; ``--input-size`` reaches the flows as ``input_size=(H, W)``."""
from __future__ import annotations

import io
import struct
import time
import zlib
from pathlib import Path

import pytest
from invoke import Context
from PIL import Image

from generator.spec import isa
from helpers import invoke as _invoke, one_line_error as _one_line_error  # noqa: E402






def forged_png(path: Path, width: int, height: int) -> Path:
    """A 1x1 PNG whose IHDR claims ``width`` x ``height`` (its CRC recomputed, so the header is valid)."""
    b = io.BytesIO()
    Image.new("RGB", (1, 1)).save(b, "PNG")
    d = bytearray(b.getvalue())
    d[16:24] = struct.pack(">II", width, height)                      # IHDR data starts at byte 16
    d[29:33] = struct.pack(">I", zlib.crc32(bytes(d[12:29])))         # CRC over the chunk type and data
    path.write_bytes(bytes(d))
    return path


# ------------------------------------------------------------------------------------------- bad option values
BAD_OPTIONS = [
    (("disasm", "--limit", "abc"), "--limit abc: not an integer"),
    (("disasm", "--limit", "-1488"), "--limit -1488: must be >= 0"),
    (("disasm", "--limit=2.5"), "--limit 2.5: not an integer"),
    (("fuzz", "--cases", "abc"), "--cases abc: not an integer"),
    (("fuzz", "--cases", "-3"), "--cases -3"),
    (("fuzz", "--seed", "x"), "--seed x: not an integer"),
    (("fuzz", "--case", "-1"), "--case -1"),
    (("rtl-frame", "--resolution", "abc"), "--resolution abc: not an integer"),
    (("rtl-frame", "--resolution", "100"), "--resolution 100: not a multiple of 32"),
    (("rtl-frame", "--config", "bogus"), "--config bogus"),
    (("accuracy", "--images", "-3"), "--images -3: must be >= 0"),
    (("compile", "--quant", "int4"), "--quant int4"),
    (("explore", "--quant", "int8-asym,int4"), "--quant int4"),
    (("package", "--kernel", "bogus"), "--kernel bogus"),
    (("compile", "--input-size", "abc"), "--input-size abc"),
    (("detect", "--input-size", "0x640"), "--input-size 0x640"),
    (("disasm", "--bogus", "1"), "--bogus: unknown option"),
    (("nosuchtask",), "nosuchtask: unknown task"),
    (("disasm", "--limit"), "--limit: needs a value"),
]


@pytest.mark.parametrize("args,needle", BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_option_value_is_one_error_line(args, needle):
    r = _invoke(*args, timeout=60)
    _one_line_error(r, needle)
    assert not r.stdout.strip(), r.stdout[-500:]         # nothing done before the refusal


def test_input_size_parser():
    from generator.flows.cli import input_size_option

    assert input_size_option(None) is None
    assert input_size_option("640x480") == (640, 480)
    assert input_size_option("384X640") == (384, 640)
    assert input_size_option("320") == (320, 320)
    for bad in ("", "x", "640x", "6.4x6", "-640", "1x2x3", "0"):
        with pytest.raises(SystemExit) as e:
            input_size_option(bad)
        assert e.value.code == 2


@pytest.mark.parametrize("task,module,fn", [("compile", "compile", "compile_flow"), ("detect", "detect", "detect_flow"),
                                            ("compare", "compare", "compare_flow"), ("build", "build", "build_flow"),
                                            ("build", "build", "build_rtl_flow"),
                                            ("package", "package", "package_flow")])
def test_one_request_reaches_the_flow(monkeypatch, task, module, fn):
    """Every task hands its flow one compile request: a Target (board, mode, per-channel, precision) and a
    ModelSource (model, input size, ...) built from its options, ``--input-size HxW`` as (H, W), ``--precision``
    as given; the defaults are the request's own (one place: generator/flows/request.py)."""
    from generator.flows.request import ModelSource, Target

    import importlib

    import tasks

    calls = []

    class Stop(Exception):
        pass

    def fake(*args, **kw):
        calls.append([a for a in args if isinstance(a, (Target, ModelSource))])
        raise Stop

    monkeypatch.setattr(importlib.import_module(f"generator.flows.{module}"), fn, fake)
    extra = {"kernel": "rtl"} if fn == "build_rtl_flow" else {}
    for given, expected, prec in (("640x480", (640, 480), "auto:22"), (None, None, None)):
        with pytest.raises(Stop):
            getattr(tasks, task)(Context(), input_size=given, precision=prec, **extra)
        target, source = calls[-1]
        assert source.input_size == expected and target.precision == prec
        assert (target.board, target.quant, target.per_channel) == (Target().board, Target().quant, True)


# ---------------------------------------------------------------------------------------------------- disasm
def test_disasm_limit_reads_only_what_it_prints(tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(320 << 20)                  # 320 MB of zeros, sparse: ten million NOP words
    t0 = time.time()
    r = _invoke("disasm", "--program", str(big), "--limit", "3", timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines() == [isa.disasm(isa.decode(bytes(isa.INSN_BYTES)), k) for k in range(3)]
    assert time.time() - t0 < 30


def _program(*words: bytes) -> bytes:
    return b"".join(words)


def test_disasm_names_the_bad_instruction(tmp_path):
    good = isa.encode(isa.make("LOAD", buf=1, ddr_offset=0x40))
    bad = bytes([9]) + bytes(isa.INSN_BYTES - 1)                       # opcode 9: illegal
    p = tmp_path / "p.bin"
    p.write_bytes(_program(good, good, bad, good))
    r = _invoke("disasm", "--program", str(p))
    _one_line_error(r, "p.bin", "instruction 2", "byte offset 64", "illegal opcode 9")
    assert r.stdout.splitlines() == [isa.disasm(isa.decode(good), k) for k in range(2)]   # what decodes, printed
    r = _invoke("disasm", "--program", str(p), "--limit", "2")                           # the bad word unread
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr
    p.write_bytes(_program(good, good, good[:6]))                                       # cut short
    _one_line_error(_invoke("disasm", "--program", str(p)), "instruction 2", "byte offset 64", "only 6 bytes")


def test_disasm_stream_reads_incrementally():
    """:func:`isa.disasm_stream` reads one instruction per line yielded (a reader that fails past the limit is
    never reached)."""
    class Reader(io.RawIOBase):
        def __init__(self):
            self.reads = 0

        def read(self, n=-1):
            self.reads += 1
            if self.reads > 3:
                raise AssertionError("read past the limit")
            return bytes(n)

    assert len(list(isa.disasm_stream(Reader(), limit=3))) == 3
    with pytest.raises(isa.IsaError, match=r"instruction 1 \(byte offset 32\): illegal opcode 15"):
        isa.disasm_program(bytes(32) + b"\x0f" + bytes(31))


# ------------------------------------------------------------------------------------ images over the limit
def test_detect_refuses_an_image_claiming_a_huge_size(tmp_path):
    png = forged_png(tmp_path / "bomb.png", 30000, 30000)
    r = _invoke("detect", "--image", str(png), "--out", str(tmp_path / "o"))
    _one_line_error(r, "bomb.png", "900,000,000 pixels", "MAX_IMAGE_PIXELS")
    assert not (tmp_path / "o" / "detections.json").exists()


def test_calibration_refuses_an_image_claiming_a_huge_size(tmp_path):
    from generator.flows.calibration import calib_files, calibration_images
    from host.preprocess import ImageError

    d = tmp_path / "calib"
    d.mkdir()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(d / "a.png")
    forged_png(d / "b.png", 30000, 30000)
    with pytest.raises(ImageError, match=r"b\.png: image of 900,000,000 pixels .* over the limit"):
        calibration_images(16, 16, calib=d)
    with pytest.raises(FileNotFoundError, match=r"--calib .*a\.png: is a file, not a folder"):
        calib_files(d / "a.png")
    with pytest.raises(FileNotFoundError, match=r"--calib .*missing: no such folder"):
        calib_files(tmp_path / "missing")


def test_fuzz_json_target_checked_before_the_run(tmp_path):
    """``fuzz --json`` into a folder: refused at once (before any case), one line naming the path."""
    r = _invoke("fuzz", "--cases", "1", "--json", str(tmp_path))
    _one_line_error(r, str(tmp_path), "is a folder")
    assert "passed" not in r.stdout
