"""Darknet cfgs shaped like the tiny YOLOs AlexeyAB's darknet trains, written by our own builder for the tests:
the Debian ``darknet`` package (``/usr/share/darknet/cfg``) ships YOLOv3-tiny and YOLOv3-SPP but not these, and no
cfg is fetched from the network. Layer for layer they follow the published structure (80 classes, COCO anchors):

* ``yolov4_tiny_3l`` (``yolov4-tiny-3l.cfg``): three CSP stages with ``[route] groups=2 group_id=1``, three heads
  at strides 32/16/8, two ``[upsample] stride=2``, ``scale_x_y = 1.05``.
* ``yolov7_tiny`` (``yolov7-tiny.cfg``): ELAN blocks (four-way ``[route] layers=-5,-3,-2,-1``), SPPCSP with the
  stride-1 max-pools 5/9/13, PANet with absolute-index routes, three heads.
* ``yolov3_tiny_prn`` (``yolov3-tiny-prn.cfg``): partial residual connections, ``[shortcut] activation=leaky``
  between layers of different channel counts (darknet adds the first min(C) channels), two heads.

``upsample4=True`` (``yolov4_tiny_3l`` only) replaces the stride-8 head's input path by one ``[upsample]
stride=4`` from the stride-32 branch (the x4 upsampling some tiny variants use).

Usage: ``python -m generator.frontend.darknet.family yolov7_tiny out.cfg [--size 416]``.
"""
from __future__ import annotations

import argparse

FAMILIES = ("yolov4_tiny_3l", "yolov7_tiny", "yolov3_tiny_prn")
COCO_ANCHORS = "10,13, 16,30, 33,23, 30,61, 62,45, 59,119, 116,90, 156,198, 373,326"
V4_3L_ANCHORS = "12,16, 19,36, 40,28, 36,75, 76,55, 72,146, 142,110, 192,243, 459,401"
PRN_ANCHORS = "10,14, 23,27, 37,58, 81,82, 135,169, 344,319"


class _Cfg:
    """Sections of a darknet cfg; each ``add`` returns the new layer's index (``[net]`` is not a layer)."""

    def __init__(self, size: int):
        self.parts = [f"[net]\nbatch=1\nsubdivisions=1\nwidth={size}\nheight={size}\nchannels=3\n"]
        self.n = 0

    def add(self, kind: str, **opts) -> int:
        body = "".join(f"{k}={v}\n" for k, v in opts.items())
        self.parts.append(f"[{kind}]\n{body}")
        self.n += 1
        return self.n - 1

    def conv(self, filters: int, size: int = 1, stride: int = 1, act: str = "leaky") -> int:
        return self.add("convolutional", batch_normalize=1, filters=filters, size=size, stride=stride, pad=1,
                        activation=act)

    def route(self, *layers: int, **opts) -> int:
        return self.add("route", layers=",".join(str(x) for x in layers), **opts)

    def head(self, mask: str, anchors: str, num: int, **opts) -> int:
        self.add("convolutional", size=1, stride=1, pad=1, filters=255, activation="linear")
        return self.add("yolo", mask=mask, anchors=anchors, classes=80, num=num, **opts)

    def text(self) -> str:
        return "\n".join(self.parts)


