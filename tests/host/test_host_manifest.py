"""The deployment contract host/ owns (host/manifest.py, host/registers.py): the manifest schema the generator writes
through and the driver reads through, the hw_info packing, and the ISA tables derived from them."""
from __future__ import annotations

import json

import pytest

from generator.spec import isa
from host.errors import PackageError
from host.manifest import (BASE_REGS, PRECISIONS, SCHEMA, ManifestError, build_manifest, entry, page_round,
                           precision_names, read_manifest, region_dtype)
from host.registers import HW_INFO_MODES, KERNEL_VLNV, SIZE_REGS, ip_vlnv, pack_hw_info, unpack_hw_info

HW = dict(tn=32, tm=32, precisions=["int8", "int16"], config_id=0x1234, pix_lanes=2)


def test_entry_orders_keys_and_refuses_off_schema_fields():
    e = entry("hardware", **dict(reversed(list(HW.items()))))
    assert list(e) == list(SCHEMA["hardware"]) and e == HW
    with pytest.raises(ManifestError, match=r"missing keys \['pix_lanes'\]"):
        entry("hardware", **{k: v for k, v in HW.items() if k != "pix_lanes"})
    with pytest.raises(ManifestError, match=r"unknown keys \['extra'\]"):
        entry("hardware", **HW, extra=1)
    with pytest.raises(ManifestError, match="tn = True"):
        entry("hardware", **dict(HW, tn=True))          # bool is not an int in the manifest
    t = dict(name="x", region="r", base_reg="INPUT", offset=0, ch_offset=0, channels=3, h=4, w=4, pad=1,
             pixel_stride=3, layout="NHWC", scale=0.5, zero_point=0, dtype="int8", bits=8)
    assert list(entry("tensor", **t, yolo={"classes": 1})) == [*SCHEMA["tensor"], "yolo"]
    with pytest.raises(ManifestError, match=r"missing keys \['bits'\]"):
        entry("tensor", **{k: v for k, v in t.items() if k != "bits"})
    with pytest.raises(ManifestError, match="precisions = 'int8'"):
        entry("hardware", **dict(HW, precisions="int8"))


def test_precisions_and_element_types_per_region():
    """hardware.precisions: the regions' widths by name, each once, narrowest first (hw_info's mode names); a
    region's element type is its own bits' (int8, little-endian int16)."""
    assert precision_names([16, 8, 16]) == ["int8", "int16"] and precision_names([16]) == ["int16"]
    assert list(PRECISIONS) == list(HW_INFO_MODES) and precision_names([8]) == ["int8"]
    with pytest.raises(ManifestError, match=r"\[12\]"):
        precision_names([8, 12])
    import numpy as np
    assert region_dtype({"bits": 8}) == np.int8 and region_dtype({"bits": 16}) == np.dtype("<i2")
    with pytest.raises(PackageError, match="region r: bits = 4"):
        region_dtype({"name": "r", "bits": 4})


def test_build_and_read_manifest(tmp_path):
    fields = {k: {int: 1, str: "s", dict: {}, list: []}.get(t, 300.0) for k, t in SCHEMA["manifest"].items()}
    with pytest.raises(ManifestError, match="hardware entry"):
        build_manifest(**fields)                         # nested entries are checked too
    fields.update(hardware=HW, net={"width": 4, "height": 4})
    with pytest.raises(ManifestError, match="base_sizes"):
        build_manifest(**fields)
    fields.update(base_sizes={k: 0 for k in BASE_REGS}, registers={"CTRL": {"offset": 0, "bits": 32}})
    with pytest.raises(ManifestError, match=r"register entry: missing keys \['access'\]"):
        build_manifest(**fields)
    fields.update(registers={}, input={})
    with pytest.raises(ManifestError, match="tensor entry"):
        build_manifest(**fields)
    (tmp_path / "manifest.json").write_text(json.dumps({"isa_version": 1}))
    with pytest.raises(PackageError, match="missing keys"):
        read_manifest(tmp_path / "manifest.json")
    with pytest.raises(PackageError, match="no such file"):
        read_manifest(tmp_path / "none.json")


def test_hw_info_and_registers_are_the_isas():
    word = pack_hw_info(isa.ISA_VERSION, 32, 16)
    assert unpack_hw_info(word) == {"isa_version": isa.ISA_VERSION, "tn": 32, "tm": 16,
                                    "precisions": ["int8", "int16"]}
    assert unpack_hw_info(pack_hw_info(1, 8, 8, ["int16"]))["precisions"] == ["int16"]
    assert isa.PRECISIONS == HW_INFO_MODES and list(isa.BASE_REGS) == list(BASE_REGS)
    assert [isa.BASE_REGS[k] for k in BASE_REGS] == [0, 1, 2, 3]
    names = {n for n, _, _, _ in isa.REGISTERS}
    assert set(SIZE_REGS.values()) <= names and {k.lower() for k in BASE_REGS} <= names
    assert ip_vlnv("accel") == KERNEL_VLNV
    assert page_round(0) == 0 and page_round(1) == 4096 and page_round(4096) == 4096


