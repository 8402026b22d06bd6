"""PYNQ driver of the YOLO accelerator: deployment package in, detections out.

Runs on a PYNQ 3.x board image (Python 3.10, numpy 1.x, Pillow, ``pynq``); imports nothing from ``generator``,
no onnx. Everything it needs about the compiled network comes from the package's ``manifest.json`` (register
map, base-register sizes, regions and their zero points, input/head tensors with scales and zero points, YOLO
parameters, class names).

A deployment package is a folder with ``manifest.json``, ``program.bin`` (32-byte instructions), ``weights.bin``
and, when the bitstream is built, ``<name>.bit`` + ``<name>.hwh``. At load the driver checks every manifest value
it uses (:func:`host.manifest.read_manifest`) and the size and SHA-256 of ``program.bin``, ``weights.bin`` (and an
export's ``tail_consts.npz``) against the manifest's ``files`` entry before using them (:mod:`host.package`); a
package whose manifest has no ``files`` (written before the integrity rules) loads with the exact sizes checked
(``program.bin``: ``n_insns`` instructions, ``weights.bin``: the WEIGHTS space). With a bitstream the driver loads
it with ``pynq.Overlay`` and takes the IP whose VLNV is :data:`host.registers.KERNEL_VLNV` (a
:class:`host.accel_ip.AccelIP`, bound through ``DefaultIP.bindto``). Without one it takes that IP from the active
PYNQ device's ``ip_dict`` (a design already loaded, or the simulated device of ``generator/exec/pynq_golden.py`` in
CI): same ``DefaultIP``/``MMIO``/``allocate`` calls either way (:func:`host.accel_ip.open_accel_ip`).

Memory (all ``pynq.allocate``, physically contiguous, cacheable): WEIGHTS and the instructions (written once),
ACT (written by the accelerator only), and ``buffer_sets`` (default 2) INPUT/OUTPUT pairs so that a frame can
be pre-processed and the previous one post-processed while the accelerator runs (:meth:`detect_stream`). Each
region is filled with its zero point once (its padding border is never written again) and viewed with its own
element type (``bits``: int8 or int16, :func:`host.manifest.region_dtype`; a program's input may be int8, a head int16).

Per frame (:meth:`YoloAccelerator.detect`): darknet resize + quantize (at the input tensor's ``bits``) into the
INPUT region (NHWC, padded; an im2col region: as the first convolution's patches, :func:`host.manifest.input_target`),
flush; or, for a program that starts with PRE (the manifest's ``pre`` entry), the camera frame handed over as it is
(:mod:`host.handover`: in place when it is a PYNQ buffer, else copied once into the buffer set's frame buffer;
flushed; PRE's registers of :class:`host.pre.PreFrame` written by name) and the INPUT region not written; write
the base registers and each base register's buffer size (``*_size`` registers, when the register map has them:
the accelerator refuses any LOAD / STORE outside them), ``ap_start``, wait for ``ap_done`` (interrupt when the
overlay has one, else polling) with a timeout, check ``status``, invalidate OUTPUT, then the heads (each of
its own precision) through the one head decoder (:class:`host.decode.Decoder`, from the manifest's head and export
entries: darknet YOLO decode or the host tail of an export with its decode in the graph, NMS), which reads the heads
in place ([C, H, W] views of the NHWC buffer, no copy) and, for darknet heads, only their objectness codes against an
integer threshold and then the channels of the cells above it.

Identification before the first run: the Vitis HLS IP's ``hw_info`` and ``config_id`` are s_axilite output
registers, which read 0 until the ``accel`` block has run once (it writes them first thing in every run). When
``hw_info`` reads 0 the driver therefore starts one *probe* run before comparing them with the manifest:
``fetch_ddr = 1``, ``n_insns = 0``, every base and size register 0. The fetch reads no instruction, dispatches
nothing to load / compute / store (each gets its stop command, none touches DDR), and the run ends at once with
status NO_END (``ap_done``), after which both registers hold their values. The probe's NO_END is expected and not
an error (:attr:`YoloAccelerator.probe_status`); the next run overwrites ``status``. On the RTL (constant
registers) ``hw_info`` is never 0, so no probe runs; a probe there would end the same way (``n_insns = 0``: the
fetch is exhausted at once, NO_END, no AXI access).

The IP is found by its VLNV, never by name: the block design also holds ``accel_load``, ``accel_compute`` and
``accel_store`` (VLNVs ``xilinx.com:hls:accel_<module>:1.0``, no registers), FIFOs and memories. The manifest's
schema and DDR layout are :mod:`host.manifest`; the register-level contract (VLNV, ``hw_info``) is
:mod:`host.registers`. Errors (:mod:`host.errors`): :class:`PackageError` (missing/inconsistent files),
:class:`PackageMismatchError` (the hardware's ISA version / PE array / precision / configuration id differ from
the package's; its subclass :class:`PackageFileMismatchError`, also a :class:`PackageError`: a binary of the package
differs from the manifest, naming the file), :class:`AcceleratorTimeout` (no ``ap_done`` within the timeout;
carries the register values),
:class:`AcceleratorError` (``status`` != 0; names the status bits from the manifest's ``status_bits``, carries the
register values; also raised by the constructor, with the hardware's PARTIAL_INSN bit, for a ``program.bin`` that
is not whole instructions, which the instruction-count register cannot express). Every wait has a timeout.
"""
from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from pynq import allocate

