"""host/driver.py over the golden-simulator PYNQ backend (generator/exec/pynq_golden.py): the real pynq.allocate / MMIO /
DefaultIP calls, detections equal to `invoke detect`'s, streaming, timeout, error status, package mismatch, and
that the driver imports without generator/onnx/onnxruntime (as on a PYNQ image)."""
from generator import ROOT_DIR
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pynq.buffer import PynqBuffer

from generator.eval import data

from generator.spec import isa
from generator.flows.artifacts import write_artifacts
from generator.flows.pipeline import detections_from_heads, quantize_image
from generator.exec.pynq_golden import GoldenSimDevice, active
from generator.exec import run_golden
from host.accel_ip import AccelIP
from host.driver import (AcceleratorError, AcceleratorTimeout, DriverError, PackageError, PackageMismatchError,
                         YoloAccelerator)
from host.manifest import file_entry
from host.registers import KERNEL_VLNV, RTL_KERNEL_VLNV
from host.preprocess import load_image

from helpers import board, compiled_model

ROOT = ROOT_DIR
# the golden simulator runs a 416x416 frame in seconds of CPU time, longer on a loaded machine; the driver's 5 s
# default is for the hardware, so runs expected to finish get a simulator-sized timeout
SIM_TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def compiled():
    return compiled_model("zcu19eg", "int8-asym")


@pytest.fixture(scope="module")
def package(compiled, tmp_path_factory):
    return write_artifacts(compiled, tmp_path_factory.mktemp("pkg"))


@pytest.fixture(scope="module")
def images():
    s = data.sample_images()
    return {k: load_image(s[k]) for k in ("bus", "zidane")}


@pytest.fixture(scope="module")
def reference(compiled, images):
    """What `invoke detect` computes: golden simulator on a DDR image + detections_from_heads."""
    out = {}
    for name, img in images.items():
        heads, _, _, _ = run_golden(compiled.program, compiled.qgraph, quantize_image(compiled, img))
        out[name] = detections_from_heads(compiled, heads, img.shape[1], img.shape[0])
    return out


def _patched(package, tmp_path, k, insn):
    """Copy of the package whose instruction k is replaced (raw 32 bytes or an isa.Insn)."""
    d = tmp_path / "pkg"
    shutil.copytree(package, d)
    blob = bytearray((d / "program.bin").read_bytes())
    blob[k * isa.INSN_BYTES:(k + 1) * isa.INSN_BYTES] = insn if isinstance(insn, bytes) else isa.encode(insn)
    (d / "program.bin").write_bytes(bytes(blob))
    m = json.loads((d / "manifest.json").read_text())      # the manifest of that program, as a compiler would write
    m["files"]["program.bin"] = file_entry(bytes(blob))    # it (else the driver refuses the file: its SHA-256)
    (d / "manifest.json").write_text(json.dumps(m))
    return d


def test_driver_detections_equal_invoke_detect(package, images, reference, compiled):
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(package, timeout_s=SIM_TIMEOUT_S)
        assert type(acc.ip) is AccelIP and acc.overlay is None
        assert dev.ip_dict["accel_0"]["type"] == KERNEL_VLNV and AccelIP.bindto == [KERNEL_VLNV, RTL_KERNEL_VLNV]
        assert all(isinstance(b, PynqBuffer) for b in (acc.weights_buf, acc.act_buf, acc.insn_buf,
                                                       acc.sets[0].input, acc.sets[0].output))
        dets = acc.detect(images["bus"])
    assert dets == reference["bus"]
    assert {d["label"] for d in dets} >= {"person", "bus"}
    # the registers the accelerator saw are the buffers' physical addresses
    (run,) = dev.accel.history
    s = acc.sets[0]
    assert run == {"WEIGHTS": acc.weights_buf.device_address, "ACT": acc.act_buf.device_address,
                   "INPUT": s.input.device_address, "OUTPUT": s.output.device_address,
                   "insns": acc.insn_buf.device_address}
    offsets = {n: o for n, o, _, _ in isa.REGISTERS}
    assert dev.accel.words[offsets["n_insns"]] == len(compiled.program.insns)
    assert dev.accel.words[offsets["fetch_ddr"]] == 1
    assert (s.input.device_address, s.input.nbytes) in dev.flushes
    assert dev.invalidates[-1] == (s.output.device_address, s.output.nbytes)
    t = acc.last_timing
    assert t["accel_cycles"] > 0 and t["accel_model_ms"] == pytest.approx(t["accel_cycles"] / 300e3)
    assert t["pre_ms"] > 0 and t["post_ms"] > 0


