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
"""
from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass

from generator.flows.inputs import check_target, flow_errors, real_image
from generator.flows.request import ModelSource, Target, compile_request


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
            f"decoder reads only their objectness codes and its candidates' channels).", ""])


def _measure(pkg, board, img, frames: int) -> tuple:
    """(fastest pre ms, fastest post ms, detections of the last frame) of ``frames`` driver runs."""
    from generator.exec.pynq_golden import GoldenSimDevice, active
    from host.driver import YoloAccelerator

    pre, post, dets = [], [], []
    with active(GoldenSimDevice(board)):
        acc = YoloAccelerator(pkg, timeout_s=600.0, buffer_sets=1)
        try:
            for _ in range(frames):
                dets = acc.detect(img)
                pre.append(acc.last_timing["pre_ms"])
                post.append(acc.last_timing["post_ms"])
        finally:
            acc.close()
    return min(pre), min(post), dets


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
    comp = compile_request(target, source, require_detection=True)
    pkg = Path(write_artifacts(comp, artifact_dir(comp, None, target, source)))
    m = read_manifest(pkg / "manifest.json")
    log(f"{frames} frames of {image} through the driver on the golden device, host on core(s) {list(cores)} ...")
    os.sched_setaffinity(0, set(cores))
    try:
        pre, post, dets = _measure(pkg, comp.board.name, img, frames)
    finally:
        os.sched_setaffinity(0, avail)
    regions = {r.name: r for r in m.regions}
    res = StreamResult(str(image), frames, tuple(cores), pre, post, comp.program.cycles, comp.hw.clock_mhz,
                       img.size, regions[m.input.region].bytes if m.input.region in regions else 0,
                       sum(regions[h.region].bytes for h in m.heads if h.region in regions), dets)
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
    ax.set_xlabel("ms per frame")
    ax.set_title(f"{res.image}: {res.fps(1):.1f} frames/s end to end, {1e3 / res.accel_ms:.1f} accelerator only",
                 fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
