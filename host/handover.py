"""Handing a camera frame to the accelerator's PRE (issue 45): the driver's side of :mod:`host.pre`.

For a package whose manifest has a ``pre`` entry the accelerator turns the camera frame into the network input
itself; the host only puts the frame where PRE reads it and writes PRE's per-frame registers
(:class:`host.pre.PreFrame`: the frame's address, buffer size, width and height, row pitch, pixel order and the
placement and Q12.20 steps of :func:`host.pre.pre_geometry`). Nothing per pixel happens in numpy:

* a frame that already is a PYNQ buffer (``pynq.allocate``'d, or a view of one: a ``PynqBuffer`` with a
  ``device_address``) whose pixels are packed (strides ``[pitch, 3, 1]``, ``3 x W <= pitch <=``
  :data:`host.pre.MAX_PITCH`: a crop of a larger buffer keeps its row pitch) is used in place (zero copy): its
  address goes into the ``frame`` register and its bytes are flushed from the CPU caches;
* any other uint8 [H, W, 3] array is copied once (``np.copyto``) into the buffer set's frame buffer
  (:class:`FrameBuffer`: a ``pynq.allocate``'d buffer, made for the nominal frame and grown when a larger frame
  comes) with packed rows, and that buffer's bytes are flushed.

The program (the manifest's ``pre`` entry, :data:`host.manifest.OPTIONAL`): a *prologue* (``prologue_insns``
instructions after the main program's ``n_insns`` in program.bin: PRE of the whole input) writes the first frame's
network input into the INPUT buffer; every main run computes the network on the input in the INPUT buffer and, in
bands where its LOAD module would wait, PRE of the frame in the PRE registers: the next frame's input, into the same
buffer (so every buffer set shares one INPUT buffer). :func:`pre_detect`: one frame, prologue then main run with
that frame's registers (its bands rewrite the same input). :func:`pre_stream`: the prologue on the first frame, then
main run k (OUTPUT of buffer set k % 2) with frame k+1's registers (the last one: its own again), while it runs
frame k+2 handed over into set k % 2's frame buffer (frame k's, which run k-1 read) and frame k-1 post-processed.

numpy + pynq only (PYNQ 3.x: Python 3.10, numpy 1.x).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from pynq import allocate

from .errors import DriverError, PackageError
from .manifest import input_target, page_round, tensor_window
from .pre import MAX_PITCH, PreFrame, pre_geometry, pre_violation

__all__ = ["FRAME_ORDERS", "BufferSet", "FrameBuffer", "device_frame", "hand_over", "write_frame_registers",
           "check_pre_registers", "pre_detect", "pre_stream"]

#: pixel orders of a camera frame (PIL gives R, G, B; OpenCV B, G, R)
FRAME_ORDERS = ("rgb", "bgr")


class FrameBuffer:
    """A buffer set's frame buffer: a ``pynq.allocate``'d uint8 buffer made for ``nbytes`` (the nominal frame) and
    replaced by a larger one when a frame does not fit (the old one freed)."""

    def __init__(self, nbytes: int):
        self.buf = self._alloc(nbytes)

    @staticmethod
    def _alloc(nbytes: int):
        return allocate(shape=(page_round(max(int(nbytes), 1)),), dtype=np.uint8)

    def fit(self, nbytes: int):
        """The buffer, grown (a new allocation) to hold ``nbytes``."""
        if self.buf.size < nbytes:
            self.free()
            self.buf = self._alloc(nbytes)
        return self.buf

    def free(self):
        self.buf.freebuffer()


class BufferSet:
    """One INPUT + OUTPUT buffer pair of :class:`host.driver.YoloAccelerator` ``acc`` with numpy views of the input
    region's interior and of every head (its [h, w, channels] window, in the manifest's head order); for a PRE
    program its :class:`FrameBuffer` and the :class:`host.pre.PreFrame` of the frame handed over last; ``input_buf``:
    the INPUT buffer to use (None: a new one)."""

    def __init__(self, acc, k, input_buf=None):
        m = acc.manifest
        self.index = k
        self.input = acc._alloc("INPUT") if input_buf is None else input_buf    # (PRE: one shared, module text)
        self.output = acc._alloc("OUTPUT")
        bufs = {"WEIGHTS": acc.weights_buf, "ACT": acc.act_buf, "INPUT": self.input, "OUTPUT": self.output}
        for r in m.regions:
            if r.base_reg in ("INPUT", "OUTPUT"):
                acc._region_view(bufs[r.base_reg], r)[...] = r.zp
        t = m.input
        r = acc.region[t.region]
        self.x, self.commit_input = input_target(acc._region_view(self.input, r), t, r)
        self.heads = [acc._region_view(bufs[h.base_reg], acc.region[h.region])[tensor_window(h)] for h in m.heads]
        self.bases = {k: int(b.device_address) for k, b in bufs.items()}
        self.sizes = {k: int(b.nbytes) for k, b in bufs.items()}      # written to the *_size registers
        p = m.pre            # a PRE program: the frame buffer (nominal frame, grown on demand) and its registers
        self.frame = FrameBuffer(3 * p.frame_w * p.frame_h) if p else None
        self.pre_frame = None


def device_frame(frame) -> tuple[int, int, object] | None:
    """``(device address, row pitch in bytes, flat uint8 PYNQ view of the bytes PRE reads)`` of a frame PRE can read
    where it is: a PYNQ buffer (or a view of one) uint8 [H, W, 3] with strides ``[pitch, 3, 1]`` and a pitch PRE takes
    (module docstring); None for any other array (it is copied)."""
    addr = getattr(frame, "device_address", None)
    if addr is None or not isinstance(frame, np.ndarray) or not hasattr(frame, "flush"):
        return None
    h, w, _ = frame.shape
    s0, s1, s2 = frame.strides
    pitch = s0 if h > 1 else 3 * w
    if s1 != 3 or s2 != 1 or not 3 * w <= pitch <= MAX_PITCH:
        return None
    n = (h - 1) * pitch + 3 * w
    flat = np.lib.stride_tricks.as_strided(frame, (n,), (1,), subok=True, writeable=False)
    return int(addr), int(pitch), flat


def hand_over(frame: np.ndarray, fb: FrameBuffer, net_w: int, net_h: int, resize: str,
              bgr: bool) -> tuple[PreFrame, int]:
    """Put ``frame`` (uint8 [H, W, 3], any size PRE takes) where PRE reads it (in place or copied into ``fb``, module
    docstring), flushed. Returns (PRE's registers for it on a ``net_w`` x ``net_h`` input resized by ``resize``,
    bytes copied: 0 in place, H x W x 3 else).

    Raises:
        ValueError (host.pre.PreError): a frame PRE cannot take, naming its size (below 1 x 1 or above
            :data:`host.pre.MAX_FRAME`, or a row pitch beyond :data:`host.pre.MAX_PITCH`).
    """
    h, w, _ = frame.shape
    g = pre_geometry(w, h, net_w, net_h, resize)
    dev = device_frame(frame)
    if dev is not None:
        addr, pitch, flat = dev
        pf, copied = PreFrame.of(g, addr, flat.size, pitch, bgr), 0
    else:
        copied = 3 * w * h
        flat = fb.fit(copied)[:copied]
        np.copyto(flat.reshape(h, w, 3), frame)
        pf = PreFrame.of(g, int(flat.device_address), int(fb.buf.size), 3 * w, bgr)
    why = pre_violation(g, pf.pitch, pf.size)
    if why is not None:
        raise ValueError(f"frame of {w} x {h} pixels: {why}")
    flat.flush()
    return pf, copied


def write_frame_registers(ip, pf: PreFrame | None):
    """Write every PRE register of ``pf`` (None: none) by name (:meth:`host.pre.PreFrame.registers`) through
    ``ip``'s register map (:meth:`host.accel_ip.AccelIP.write_reg`)."""
    for name, value in (pf.registers() if pf is not None else {}).items():
        ip.write_reg(name, value)