def test_stream_gives_the_single_frame_detections_alternating_buffers(package, images, reference):
    dev = GoldenSimDevice("zcu19eg")
    frames = [images["bus"], images["zidane"], images["bus"]]
    with active(dev):
        acc = YoloAccelerator(package, timeout_s=SIM_TIMEOUT_S)
        out = list(acc.detect_stream(iter(frames), with_timing=True))
    assert [d for d, _ in out] == [reference["bus"], reference["zidane"], reference["bus"]]
    assert all(t["accel_cycles"] > 0 and t["wall_ms"] > 0 for _, t in out)
    inputs = [h["INPUT"] for h in dev.accel.history]
    outputs = [h["OUTPUT"] for h in dev.accel.history]
    assert inputs[0] != inputs[1] and inputs[0] == inputs[2]      # two buffer sets, used in turn
    assert outputs[0] != outputs[1] and outputs[0] == outputs[2]


def test_timeout_raises_with_registers(package, images):
    dev = GoldenSimDevice("zcu19eg", hang=True)
    with active(dev):
        acc = YoloAccelerator(package, timeout_s=0.2)
        with pytest.raises(AcceleratorTimeout) as e:
            acc.detect(images["bus"])
        assert e.value.registers["CTRL"] >> isa.CTRL_BITS["ap_idle"] & 1 == 0
        assert e.value.registers["input"] == acc.sets[0].input.device_address
        assert "0.200 s" in str(e.value) and "CTRL=" in str(e.value)
        with pytest.raises(DriverError, match="still busy"):     # never a hang, never a silent restart
            acc.detect(images["bus"])


def test_illegal_opcode_status(package, images, tmp_path):
    d = _patched(package, tmp_path, 3, b"\x0f" + bytes(isa.INSN_BYTES - 1))
    dev = GoldenSimDevice("zcu19eg")
    with active(dev):
        acc = YoloAccelerator(d, timeout_s=SIM_TIMEOUT_S)
        with pytest.raises(AcceleratorError) as e:
            acc.detect(images["bus"])
    assert e.value.bits == ["ILLEGAL_OPCODE"] and e.value.status == 1 << isa.STATUS_BITS["ILLEGAL_OPCODE"]
    assert "ILLEGAL_OPCODE" in str(e.value) and "status=0x1" in str(e.value)
    assert "illegal opcode 15" in dev.accel.last_error


def test_config_for_another_configuration_status(package, compiled, images, tmp_path):
    hw = compiled.hw
    cfg = isa.make("CONFIG", isa_version=isa.ISA_VERSION, tn=hw.tn, tm=hw.tm, config_id=hw.config_id ^ 0x5A5A)
    d = _patched(package, tmp_path, 0, cfg)
    with active(GoldenSimDevice("zcu19eg")):
        acc = YoloAccelerator(d, timeout_s=SIM_TIMEOUT_S)
        with pytest.raises(AcceleratorError, match="CONFIG_MISMATCH") as e:
            acc.detect(images["bus"])
    assert e.value.bits == ["CONFIG_MISMATCH"]


