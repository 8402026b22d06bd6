"""The end-to-end flow (``invoke stream``, issue 45): what a user gets per frame, the host beside the accelerator.

The compiled program runs in the board's driver (:class:`host.driver.YoloAccelerator`) exactly as on a PYNQ image,
on the golden-simulator device (:mod:`generator.exec.pynq_golden`), with this process pinned to host cores
``cores`` (``os.sched_setaffinity``, as ``taskset`` does). Per frame the driver measures its own host work: ``pre``
(resize, pixel format, quantization, the first layer's im2col patches into the INPUT buffer, cache flush) and
``post`` (cache invalidate, head decode, NMS); the fastest of ``frames`` runs of each is taken (the least disturbed
by other work on the machine). The simulator runs between them, never beside them (``detect``, one frame at a time),
so it takes no host time from the measurement.

The accelerator's time per frame is its cycles at the board clock: the latency model's (within 1% per layer of the
RTL on YOLOv4-tiny, README), named as such. :meth:`host.driver.YoloAccelerator.detect_stream` overlaps the three:
while the accelerator runs frame k, a worker thread pre-processes frame k+1 and the caller post-processes frame
k-1. So, end to end, a frame takes the longest of the accelerator's time and the host's: on one host core pre and
post share it (``max(accel, pre + post)``), on two cores they run side by side (``max(accel, pre, post)``).

Bytes per frame the host moves through the shared buffers: the frame it reads (H x W x 3), the INPUT region it
writes and the head regions it reads (the manifest's region sizes).

With ``pre`` in the target (``--pre WxH``, issue 45) the same run also compiles the program with PRE (the accelerator
resizes and quantizes the camera frame; :mod:`generator.codegen.pre`) and measures its path beside the host's
(:class:`PrePath`): the driver's handover (:mod:`host.handover`: the frame copied once into the frame buffer, flushed,
PRE's registers written), also for a frame already in a PYNQ buffer (read in place: flush and registers only), the
post-processing, and the accelerator's time as the golden device's cycles of the main run (the network on the
frame's input and, in bands where the LOAD module would wait, PRE of the next frame: a stream's steady state; the
latency model's count, :mod:`generator.exec.golden`); the prologue (PRE of a stream's first frame) is stated apart.
The host's bytes per frame are then the frame it copies (read and written once) and the head regions.
"""
from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass, replace

from generator.flows.inputs import check_target, flow_errors, real_image
from generator.flows.request import ModelSource, Target, compile_request


@dataclass
class PrePath:
    """The PRE path of one run (milliseconds per frame, fastest of the frames): ``handover_ms`` (copy, flush, PRE's
    registers), ``zero_copy_ms`` (the frame in a PYNQ buffer: flush and registers), ``post_ms``, ``cycles`` (the
    golden device's of a main run, the next frame's PRE in bands included), ``prologue_cycles`` (PRE of a stream's
    first frame), ``nominal`` (the frame size the program was priced for), ``copied_bytes``,
    ``head_bytes``, ``detections`` (of the last frame)."""
    nominal: tuple
    handover_ms: float
    zero_copy_ms: float
    post_ms: float
    cycles: int
    prologue_cycles: int
    copied_bytes: int
    head_bytes: int
    detections: list

    def fps(self, accel_ms: float, host_cores: int, handover_ms: float | None = None) -> float:
        """End-to-end frames/s beside an accelerator of ``accel_ms`` per frame with ``host_cores`` (1 or 2) cores
        (the copy's handover unless ``handover_ms``)."""
        ho = self.handover_ms if handover_ms is None else handover_ms
        return 1e3 / max(accel_ms, ho + self.post_ms if host_cores == 1 else max(ho, self.post_ms))