def yolov4_tiny_3l(size: int = 416, upsample4: bool = False) -> str:
    """YOLOv4-tiny-3l-shaped cfg text (input ``size`` x ``size``, a multiple of 32)."""
    c = _Cfg(size)
    c.conv(32, 3, 2)
    c.conv(64, 3, 2)
    stage_out = []
    for f in (64, 128, 256):
        a = c.conv(f, 3)
        c.route(-1, groups=2, group_id=1)
        c.conv(f // 2, 3)
        c.conv(f // 2, 3)
        c.route(-1, -2)
        stage_out.append(c.conv(f, 1))
        c.route(a, stage_out[-1])
        c.add("maxpool", size=2, stride=2)
    c.conv(512, 3)
    p5 = c.conv(256, 1)
    c.conv(512, 3)
    y = dict(scale_x_y=1.05)
    c.head("6,7,8", V4_3L_ANCHORS, 9, **y)
    c.route(p5)
    c.conv(128, 1)
    c.add("upsample", stride=2)
    c.route(-1, stage_out[2])
    p4 = c.conv(256, 3)
    c.head("3,4,5", V4_3L_ANCHORS, 9, **y)
    if upsample4:
        c.route(p5)
        c.conv(64, 1)
        c.add("upsample", stride=4)
    else:
        c.route(p4)
        c.conv(64, 1)
        c.add("upsample", stride=2)
    c.route(-1, stage_out[1])
    c.conv(128, 3)
    c.head("0,1,2", V4_3L_ANCHORS, 9, **y)
    return c.text()


def _elan(c: _Cfg, f: int) -> int:
    """YOLOv7-tiny's ELAN block on the previous layer: two 1x1 branches, two 3x3 in series, four-way concat, 1x1
    to 2f channels; returns that last layer's index."""
    c.conv(f, 1)
    c.route(-2)
    c.conv(f, 1)
    c.conv(f, 3)
    c.conv(f, 3)
    c.route(-5, -3, -2, -1)
    return c.conv(2 * f, 1)


def yolov7_tiny(size: int = 416) -> str:
    """YOLOv7-tiny-shaped cfg text (input ``size`` x ``size``, a multiple of 32)."""
    c = _Cfg(size)
    c.conv(32, 3, 2)
    c.conv(64, 3, 2)
    _elan(c, 32)
    c.add("maxpool", size=2, stride=2)
    b2 = _elan(c, 64)
    c.add("maxpool", size=2, stride=2)
    b3 = _elan(c, 128)
    c.add("maxpool", size=2, stride=2)
    _elan(c, 256)
    cv1 = c.conv(256, 1)                      # SPPCSP
    c.route(-2)
    c.conv(256, 1)
    c.add("maxpool", size=5, stride=1)
    c.route(-2)
    c.add("maxpool", size=9, stride=1)
    c.route(-4)
    c.add("maxpool", size=13, stride=1)
    c.route(-1, -3, -5, -6)
    c.conv(256, 1)
    c.route(cv1, -1)
    p5 = c.conv(256, 1)
    top_down = []
    for lateral, f in ((b3, 64), (b2, 32)):     # PANet top-down: 1x1, upsample, 1x1 of the backbone level, ELAN
        c.conv(2 * f, 1)
        c.add("upsample", stride=2)
        c.route(lateral)
        c.conv(2 * f, 1)
        c.route(-1, -3)
        top_down.append(_elan(c, f))
    p4, n3 = top_down
    c.conv(128, 3, 2)
    c.route(-1, p4)
    n4 = _elan(c, 64)
    c.conv(256, 3, 2)
    c.route(-1, p5)
    n5 = _elan(c, 128)
    for src, f, mask in ((n3, 128, "0,1,2"), (n4, 256, "3,4,5"), (n5, 512, "6,7,8")):
        c.route(src)
        c.conv(f, 3)
        c.head(mask, COCO_ANCHORS, 9)
    return c.text()


def yolov3_tiny_prn(size: int = 416) -> str:
    """YOLOv3-tiny-PRN-shaped cfg text (input ``size`` x ``size``, a multiple of 32)."""
    c = _Cfg(size)
    for f in (16, 32, 64, 128, 256):
        last = c.conv(f, 3)
        c.add("maxpool", size=2, stride=2)
    p4 = last                                  # the 256-channel stride-16 map
    c.conv(512, 3)
    c.add("maxpool", size=2, stride=1)
    c.conv(512, 3)
    c.add("shortcut", activation="leaky", **{"from": -3})
    c.conv(256, 1)
    c.conv(256, 3)
    c.add("shortcut", activation="leaky", **{"from": -2})
    c.head("3,4,5", PRN_ANCHORS, 6)
    c.route(-4)
    c.conv(128, 1)
    c.add("upsample", stride=2)
    c.add("shortcut", activation="leaky", **{"from": p4})
    c.conv(128, 3)
    c.add("shortcut", activation="leaky", **{"from": -3})
    c.add("shortcut", activation="leaky", **{"from": p4})
    c.head("1,2,3", PRN_ANCHORS, 6)
    return c.text()


BUILDERS = {"yolov4_tiny_3l": yolov4_tiny_3l, "yolov7_tiny": yolov7_tiny, "yolov3_tiny_prn": yolov3_tiny_prn}


def main(argv=None) -> None:
    """Command line: write one family's cfg."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=416)
    a = ap.parse_args(argv)
    from host.fileio import atomic_write

    atomic_write(a.out, BUILDERS[a.family](a.size))


if __name__ == "__main__":
    main()