@pytest.mark.parametrize("k,s,pads,hw", [(3, 2, (1, 1, 1, 1), (13, 11)), (3, 2, (0, 0, 1, 1), (12, 12)),
                                         (6, 2, (2, 2, 2, 2), (10, 14)), (3, 1, (1, 1, 1, 1), (7, 9))])
def test_im2col_patches_times_folded_weights_are_the_convolution(k, s, pads, hw):
    """An im2col region (host.manifest.im2col_into) times the weights in the compiler's folded order
    ([OC, IC, K, K] -> [OC, (ky, kx, ic)], generator/codegen/allocate.py) is the convolution onnxruntime computes,
    padding included; the elements past K K C hold the fill value."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from host.manifest import im2col_into

    rng = np.random.default_rng(k * 100 + s)
    (h, w), c, oc = hw, 3, 5
    x = rng.integers(-100, 100, (h, w, c)).astype(np.int16)
    wt = rng.integers(-9, 9, (oc, c, k, k)).astype(np.float32)
    spec = dict(k=k, s=s, pads=list(pads), h=h, w=w, c=c)
    oh, ow = (h + pads[0] + pads[2] - k) // s + 1, (w + pads[1] + pads[3] - k) // s + 1
    cp = -(-k * k * c // 32) * 32
    cols = im2col_into(np.zeros((oh, ow, cp), np.int16), x, spec, 0)
    assert (cols[..., k * k * c:] == 0).all()
    folded = wt.transpose(0, 2, 3, 1).reshape(oc, -1)
    got = cols[..., :k * k * c].astype(np.float64) @ folded.T.astype(np.float64)
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[k, k], strides=[s, s],
                            pads=[pads[0], pads[1], pads[2], pads[3]])
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("w", TensorProto.FLOAT, wt.shape, wt.ravel())])
    sess = ort.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                                .SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x.transpose(2, 0, 1)[None].astype(np.float32)})[0][0].transpose(1, 2, 0)
    np.testing.assert_array_equal(got, want)
    filled = im2col_into(np.zeros((oh, ow, cp), np.int16), x, spec, -7)
    assert (filled[..., k * k * c:] == -7).all() and (filled[0, 0, :c] == (-7 if pads[0] or pads[1] else x[0, 0])).all()
    with pytest.raises(ValueError, match="needs"):
        im2col_into(np.zeros((oh + 1, ow, cp), np.int16), x, spec, 0)
    with pytest.raises(ValueError, match="made of"):
        im2col_into(np.zeros((oh, ow, cp), np.int16), x[:-1], spec, 0)


def test_typed_entries_follow_the_schema():
    """Each dataclass of host/manifest_types.py has its entry kind's keys, schema keys then optional ones, in file
    order."""
    from dataclasses import fields

    from host.manifest import OPTIONAL
    from host.manifest_types import KINDS

    assert set(KINDS) == set(SCHEMA)
    for kind, cls in KINDS.items():
        assert [f.name for f in fields(cls)] == [*SCHEMA[kind], *OPTIONAL.get(kind, {})], kind


def test_read_manifest_returns_the_typed_form(tmp_path, monkeypatch):
    """read_manifest on a package the generator wrote: every entry typed with the file's values (the heads' ``yolo``
    as host.yolo.YoloHead, ``files`` as FileEntry); an entry the driver does not use that is not an object is refused
    with one PackageError naming its key path."""
    from generator.flows.artifacts import write_artifacts
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model
    from helpers import small_yolo
    from host.manifest_types import FileEntry, Hardware, Layer, Manifest, Net, Region, Register, Tensor
    from host.yolo import YoloHead

    monkeypatch.setattr(calibration, "BUILD", tmp_path / "build")
    c = compile_model("zcu19eg", "int8-asym", model=str(small_yolo(tmp_path / "m.onnx", 4303)), progress=False)
    pkg = write_artifacts(c, tmp_path / "pkg")
    raw = json.loads((pkg / "manifest.json").read_text())
    m = read_manifest(pkg / "manifest.json")
    assert isinstance(m, Manifest) and (m.n_insns, m.board, m.names) == (raw["n_insns"], raw["board"], raw["names"])
    assert m.hardware == Hardware(**raw["hardware"]) and m.net == Net(**raw["net"])
    assert m.registers == {k: Register(**r) for k, r in raw["registers"].items()}
    assert m.regions == tuple(Region(**r) for r in raw["regions"])
    assert m.input == Tensor(**raw["input"]) and m.input.format == raw["input"].get("format", "rgb01")
    assert m.heads == tuple(Tensor(**{**h, "yolo": YoloHead.from_dict(h["yolo"])}) for h in raw["heads"])
    assert m.layers == tuple(Layer(**e) for e in raw["layers"]) and m.export is None
    assert m.files == {k: FileEntry(**f) for k, f in raw["files"].items()}
    raw["layers"][0] = "conv"
    (pkg / "manifest.json").write_text(json.dumps(raw))
    with pytest.raises(PackageError, match=r"manifest.json: layers\[0\]: conv is not an object"):
        read_manifest(pkg / "manifest.json")