def test_package_mismatch(package, compiled):
    # a bitstream for another PE array
    with active(GoldenSimDevice(board("ultra96v2", tn=16, tm=16))):
        with pytest.raises(PackageMismatchError) as e:
            YoloAccelerator(package)
    assert e.value.field == "tn" and (e.value.package, e.value.hardware) == (32, 16)
    assert "tn = 32" in str(e.value) and "tn = 16" in str(e.value)
    # same PE array, different configuration (buffer sizes, latencies...): the configuration id differs
    other = board("zcu19eg", ddr_read_latency_cycles=41)
    with active(GoldenSimDevice(other)) as dev:
        with pytest.raises(PackageMismatchError) as e:
            YoloAccelerator(package)
        assert dev.accel.runs == 0
    hw_id = other.accelerator.config_id()
    assert e.value.field == "config_id" and e.value.hardware == hw_id != compiled.hw.config_id
    assert f"{compiled.hw.config_id:#010x}" in str(e.value) and f"{hw_id:#010x}" in str(e.value)


def test_package_errors(package, tmp_path):
    with active(GoldenSimDevice("zcu19eg")):
        with pytest.raises(PackageError, match="manifest.json: no such file"):
            YoloAccelerator(tmp_path)
        d = tmp_path / "pkg"
        shutil.copytree(package, d)
        (d / "program.bin").write_bytes((d / "program.bin").read_bytes()[:-32])
        with pytest.raises(PackageError, match="program.bin"):
            YoloAccelerator(d)
        acc = YoloAccelerator(package, timeout_s=SIM_TIMEOUT_S)
        with pytest.raises(ValueError, match="uint8"):
            acc.detect(np.zeros((10, 10, 3), np.float32))


