"""The im2col input (generator/codegen/allocate.py ``im2col_regions``, host/manifest.py ``im2col_into``): YOLOv4-tiny's
folded first convolution reads its input as patches, one contiguous run per output pixel."""
from __future__ import annotations

import numpy as np

from generator.flows.artifacts import manifest
from generator.exec import runtime
from generator.flows.rtl_frame import model_at_resolution
from generator.spec import isa
from helpers import compiled_model


def test_first_layer_reads_its_patches_in_one_run_per_pixel():
    """At 64x64 on zcu19eg: the input region is [32, 32, Tn] patches without a border; every ifmap LOAD of conv_0
    is one run of a whole patch per output pixel (no 9-byte gathers); the manifest's input says IM2COL; the DDR
    image holds the patches of the quantized input (pixel (0, 0): the padding's zero point, then the image)."""
    c = compiled_model("zcu19eg", "int8-asym", str(model_at_resolution(64)))
    prog, g = c.program, c.qgraph
    r = prog.layout.regions[g.tensors[g.inputs[0]].region]
    assert r["im2col"] == dict(k=3, s=2, pads=[1, 1, 1, 1], h=64, w=64, c=3)
    assert (r["h"], r["w"], r["channels"], r["pad"]) == (32, 32, prog.hw.tn, 0)
    a, b = prog.ranges[0]
    loads = [i for i in prog.insns[a:b] if i.op == "LOAD" and i.f["buf"] == isa.BUFFERS["IBUF"]]
    assert loads and all(i.f["elems"] == prog.hw.tn and i.f["pix_stride"] == prog.hw.tn
                         and i.f["row_stride"] == 32 * prog.hw.tn for i in loads)
    m = manifest(c)
    assert m["input"]["layout"] == "IM2COL" and m["input"]["h"] == 64
    x = np.random.default_rng(0).integers(-128, 128, (1, 3, 64, 64))
    ddr, bases = runtime.build_ddr(prog, x)
    pix = ddr[bases["INPUT"] + r["addr"]:][:2 * prog.hw.tn].view(np.int8)
    zp = r["zp"]
    # patch (0, 0): rows -1..1 x columns -1..1; row -1 and column -1 are padding
    want = np.full((3, 3, 3), zp)
    want[1:, 1:] = x[0, :, :2, :2].transpose(1, 2, 0)
    assert (pix[:27] == want.ravel()).all() and (pix[27:32] == zp).all()
    # patch (0, 1): columns 1..3
    want = np.full((3, 3, 3), zp)
    want[1:] = x[0, :, :2, 1:4].transpose(1, 2, 0)
    assert (pix[32:59] == want.ravel()).all()