def check_pre_registers(m, where):
    """Raises PackageError (naming ``where``) when manifest ``m`` has a ``pre`` entry but its register map lacks one
    of PRE's registers (:data:`host.pre.PreFrame.REGISTERS`)."""
    missing = [n for n in PreFrame.REGISTERS if n not in m.registers] if m.pre is not None else []
    if missing:
        raise PackageError(f"{where}: a PRE program without the registers {missing}")


def _run(acc, s, frame=None, prologue=False) -> tuple[float, float, int]:
    """One run on buffer set ``s`` (:meth:`host.driver.YoloAccelerator._start`): (ms of PRE's registers, wall ms,
    cycles)."""
    reg = acc._start(s, frame, prologue)
    ms = acc._wait(s)
    return reg, ms, acc.ip.read_reg("cycles")


def pre_detect(acc, img) -> tuple[list, dict]:
    """One frame on a PRE program (module text): (detections, timing as ``last_timing``; ``accel_ms`` and
    ``accel_cycles`` the prologue's and the main run's together). Raises as
    :meth:`host.driver.YoloAccelerator.detect`."""
    s = acc.sets[0]
    ho, copied = acc._pre(img, s)
    reg, ms0, cyc0 = _run(acc, s, prologue=True)
    _, ms1, cyc1 = _run(acc, s)
    dets, post = acc._post(img.shape, s)
    return dets, acc._timing(ho + reg, ms0 + ms1, post, cyc0 + cyc1, copied)