def test_driver_imports_without_generator_or_onnx():
    code = textwrap.dedent("""
        import sys
        sys.modules['generator'] = None; sys.modules['onnx'] = None; sys.modules['onnxruntime'] = None
        import host.driver, host.accel_ip as a, host.registers as r
        assert issubclass(a.AccelIP, __import__('pynq').DefaultIP) and r.KERNEL_VLNV in a.AccelIP.bindto
        print('ok')
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_package_folder_and_tarball_run_the_driver(compiled, images, reference, tmp_path):
    import py_compile
    import tarfile

    from generator.flows.package import build_package

    d, tar = build_package(compiled, tmp_path)
    for f in ("manifest.json", "program.bin", "weights.bin", "README.md", "detect.py", "host/driver.py",
              "host/preprocess.py", "host/yolo.py", "images/bus.jpg"):
        assert (d / f).is_file(), f
    py_compile.compile(str(d / "detect.py"), doraise=True)
    with tarfile.open(tar) as t:
        names = set(t.getnames())
    assert f"{d.name}/host/driver.py" in names and f"{d.name}/program.bin" in names
    with active(GoldenSimDevice("zcu19eg")):
        assert YoloAccelerator(d, timeout_s=SIM_TIMEOUT_S).detect(images["bus"]) == reference["bus"]
    # the packaged host/ is self-contained (no generator, onnx, onnxruntime on the board)
    code = ("import sys; sys.modules['generator'] = sys.modules['onnx'] = sys.modules['onnxruntime'] = None; "
            "import host.driver, host.draw; print(host.driver.__file__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=d, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and Path(r.stdout.strip()).resolve() == (d / "host" / "driver.py").resolve(), r.stderr


# ---- the Vitis HLS block design: hw_info / config_id before the first start, IPs found by VLNV -----------------
def test_hls_info_registers_probe_before_the_first_start(package, images, reference):
    """On the HLS IP hw_info / config_id read 0 until the block has run: the driver starts one probe run
    (fetch_ddr = 1, n_insns = 0: NO_END, nothing dispatched, no DDR access), then checks them, then runs frames
    normally. The design's ip_dict holds the other three HLS IPs (no registers) too; the driver takes accel_0."""
    dev = GoldenSimDevice("zcu19eg", info_registers="hls", block_design=True)
    offs = {n: o for n, o, _, _ in isa.REGISTERS}
    assert dev.accel.read_word(offs["hw_info"]) == dev.accel.read_word(offs["config_id"]) == 0
    assert [k for k, d in dev.ip_dict.items() if d["type"].startswith("xilinx.com:hls:")] == \
        ["accel_load_0", "accel_compute_0", "accel_store_0", "accel_0"]
    with active(dev):
        acc = YoloAccelerator(package, timeout_s=SIM_TIMEOUT_S)
        assert acc.ip.mmio.base_addr == dev.accel_base
        assert acc.probe_status == 1 << isa.STATUS_BITS["NO_END"]
        assert dev.accel.probes == dev.accel.runs == 1
        assert "NO_END" in dev.accel.last_error or "END" in dev.accel.last_error
        assert dev.accel.size_history == [{k: 0 for k in isa.BASE_REGS}]
        dets = acc.detect(images["bus"])
    assert dets == reference["bus"]
    assert dev.accel.runs == 2 and dev.accel.probes == 1 and dev.accel.history[1]["INPUT"] == acc.sets[0].bases["INPUT"]


def test_hls_info_registers_mismatch_after_the_probe(package):
    """A bitstream for another PE array, HLS registers: the probe runs, then the mismatch is reported (no frame
    run); with constant registers (the RTL) no probe runs at all."""
    other = board("ultra96v2", tn=16, tm=16)
    with active(GoldenSimDevice(other, info_registers="hls", block_design=True)) as dev:
        with pytest.raises(PackageMismatchError) as e:
            YoloAccelerator(package)
        assert dev.accel.runs == dev.accel.probes == 1
    assert e.value.field == "tn" and (e.value.package, e.value.hardware) == (32, 16)
    with active(GoldenSimDevice(other)) as dev:
        with pytest.raises(PackageMismatchError):
            YoloAccelerator(package)
        assert dev.accel.runs == dev.accel.probes == 0


def test_hls_info_probe_that_never_ends_times_out(package):
    with active(GoldenSimDevice("zcu19eg", info_registers="hls", hang=True)) as dev:
        with pytest.raises(AcceleratorTimeout):
            YoloAccelerator(package, timeout_s=0.2)
        assert dev.accel.probes == 1


def test_overlay_with_the_four_ip_block_design_binds_accel_0(package, monkeypatch):
    """pynq.Overlay of the block design: the ip_dict (from the .hwh) lists accel_load_0 / accel_compute_0 /
    accel_store_0 (and FIFOs, SmartConnect) besides accel_0; the driver binds the one with KERNEL_VLNV, also inside
    a hierarchy."""
    import pynq

    from generator.exec.pynq_golden import block_design_ip_dict

    dev = GoldenSimDevice("zcu19eg", info_registers="hls")
    for hier in ("", "accel_hier/"):
        ipd = {(hier + k if k.startswith("accel") else k): dict(v, fullpath=hier + k if k.startswith("accel") else k)
               for k, v in block_design_ip_dict(dev, dev.accel_base, dev.accel_range).items()}

        class FakeOverlay:
            def __init__(self, bitfile, download=True):
                self.ip_dict = ipd
                top = self
                if hier:
                    top = type("H", (), {})()
                    setattr(self, hier.rstrip("/"), top)
                for k, d in ipd.items():
                    setattr(top, k.split("/")[-1], AccelIP(d) if d["type"] == KERNEL_VLNV else object())

        monkeypatch.setattr(pynq, "Overlay", FakeOverlay)
        with active(dev):
            acc = YoloAccelerator(package, bitfile="x.bit", timeout_s=SIM_TIMEOUT_S)
        assert isinstance(acc.ip, AccelIP) and acc.ip.mmio.base_addr == dev.accel_base
        assert acc.ip is getattr(getattr(acc.overlay, hier.rstrip("/")) if hier else acc.overlay, "accel_0")