from .accel_ip import loop_running, open_accel_ip
from .errors import (AcceleratorError, AcceleratorTimeout, DriverError, PackageError, PackageFileMismatchError,
                     PackageMismatchError)
from .decode import Decoder
from .handover import (FRAME_ORDERS, BufferSet, check_pre_registers, hand_over, pre_detect, pre_stream,
                       write_frame_registers)
from .manifest import BASE_REGS, page_round, read_manifest, region_dtype, region_shape
from .package import load_program, load_tail_consts, load_weights
from .preprocess import preprocess
from .registers import BASE_ADDR_REGS, SIZE_REGS, status_bit_names, unpack_hw_info

__all__ = ["DriverError", "PackageError", "PackageMismatchError", "PackageFileMismatchError", "AcceleratorTimeout",
           "AcceleratorError", "YoloAccelerator"]


class YoloAccelerator:
    """YOLO object detection on the accelerator, from a deployment package.

    Args:
        package: folder with ``manifest.json``, ``program.bin``, ``weights.bin`` (+ ``*.bit``/``*.hwh``).
        bitfile: overlay bitstream to load (default: the only ``*.bit`` in the folder, if any). Without one the
            accelerator IP is taken from the active PYNQ device's ``ip_dict`` (design already loaded).
        download: download the bitstream (``pynq.Overlay(download=...)``).
        timeout_s: seconds to wait for ``ap_done`` per frame before :class:`AcceleratorTimeout`.
        use_interrupt: wait for the IP's ``interrupt`` pin (PYNQ offers it only behind an ``axi_intc``, as our block
            designs put it; a design without one: DriverError); polls while an asyncio loop runs in this thread
            (Jupyter). Default False: poll CTRL every ``poll_interval_s`` (a 100 us poll costs little against a
            frame of several ms). Tested on the golden backend with PYNQ's own Interrupt over a simulated axi_intc
            and a stand-in for the board's UIO device (tests/host/test_hwh_binding.py).
        poll_interval_s: sleep between two CTRL reads when polling.
        thresh, nms: detection threshold and NMS IoU threshold (darknet ``-thresh 0.25``, 0.45).
        buffer_sets: INPUT/OUTPUT buffer pairs (2 lets :meth:`detect_stream` overlap host and accelerator).
        frame_order: "rgb" (PIL, :func:`host.preprocess.load_image`) or "bgr" (OpenCV): the channel order of the
            frames given to :meth:`detect` (for a PRE program the ``frame_bgr`` register, else reversed on the host).
    Raises:
        PackageError: missing files, sizes inconsistent with the manifest, a manifest value the driver cannot use
            (:func:`host.manifest.read_manifest`, naming the key), no accelerator IP found.
        PackageFileMismatchError (a PackageMismatchError and a PackageError): ``program.bin``, ``weights.bin`` or
            the export's constants differ in size or SHA-256 from the manifest's ``files`` entry (checked before
            anything else is done with them; see :mod:`host.package`), naming the file.
        PackageMismatchError: the accelerator's ``hw_info``/``config_id`` differ from the manifest's (a precision
            the program uses, ``hardware.precisions``, that the bitstream does not implement included), or the
            overlay's .hwh registers from the manifest's map (field ``register map``, host.accel_ip).
    Attributes:
        manifest (:class:`host.manifest_types.Manifest`), decoder (:class:`host.decode.Decoder`), overlay
        (``pynq.Overlay`` or None), ip (:class:`host.accel_ip.AccelIP`), last_timing (dict of the last frame:
        ``pre_ms``, ``accel_ms`` (wall clock start->done), ``accel_cycles``, ``accel_model_ms`` (cycles / clock),
        ``post_ms``, ``total_ms``; a PRE program: ``pre_ms`` is the handover (copy, flush, register writes) and
        ``copied_bytes`` the frame bytes copied, 0 in place).
    """

    def __init__(self, package, bitfile=None, download=True, timeout_s: float = 5.0, use_interrupt: bool = False,
                 poll_interval_s: float = 1e-4, thresh: float = 0.25, nms: float = 0.45, buffer_sets: int = 2,
                 frame_order: str = "rgb"):
        if frame_order not in FRAME_ORDERS:
            raise ValueError(f"frame_order must be one of {FRAME_ORDERS}, got {frame_order!r}")
        self.package, self.frame_order = Path(package), frame_order
        self.timeout_s, self.poll_interval_s = float(timeout_s), float(poll_interval_s)
        self.thresh, self.nms = float(thresh), float(nms)
        self.manifest = read_manifest(self.package / "manifest.json")
        m = self.manifest
        self.program = load_program(self.package, m)       # (verified against the manifest: host.package)
        self.weights = load_weights(self.package, m)
        self.precisions = list(m.hardware.precisions)     # e.g. ["int8", "int16"]: the regions' precisions
        self.region = {r.name: r for r in m.regions}
        # the heads' decode (an export's host tail reads its constants; no names: labelled by class id)
        consts = load_tail_consts(self.package, m) if m.export else None
        try:
            self.decoder = Decoder.from_manifest(m, consts)
        except ValueError as e:         # (e.g. an export format this host does not decode)
            raise PackageError(f"{self.package / 'manifest.json'}: {e}") from None

        self.overlay, self.ip = open_accel_ip(self.package, bitfile, download)
        self.ip.set_register_map(m.registers, m.ctrl_bits)
        check_pre_registers(m, self.package / "manifest.json")
        self.probe_status = None       # status of the identification probe (NO_END), None if none was needed
        self.check_hardware()
        self._interrupt, self._irq_loop = self.ip.pick_interrupt() if use_interrupt else (None, None)

        self.weights_buf = self._alloc("WEIGHTS")
        self.weights_buf[:len(self.weights)] = np.frombuffer(self.weights, np.uint8)
        self.insn_buf = allocate(shape=(len(self.program),), dtype=np.uint8)
        self.insn_buf[:] = np.frombuffer(self.program, np.uint8)
        self.act_buf = self._alloc("ACT")
        for r in m.regions:
            if r.base_reg in ("WEIGHTS", "ACT"):
                self._region_view({"WEIGHTS": self.weights_buf, "ACT": self.act_buf}[r.base_reg], r)[...] = r.zp
        self.sets = []     # (PRE: one INPUT buffer for all: a run's bands of PRE write the next run's input)
        for k in range(max(1, int(buffer_sets))):
            self.sets.append(BufferSet(self, k, self.sets[0].input if m.pre and self.sets else None))
        for b in (self.weights_buf, self.insn_buf, self.act_buf):
            b.flush()
        for s in self.sets:
            s.input.flush()
            s.output.flush()
        self.last_timing = {}
        self._busy = None          # buffer set of a run in flight (a timed-out run stays here)

    def check_hardware(self):
        """Compare ``hw_info`` (ISA version, Tn, Tm, precision modes) and ``config_id`` with the manifest: every
        precision of ``hardware.precisions`` must be one of the bitstream's modes.

        Raises:
            PackageMismatchError: naming the first differing field with the package's and the hardware's value
                (field ``precision``: the program's precisions against the bitstream's, joined by ``/``).
        """
        m, hw = self.manifest, self.manifest.hardware
        info = self.ip.read_reg("hw_info")
        if info == 0:                  # the HLS block has not run yet: its output registers read 0
            self._probe()
            info = self.ip.read_reg("hw_info")
        got = unpack_hw_info(info)
        want = {"isa_version": m.isa_version, "tn": hw.tn, "tm": hw.tm}
        for k in want:
            if got[k] != want[k]:
                raise PackageMismatchError(k, want[k], got[k])
        if any(p not in got["precisions"] for p in self.precisions):
            raise PackageMismatchError("precision", "/".join(self.precisions), "/".join(got["precisions"]) or "none")
        cid = self.ip.read_reg("config_id")
        if cid != hw.config_id:
            raise PackageMismatchError("config_id", hw.config_id, cid)

    def _probe(self):
        """One run with no instruction (``fetch_ddr = 1``, ``n_insns = 0``) so that the HLS block writes
        ``hw_info`` / ``config_id``; it ends with NO_END and touches no DDR (see the module docstring).

        Raises AcceleratorTimeout (no ``ap_done`` within the timeout), AcceleratorError (a status other than
        NO_END)."""
        ip = self.ip
        for k in BASE_REGS:
            ip.write_reg(BASE_ADDR_REGS[k], 0)
            if SIZE_REGS[k] in ip.regs:
                ip.write_reg(SIZE_REGS[k], 0)
        ip.write_reg("insns", 0)
        ip.write_reg("n_insns", 0)
        ip.write_reg("fetch_ddr", 1)
        ip.write_reg("CTRL", 1 << self.manifest.ctrl_bits["ap_start"])
        if not self._poll(time.perf_counter() + self.timeout_s):
            raise AcceleratorTimeout(self.timeout_s, ip.snapshot())
        status = ip.read_reg("status")
        no_end = 1 << self.manifest.status_bits["NO_END"]
        if status != no_end:
            raise AcceleratorError(status, status_bit_names(status, self.manifest.status_bits), ip.snapshot(),
                                   f"identification probe (n_insns = 0) ended with status {status:#x}, "
                                   f"expected NO_END only")
        self.probe_status = status

    def _poll(self, deadline: float) -> bool:
        """Poll CTRL until the run is over (True) or ``deadline`` (``time.perf_counter()``) passes (False)."""
        while True:
            if self.ip.finished():
                return True
            if time.perf_counter() > deadline:
                return False
            time.sleep(self.poll_interval_s)

    # ---- buffers -------------------------------------------------------------------------------------------
    def _alloc(self, base_reg):
        n = page_round(max(int(self.manifest.base_sizes[base_reg]), 1))
        buf = allocate(shape=(n,), dtype=np.uint8)
        buf[:] = 0
        return buf

    def _region_view(self, buf, r):
        """Writable [H + 2p, W + 2p, C] view of region ``r`` (border included) in ``buf``, of the region's element
        type (int8 for ``bits`` 8, little-endian int16 for 16). Raises PackageError when it exceeds ``buf``."""
        shape, elem = region_shape(r), region_dtype(r)
        n = shape[0] * shape[1] * shape[2] * elem.itemsize
        raw = np.asarray(buf)[r.addr:r.addr + n]
        if raw.size != n:
            raise PackageError(f"region {r.name} [{r.addr}, {r.addr + n}) exceeds its {r.base_reg} buffer of "
                               f"{buf.size} bytes")
        return raw.view(elem).reshape(shape)

    # ---- one run -------------------------------------------------------------------------------------------
    def _start(self, s: BufferSet, frame=None, prologue: bool = False) -> float:
        """Write the registers of a run on ``s`` (PRE's: ``frame``, default ``s.pre_frame``; ``prologue``: run the
        PRE program's prologue, :mod:`host.handover`) and start it; returns the ms of PRE's registers (0 without)."""
        ip = self.ip
        if self._busy is not None:
            ctrl = ip.read_reg("CTRL")
            if not ip.ctrl_bit(ctrl, "ap_idle"):
                raise DriverError(f"accelerator still busy (CTRL={ctrl:#x}): a run is in flight (a detect_stream in "
                                  "progress) or an earlier run timed out (reload the overlay to reset it)")
            self._busy = None
        for k in BASE_REGS:
            ip.write_reg(BASE_ADDR_REGS[k], s.bases[k])
            if SIZE_REGS[k] in ip.regs:        # the buffer's size: the hardware checks every access
                ip.write_reg(SIZE_REGS[k], s.sizes[k])
        n = self.manifest.n_insns
        ip.write_reg("insns", self.insn_buf.device_address + (n * self.manifest.insn_bytes if prologue else 0))
        ip.write_reg("n_insns", self.manifest.pre.prologue_insns if prologue else n)
        ip.write_reg("fetch_ddr", 1)
        t0 = time.perf_counter()
        write_frame_registers(ip, s.pre_frame if frame is None else frame)      # (a PRE program's; none else)
        reg_ms = (time.perf_counter() - t0) * 1e3
        if self._interrupt is not None:
            ip.write_reg("GIE", 1)
            ip.write_reg("IER", 1)   # ap_done
        self._busy = s
        self._t_start = time.perf_counter()
        ip.write_reg("CTRL", 1 << self.manifest.ctrl_bits["ap_start"])
        return reg_ms

    def _wait(self, s: BufferSet) -> float:
        """Wait for the run on ``s`` to finish; returns wall-clock ms since start. Raises AcceleratorTimeout,
        AcceleratorError."""
        ip, t0 = self.ip, self._t_start
        deadline = t0 + self.timeout_s
        if self._interrupt is not None and not loop_running():
            asyncio.set_event_loop(self._irq_loop)     # pynq's Interrupt registers with the current loop
            try:
                self._irq_loop.run_until_complete(
                    asyncio.wait_for(self._interrupt.wait(), max(deadline - time.perf_counter(), 0)))
            except asyncio.TimeoutError:
                pass
            ip.write_reg("ISR", ip.read_reg("ISR") & 1)   # toggle-on-write: clear ap_done
        done = self._poll(deadline)
        ms = (time.perf_counter() - t0) * 1e3
        if not done:
            raise AcceleratorTimeout(self.timeout_s, ip.snapshot())
        self._busy = None
        status = ip.read_reg("status")
        if status:
            raise AcceleratorError(status, status_bit_names(status, self.manifest.status_bits), ip.snapshot())
        return ms

    # ---- host side -----------------------------------------------------------------------------------------
    def _check_image(self, img_u8):
        # (PRE: a PYNQ buffer stays one, read in place by the accelerator)
        img = np.asanyarray(img_u8) if self.manifest.pre is not None else np.asarray(img_u8)
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"detect expects an image uint8 [H, W, 3] ({self.frame_order.upper()}), got "
                             f"{img.dtype} {img.shape}")
        return img

    def _pre(self, img, s: BufferSet) -> tuple[float, int | None]:
        """The frame into ``s``: (ms, frame bytes copied; None without PRE). Raises ValueError (a frame PRE cannot
        take, naming its size)."""
        t0 = time.perf_counter()
        t, e, net, p = self.manifest.input, self.manifest.export, self.manifest.net, self.manifest.pre
        if p is not None:       # PRE: hand the frame over (host.handover), the accelerator resizes and quantizes
            s.pre_frame, copied = hand_over(img, s.frame, net.width, net.height, p.resize, self.frame_order == "bgr")
            return (time.perf_counter() - t0) * 1e3, copied
        if self.frame_order == "bgr":
            img = img[..., ::-1]
        s.x[...] = preprocess(img, net.width, net.height, t.scale, t.zero_point, t.bits, t.channels,
                              e.resize if e else "stretch", t.format)
        s.commit_input()   # (an im2col input: its patches into the region)
        s.input.flush()
        return (time.perf_counter() - t0) * 1e3, None

    def _post(self, img_shape, s: BufferSet):
        t0 = time.perf_counter()
        s.output.invalidate()
        heads = {h.name: v.transpose(2, 0, 1) for h, v in zip(self.manifest.heads, s.heads)}     # [C, H, W] views
        dets = self.decoder.detect(heads, img_shape[1], img_shape[0], self.thresh, self.nms)
        return dets, (time.perf_counter() - t0) * 1e3

    def _timing(self, pre_ms, accel_ms, post_ms, cyc, copied=None):
        clk = float(self.manifest.clock_mhz or 0)
        return {"pre_ms": pre_ms, "accel_ms": accel_ms, "accel_cycles": cyc,
                "accel_model_ms": cyc / clk / 1e3 if clk else None, "post_ms": post_ms,
                "total_ms": pre_ms + accel_ms + post_ms, **({} if copied is None else {"copied_bytes": copied})}

    def detect(self, img_u8) -> list:
        """Detect objects in one image.

        Args:
            img_u8: uint8 [H, W, 3] in the ``frame_order`` given to the constructor (RGB: e.g.
                ``host.preprocess.load_image``), any size (a PRE program: 1 x 1 to 4096 x 4096; a PYNQ buffer, or a
                view of one with packed pixels, is read in place by the accelerator: see :mod:`host.handover`).
        Returns:
            list of ``{"label", "class_id", "score", "box": [x1, y1, x2, y2]}`` (pixels of ``img_u8``), sorted
            by score; timing of the frame in :attr:`last_timing` (milliseconds).
        Raises:
            ValueError: not a uint8 [H, W, 3] image; a PRE program: a frame size PRE cannot take (named).
            AcceleratorTimeout, AcceleratorError, DriverError (busy).
        """
        img = self._check_image(img_u8)
        if self.manifest.pre is not None:
            dets, self.last_timing = pre_detect(self, img)
            return dets
        s = self.sets[0]
        pre, copied = self._pre(img, s)
        pre += self._start(s)
        acc = self._wait(s)
        dets, post = self._post(img.shape, s)
        self.last_timing = self._timing(pre, acc, post, self.ip.read_reg("cycles"), copied)
        return dets

    def detect_stream(self, frames, with_timing: bool = False):
        """Detect objects in a sequence of frames, overlapping host and accelerator work.

        While the accelerator runs frame i (buffer set i % 2), a worker thread pre-processes frame i+1 into
        the other set (a PRE program: hands it over, into that set's frame buffer) and the calling thread
        post-processes frame i-1. Frames are consumed lazily (a camera generator works); results come out in order.
        A frame read in place (a PYNQ buffer) must stay unchanged until its detections are yielded (up to two
        frames after it are taken meanwhile).

        Args:
            frames: iterable of uint8 [H, W, 3] images (``frame_order``), sizes may differ.
            with_timing: yield ``(detections, timing)`` instead of detections; timing as :attr:`last_timing`
                plus ``wall_ms`` (time between two yields).
        Yields:
            the detections of each frame, as :meth:`detect` returns them.
        Raises:
            as :meth:`detect`. Closing the generator early waits (with the timeout) for the run in flight.
        """
        if self.manifest.pre is not None and len(self.sets) > 1:
            yield from pre_stream(self, frames, with_timing)
            return
        if len(self.sets) < 2:
            for f in frames:
                d = self.detect(f)
                yield (d, dict(self.last_timing)) if with_timing else d
            return
        it = iter(frames)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="yolo-pre")
        _END = object()

        def prep(k):
            img = next(it, _END)
            if img is _END:
                return None
            img = self._check_image(img)
            return (img.shape, *self._pre(img, self.sets[k % 2]))

        k = 0
        fut = pool.submit(prep, 0)
        pending = None                 # (set, image shape, pre ms, bytes copied)
        t_last = time.perf_counter()
        try:
            while True:
                nxt = fut.result()
                acc_ms = None
                if pending is not None:
                    acc_ms = self._wait(pending[0])
                    cyc = self.ip.read_reg("cycles")
                if nxt is not None:
                    s_next = self.sets[k % 2]
                    reg_ms = self._start(s_next)
                    k += 1
                    fut = pool.submit(prep, k)   # writes set k % 2 only: pending's run is done
                if pending is not None:
                    dets, post = self._post(pending[1], pending[0])
                    tm = self._timing(pending[2], acc_ms, post, cyc, pending[3])
                    now = time.perf_counter()
                    tm["wall_ms"] = (now - t_last) * 1e3
                    t_last = now
                    self.last_timing = tm
                    yield (dets, tm) if with_timing else dets
                if nxt is None:
                    return
                pending = (s_next, nxt[0], nxt[1] + reg_ms, nxt[2])
        finally:
            if self._busy is not None:
                try:
                    self._wait(self._busy)
                except DriverError:
                    pass
            pool.shutdown(wait=True)

    def close(self):
        """Free the buffers (PYNQ frees them when they are garbage-collected too)."""
        bufs = [self.weights_buf, self.insn_buf, self.act_buf] + [b for s in self.sets for b in (s.input, s.output)]
        for b in {id(b): b for b in bufs}.values():
            b.freebuffer()
        for s in self.sets:
            if s.frame is not None:
                s.frame.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