@dataclass
class StreamResult:
    """One end-to-end measurement (milliseconds per frame, fastest of ``frames``): ``pre_ms``, ``post_ms`` (host,
    on ``cores``), ``accel_ms`` (latency-model cycles ``cycles`` at ``clock_mhz``), ``frame_bytes``,
    ``input_bytes``, ``head_bytes`` (host bytes per frame), ``detections`` (of the last frame)."""
    image: str
    frames: int
    cores: tuple
    pre_ms: float
    post_ms: float
    cycles: int
    clock_mhz: float
    frame_bytes: int
    input_bytes: int
    head_bytes: int
    detections: list
    pre_path: PrePath | None = None

    @property
    def accel_ms(self) -> float:
        """The accelerator's milliseconds per frame: latency-model ``cycles`` at ``clock_mhz``."""
        return self.cycles / self.clock_mhz / 1e3

    def fps(self, host_cores: int) -> float:
        """End-to-end frames/s of the overlapped stream with ``host_cores`` (1 or 2) cores for pre and post."""
        host = self.pre_ms + self.post_ms if host_cores == 1 else max(self.pre_ms, self.post_ms)
        return 1e3 / max(self.accel_ms, host)

    def markdown(self) -> str:
        """The report: per-frame times, frames/s accelerator-only and end to end, bytes."""
        bound = "host" if self.pre_ms + self.post_ms > self.accel_ms else "accelerator"
        return "\n".join([
            f"## End to end, {self.image} ({self.frames} frames, host pinned to core(s) {list(self.cores)})", "",
            "| per frame | ms | source |", "|---|---:|---|",
            f"| host pre-processing (resize, format, quantize, im2col, flush) | {self.pre_ms:.2f} | measured, fastest |",
            f"| host post-processing (invalidate, decode, NMS) | {self.post_ms:.2f} | measured, fastest |",
            f"| accelerator ({self.cycles:,} cycles at {self.clock_mhz:g} MHz) | {self.accel_ms:.2f} | latency model |",
            "", "| frames/s | |", "|---|---:|",
            f"| accelerator only | {1e3 / self.accel_ms:.1f} |",
            f"| end to end, one host core (pre + post beside the accelerator) | {self.fps(1):.1f} |",
            f"| end to end, two host cores (pre and post each on its own) | {self.fps(2):.1f} |", "",
            f"Bound by the {bound} on one core. Host buffers per frame: the frame read ({self.frame_bytes:,} B), "
            f"the INPUT region written ({self.input_bytes:,} B), the head regions ({self.head_bytes:,} B; the "
            f"decoder reads only their objectness codes and its candidates' channels).", "",
            *(self._pre_markdown() if self.pre_path else [])])

    def _pre_markdown(self) -> list:
        """The PRE path's section: beside the host's figures, and the issue's three checks."""
        p, clk = self.pre_path, self.clock_mhz
        acc = p.cycles / clk / 1e3
        e2e = p.fps(acc, 1)
        host = self.pre_ms + self.post_ms
        return [
            f"## PRE in the accelerator (`--pre {p.nominal[0]}x{p.nominal[1]}`), same image and cores", "",
            "| per frame | host pre-processing | PRE |", "|---|---:|---:|",
            f"| host hands the frame in (ms) | {self.pre_ms:.2f} (pre-processing) | {p.handover_ms:.3f} (copy, flush, "
            f"registers); {p.zero_copy_ms:.3f} in a PYNQ buffer (flush, registers) |",
            f"| host post-processing (ms) | {self.post_ms:.2f} | {p.post_ms:.2f} |",
            f"| accelerator (ms) | {self.accel_ms:.2f} ({self.cycles:,} cycles) | {acc:.2f} ({p.cycles:,} cycles, "
            f"the next frame's PRE in bands; a stream's first frame adds the prologue's {p.prologue_cycles:,}) |",
            f"| frames/s, accelerator only | {1e3 / self.accel_ms:.1f} | {1e3 / acc:.1f} |",
            f"| frames/s end to end, one host core | {self.fps(1):.1f} | {e2e:.1f} (in a PYNQ buffer: "
            f"{p.fps(acc, 1, p.zero_copy_ms):.1f}) |",
            f"| frames/s end to end, two host cores | {self.fps(2):.1f} | {p.fps(acc, 2):.1f} |",
            f"| host bytes per frame | {self.frame_bytes + self.input_bytes + self.head_bytes:,} (frame read, INPUT "
            f"written, heads) | {2 * p.copied_bytes + p.head_bytes:,} (frame copied: {p.copied_bytes:,} B read and "
            f"written; heads; in a PYNQ buffer: heads only) |", "",
            f"Issue 45's checks: handover {p.handover_ms:.3f} ms {'<=' if p.handover_ms <= 1 else '>'} 1 ms; "
            f"post-processing {p.post_ms:.2f} ms {'<=' if p.post_ms <= 2 else '>'} 2 ms; end to end (one core) "
            f"{e2e:.1f} frames/s, {100 * (1 - e2e * acc / 1e3):.1f}% below the accelerator-only figure "
            f"({'within' if e2e * acc / 1e3 >= 0.9 else 'beyond'} 10%). Host path on one core: "
            f"{host:.2f} ms of host work per frame, PRE path {p.handover_ms + p.post_ms:.2f} ms. Times measured on "
            f"this machine's CPU (the golden device's flushes cost nothing; a board's cache flush of the frame adds "
            f"to the handover).", ""]


def _measure(pkg, board, img, frames: int, zero_copy: bool = False) -> tuple:
    """(fastest pre ms, fastest post ms, detections of the last frame, last timing, cycles of the last run) of
    ``frames`` driver runs; ``zero_copy``: the image handed over in a ``pynq.allocate``'d buffer (a PRE package)."""
    from pynq import allocate

    from generator.exec.pynq_golden import GoldenSimDevice, active
    from host.driver import YoloAccelerator

    pre, post, dets = [], [], []
    with active(GoldenSimDevice(board, mem_bytes=(40 << 20) + 4 * img.size)):
        acc = YoloAccelerator(pkg, timeout_s=600.0, buffer_sets=1)
        if zero_copy:
            buf = allocate(shape=img.shape, dtype=img.dtype)
            buf[:] = img
            img = buf
        try:
            for _ in range(frames):
                dets = acc.detect(img)
                pre.append(acc.last_timing["pre_ms"])
                post.append(acc.last_timing["post_ms"])
            cycles = acc.ip.read_reg("cycles")      # (a PRE program: the main run's, the last of a frame)
        finally:
            acc.close()
    return min(pre), min(post), dets, acc.last_timing, cycles


