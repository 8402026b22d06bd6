"""cocotb bench: host/driver.py, unchanged, over the RTL (run by tests/host/test_driver_rtl.py through the cocotb
runner as module ``fakes.driver_rtl_tb``, one simulator process per case). The RTL's DDR is an AxiRam and its
registers are reached through an AxiLiteMaster, both behind fakes.pynq_rtl.RtlSimDevice, the active PYNQ device;
the driver's blocking code (YoloAccelerator(package).detect / detect_stream) runs in a cocotb.task.bridge thread.
The case (case.json, path in $DRIVER_RTL_CASE) names the package and the images; the results (detections, raw head
values, timing, register/flush statistics) are pickled to the case's "out" file."""
import json
import os
import pickle
import time
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.task import bridge

from fakes.pynq_rtl import RtlSimDevice
from generator.exec.pynq_golden import active
from host.driver import AcceleratorError, AcceleratorTimeout, DriverError, PackageMismatchError, YoloAccelerator
from host.preprocess import load_image

CLOCK_NS = 10


@cocotb.test()
async def driver_over_rtl(dut):
    case = json.loads(Path(os.environ["DRIVER_RTL_CASE"]).read_text())
    Clock(dut.ap_clk if hasattr(dut, "ap_clk") else dut.clk, CLOCK_NS, unit="ns").start()
    dev = RtlSimDevice(dut, clock_ns=CLOCK_NS, mem_bytes=int(case.get("mem_bytes", 32 << 20)),
                       poll_cycles=int(case.get("poll_cycles", 2000)), rd_latency=int(case.get("rd_latency", 0)))
    await dev.reset()
    images = {k: load_image(p) for k, p in case["images"].items()}
    stream_images = {k: load_image(p) for k, p in (case.get("stream_images") or {}).items()}

    def host():
        """The board-side code, blocking, as a user would write it."""
        out = {"frames": {}, "stream": None}
        with active(dev):
            acc = YoloAccelerator(case["package"], timeout_s=float(case.get("timeout_s", 600)), poll_interval_s=0)
            if case.get("probe"):     # the HLS identification probe, forced (the RTL's registers never read 0)
                acc._probe()
                out["probe_status"] = acc.probe_status
            for name, img in images.items():
                c0, t0 = dev.cycles_now(), time.perf_counter()
                dets = acc.detect(img)
                out["frames"][name] = {
                    "dets": dets, "heads": [np.array(h) for h in acc.sets[0].heads],
                    "timing": dict(acc.last_timing), "sim_cycles": dev.cycles_now() - c0,
                    "wall_s": time.perf_counter() - t0}
            if case.get("stream"):
                t0 = time.perf_counter()
                out["stream"] = {"dets": list(acc.detect_stream(iter([stream_images[k] for k in case["stream"]]))),
                                 "wall_s": time.perf_counter() - t0}
            out["buffers"] = {"WEIGHTS": acc.weights_buf.device_address, "ACT": acc.act_buf.device_address,
                              "insns": acc.insn_buf.device_address,
                              "sets": [{"INPUT": s.input.device_address, "OUTPUT": s.output.device_address,
                                        "input_bytes": s.input.nbytes, "output_bytes": s.output.nbytes}
                                       for s in acc.sets]}
            out["n_insns"] = acc.manifest.n_insns
            out["ip_type"] = dev.ip_dict["accel_0"]["type"]   # the only IP: the driver found it by this VLNV
        out.update(history=dev.history, flushes=dev.flushes, invalidates=dev.invalidates, reads=dev.reads,
                   writes=dev.writes)
        return out

    def errors():
        """The driver's error paths against the RTL's registers: each expected exception's type, fields, text."""
        out = {}

        def catch(key, fn):
            try:
                fn()
                out[key] = None
            except DriverError as e:
                out[key] = {"type": type(e).__name__, "msg": str(e), **{k: getattr(e, k) for k in
                            ("field", "package", "hardware", "status", "bits", "registers") if hasattr(e, k)}}

        with active(dev):
            for key in ("mismatch_tn", "mismatch_config_id"):
                catch(key, lambda: YoloAccelerator(case["errors"][key]))
            img = load_image(case["errors"]["image"])
            bad = YoloAccelerator(case["errors"]["illegal_opcode"], timeout_s=60, poll_interval_s=0)
            catch("illegal_opcode", lambda: bad.detect(img))
            good = YoloAccelerator(case["package"], timeout_s=float(case["errors"]["timeout_s"]), poll_interval_s=0)
            catch("timeout", lambda: good.detect(img))
            catch("busy", lambda: good.detect(img))
        out["history"] = dev.history
        return out

    res = await bridge(errors if case.get("errors") else host)()
    Path(case["out"]).write_bytes(pickle.dumps(res))