def pre_stream(acc, frames, with_timing: bool):
    """:meth:`host.driver.YoloAccelerator.detect_stream` on a PRE program with two buffer sets (module text): frame
    k's OUTPUT in set k % 2, its frame handed over into set k % 2's frame buffer (by a worker thread while run k - 2
    runs), run k computing frame k with frame k+1's PRE registers. Timing per frame as ``last_timing`` (``pre_ms``
    its handover, ``accel_ms`` / ``accel_cycles`` the run computing it, the first one's prologue added) plus
    ``wall_ms``."""
    it, sets = iter(frames), acc.sets
    end = object()

    def prep(k):
        img = next(it, end)
        if img is end:
            return None
        img = acc._check_image(img)
        return (img.shape, *acc._pre(img, sets[k % 2]))

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="yolo-pre")
    try:
        cur = prep(0)
        if cur is None:
            return
        reg, pro_ms, pro_cyc = _run(acc, sets[0], prologue=True)
        cur = (cur[0], cur[1] + reg, cur[2])
        nxt, pending, k, t_last = prep(1), None, 0, time.perf_counter()
        while cur is not None:
            s = sets[k % 2]
            reg = acc._start(s, (sets[(k + 1) % 2] if nxt is not None else s).pre_frame)
            if nxt is not None:
                nxt = (nxt[0], nxt[1] + reg, nxt[2])
            fut = pool.submit(prep, k + 2) if nxt is not None else None    # set k % 2's frame: run k reads k+1's
            if pending is not None:
                yield _finish(acc, pending, with_timing, t_last)
                t_last = time.perf_counter()
            ms = acc._wait(s)
            cyc = acc.ip.read_reg("cycles")
            pending = (s, cur, ms + pro_ms, cyc + pro_cyc)
            pro_ms = pro_cyc = 0
            cur, nxt, k = nxt, fut.result() if fut is not None else None, k + 1
        if pending is not None:
            yield _finish(acc, pending, with_timing, t_last)
    finally:
        if acc._busy is not None:
            try:
                acc._wait(acc._busy)
            except DriverError:
                pass
        pool.shutdown(wait=True)


def _finish(acc, pending, with_timing, t_last):
    """Post-process a finished run ``pending`` = (set, (shape, handover ms, bytes copied), run ms, cycles)."""
    s, (shape, ho, copied), ms, cyc = pending
    dets, post = acc._post(shape, s)
    tm = acc._timing(ho, ms, post, cyc, copied)
    tm["wall_ms"] = (time.perf_counter() - t_last) * 1e3
    acc.last_timing = tm
    return (dets, tm) if with_timing else dets