def _measure_pre(comp, target, source, board, img, frames: int) -> PrePath:
    """The PRE path (:class:`PrePath`) of ``img``: the package of ``comp`` (compiled with PRE) through the driver,
    copied and in place."""
    from generator.flows.artifacts import write_artifacts
    from generator.flows.request import artifact_dir
    from host.manifest import read_manifest

    pkg = Path(write_artifacts(comp, artifact_dir(comp, None, target, source)))
    m = read_manifest(pkg / "manifest.json")
    ho, post, dets, t, main = _measure(pkg, board, img, frames)
    zc, post_zc, _, t_zc, _ = _measure(pkg, board, img, frames, zero_copy=True)
    if t_zc["copied_bytes"] != 0:
        raise AssertionError("the frame in a PYNQ buffer was copied")
    regions = {r.name: r for r in m.regions}
    return PrePath(tuple(target.pre), ho, zc, min(post, post_zc), main, int(t["accel_cycles"]) - main,
                   int(t["copied_bytes"]),
                   sum(regions[h.region].bytes for h in m.heads if h.region in regions), dets)


@flow_errors
def stream_flow(target: Target = Target(), source: ModelSource = ModelSource(), image="bus", frames: int = 5,
                cores=(0,), out=None, log=print) -> StreamResult:
    """Measure ``image`` end to end (module docstring) over ``frames`` frames with the host on ``cores`` (indices
    of this machine's CPUs); write the Markdown report to ``out`` (a file, probed first) when given. Raises
    FlowError for a bad target, model, image or core."""
    from generator.flows.artifacts import write_artifacts
    from generator.flows.inputs import FlowError
    from generator.flows.request import artifact_dir
    from host.fileio import atomic_write
    from host.manifest import read_manifest

    dest = check_target(out, "file", "the end-to-end report") if out else None
    avail = os.sched_getaffinity(0)
    if not cores or not set(cores) <= avail:
        raise FlowError(f"--cores {','.join(map(str, cores))}: this machine's cores are "
                        f"{','.join(map(str, sorted(avail)))}")
    img = real_image(image)
    source = source.resolved()
    host_target = replace(target, pre=None)
    comp = compile_request(host_target, source, require_detection=True)
    pre_comp = compile_request(target, source, require_detection=True) if target.pre else None
    pkg = Path(write_artifacts(comp, artifact_dir(comp, None, host_target, source)))
    m = read_manifest(pkg / "manifest.json")
    log(f"{frames} frames of {image} through the driver on the golden device, host on core(s) {list(cores)} ...")
    os.sched_setaffinity(0, set(cores))
    try:
        pre, post, dets, _, _ = _measure(pkg, comp.board.name, img, frames)
        pre_path = _measure_pre(pre_comp, target, source, comp.board.name, img, frames) if pre_comp else None
    finally:
        os.sched_setaffinity(0, avail)
    regions = {r.name: r for r in m.regions}
    res = StreamResult(str(image), frames, tuple(cores), pre, post, comp.program.cycles, comp.hw.clock_mhz,
                       img.size, regions[m.input.region].bytes if m.input.region in regions else 0,
                       sum(regions[h.region].bytes for h in m.heads if h.region in regions), dets, pre_path)
    if dest:
        atomic_write(dest, res.markdown() + f"\n![per-frame time]({dest.with_suffix('.png').name})\n")
        _draw(res, dest.with_suffix(".png"))
    log(res.markdown())
    return res


def _draw(res: StreamResult, path) -> None:
    """A bar chart of one frame's time: the host's pre and post stacked beside the accelerator's, written
    atomically to ``path`` (PNG)."""
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from host.fileio import atomic_write

    fig, ax = plt.subplots(figsize=(7.5, 2.4))
    ax.barh(["host, one core"], [res.pre_ms], color="#d95f02", label="pre-processing")
    ax.barh(["host, one core"], [res.post_ms], left=[res.pre_ms], color="#7570b3", label="post-processing")
    ax.barh(["accelerator"], [res.accel_ms], color="#1b9e77", label=f"accelerator ({res.clock_mhz:g} MHz, model)")
    if res.pre_path is not None:
        p = res.pre_path
        ax.barh(["PRE: host, one core"], [p.handover_ms], color="#e7298a", label="handover (copy, flush, registers)")
        ax.barh(["PRE: host, one core"], [p.post_ms], left=[p.handover_ms], color="#7570b3")
        ax.barh(["PRE: accelerator"], [p.cycles / res.clock_mhz / 1e3], color="#66a61e", label="accelerator, PRE")
    ax.set_xlabel("ms per frame")
    ax.set_title(f"{res.image}: {res.fps(1):.1f} frames/s end to end, {1e3 / res.accel_ms:.1f} accelerator only",
                 fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
