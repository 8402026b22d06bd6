"""The driver verifies a package's binaries against its manifest before using them (issue 41, defect 6): the size and
SHA-256 of program.bin and weights.bin (and the export's constants) from the manifest's ``files`` entry; one byte
short, one byte longer, one flipped byte, or the binaries of another build are refused with PackageMismatchError
naming the file. A manifest without ``files`` (an older package) still loads, with weights.bin's exact size checked
(the WEIGHTS space). Over the golden-simulator PYNQ device, on a small model (a second to compile)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from generator.flows.artifacts import write_artifacts
from generator.exec.pynq_golden import GoldenSimDevice, active
from host.driver import PackageError, PackageFileMismatchError, PackageMismatchError, YoloAccelerator
from host.manifest import ManifestError, build_manifest, file_entry, read_manifest, verify_file
from helpers import small_yolo as _small_yolo  # noqa: E402





@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """Two packages of two small models (different weights), compiled with their caches in a temporary folder."""
    from generator.flows import calibration
    from generator.flows.pipeline import compile_model

    tmp = tmp_path_factory.mktemp("integrity")
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(calibration, "BUILD", tmp / "build")
        for seed in (4201, 4202):
            c = compile_model("zcu19eg", "int8-asym", model=str(_small_yolo(tmp / f"m{seed}.onnx", seed)),
                              progress=False)
            out.append(write_artifacts(c, tmp / f"pkg{seed}"))
    return out


def _copy(pkg: Path, d: Path, name: str, change) -> Path:
    """Copy of package ``pkg`` with file ``name``'s bytes replaced by ``change(bytes)``."""
    shutil.copytree(pkg, d)
    (d / name).write_bytes(change((d / name).read_bytes()))
    return d


def _flip(b: bytes, k: int | None = None) -> bytes:
    k = len(b) // 2 if k is None else k
    return b[:k] + bytes([b[k] ^ 0x01]) + b[k + 1:]


TAMPERINGS = {
    "weights.bin one byte short": ("weights.bin", lambda b: b[:-1], "bytes"),
    "weights.bin one byte longer": ("weights.bin", lambda b: b + b"\0", "bytes"),
    "weights.bin one flipped byte": ("weights.bin", _flip, "sha256"),
    "weights.bin first byte flipped": ("weights.bin", lambda b: _flip(b, 0), "sha256"),
    "program.bin one flipped byte": ("program.bin", _flip, "sha256"),
    "program.bin one byte short": ("program.bin", lambda b: b[:-1], "bytes"),
    "program.bin one byte longer": ("program.bin", lambda b: b + b"\0", "bytes"),
}


@pytest.mark.parametrize("what", list(TAMPERINGS))
def test_driver_refuses_a_damaged_binary_naming_it(packages, tmp_path, what):
    name, change, field = TAMPERINGS[what]
    d = _copy(packages[0], tmp_path / "pkg", name, change)
    with active(GoldenSimDevice("zcu19eg")) as dev:
        with pytest.raises(PackageMismatchError) as e:
            YoloAccelerator(d)
        assert dev.accel.runs == 0                      # refused before touching the accelerator
    assert isinstance(e.value, PackageFileMismatchError) and isinstance(e.value, PackageError)
    assert e.value.file == str(d / name) and e.value.field == field and str(d / name) in str(e.value)
    want = getattr(read_manifest(d / "manifest.json").files[name], field)
    assert e.value.package == want and e.value.hardware != want


def test_intact_package_loads_and_a_mixed_one_is_refused(packages, tmp_path):
    """The intact package loads; the binaries of another build beside this manifest (a copy cut short, a rebuild
    interrupted before its manifest) are refused, naming program.bin; weights.bin alone from the other build
    (same size) by its SHA-256."""
    a, b = packages
    with active(GoldenSimDevice("zcu19eg")):
        acc = YoloAccelerator(a)
        assert acc.weights == (a / "weights.bin").read_bytes()
        acc.close()
        mixed = tmp_path / "mixed"
        shutil.copytree(a, mixed)
        for f in ("program.bin", "weights.bin"):
            shutil.copyfile(b / f, mixed / f)
        with pytest.raises(PackageMismatchError, match="program.bin"):
            YoloAccelerator(mixed)
        shutil.copyfile(a / "program.bin", mixed / "program.bin")
        assert (a / "weights.bin").stat().st_size == (b / "weights.bin").stat().st_size
        with pytest.raises(PackageMismatchError, match=r"weights.bin: content differs .*SHA-256") as e:
            YoloAccelerator(mixed)
        assert e.value.field == "sha256"


def test_older_manifest_without_files_still_loads_with_the_weights_size_checked(packages, tmp_path):
    """A manifest without ``files`` (written before the integrity rules): loads; weights.bin must be exactly the
    manifest's WEIGHTS space (one byte short or longer refused, naming it); a flipped byte is undetectable there."""
    d = tmp_path / "old"
    shutil.copytree(packages[0], d)
    m = json.loads((d / "manifest.json").read_text())
    del m["files"]
    (d / "manifest.json").write_text(json.dumps(m))
    w = (d / "weights.bin").read_bytes()
    assert len(w) == m["base_sizes"]["WEIGHTS"]
    with active(GoldenSimDevice("zcu19eg")):
        YoloAccelerator(d).close()
        for bad in (w[:-1], w + b"\0"):
            (d / "weights.bin").write_bytes(bad)
            with pytest.raises(PackageFileMismatchError, match="weights.bin") as e:
                YoloAccelerator(d)
            assert (e.value.field, e.value.package, e.value.hardware) == ("bytes", len(w), len(bad))
        (d / "weights.bin").write_bytes(_flip(w))
        YoloAccelerator(d).close()


def test_manifest_files_entry_is_validated(packages, tmp_path):
    """read_manifest refuses a ``files`` entry off its schema (a digest that is not 64 hex digits, a path instead of
    a file name, a missing binary, a negative size), naming the manifest; build_manifest refuses it too; the export's
    constants file must be listed when the manifest has an ``export`` entry."""
    good = json.loads((packages[0] / "manifest.json").read_text())
    bad = {
        "sha256 not hex": lambda f: f["weights.bin"].update(sha256="z" * 64),
        "a path": lambda f: f.update({"../weights.bin": f.pop("weights.bin")}),
        "program.bin missing": lambda f: f.pop("program.bin"),
        "negative size": lambda f: f["program.bin"].update(bytes=-1),
        "an extra key": lambda f: f["program.bin"].update(md5="x"),
    }
    for what, change in bad.items():
        m = json.loads(json.dumps(good))
        change(m["files"])
        p = tmp_path / "manifest.json"
        p.write_text(json.dumps(m))
        with pytest.raises(PackageError, match=r"manifest.json: files entry") as e:
            read_manifest(p)
        assert not isinstance(e.value, PackageMismatchError), what
        with pytest.raises(ManifestError, match="files"):
            build_manifest(**m)
    m = json.loads(json.dumps(good))
    m["export"] = {"consts": "tail_consts.npz"}
    p.write_text(json.dumps(m))
    with pytest.raises(PackageError, match="lists no tail_consts.npz"):
        read_manifest(p)


def test_verify_file_of_the_export_constants(tmp_path):
    """verify_file, as the driver calls it for tail_consts.npz: size then SHA-256; without an entry, the size an
    older manifest implies, or nothing."""
    p = tmp_path / "tail_consts.npz"
    buf = __import__("io").BytesIO()
    np.savez(buf, a=np.arange(5))
    p.write_bytes(buf.getvalue())
    spec = file_entry(p.read_bytes())
    verify_file(p, spec)
    verify_file(p, None)
    p.write_bytes(_flip(buf.getvalue()))
    with pytest.raises(PackageFileMismatchError, match="tail_consts.npz: content differs"):
        verify_file(p, spec)
    with pytest.raises(PackageFileMismatchError, match="1 byte shorter than the manifest says"):
        verify_file(p, spec, p.read_bytes()[:-1])
    with pytest.raises(PackageFileMismatchError, match="2 bytes longer"):
        verify_file(p, None, b"x" * (spec["bytes"] + 2), expect_bytes=spec["bytes"])
    with pytest.raises(PackageError, match="cannot be read|no such"):
        verify_file(tmp_path / "missing.npz", spec)


def _set(path, value):
    def change(m):
        d = m
        for k in path[:-1]:
            d = d[k]
        if value is _DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
    return change


_DELETE = object()
MANIFEST_TAMPERINGS = {
    "a NaN head scale": (_set(("heads", 0, "scale"), float("nan")), "heads[0].scale"),
    "a head in no region": (_set(("heads", 0, "region"), "nope"), "heads[0].region"),
    "a zero point outside int8": (_set(("regions", 0, "zp"), 1000), ".zp = 1000"),
    "an unknown hardware precision": (_set(("hardware", "precisions"), ["int12"]), "hardware.precisions"),
    "precisions the regions do not use": (_set(("hardware", "precisions"), ["int8", "int16"]),
                                          "hardware.precisions = ['int8', 'int16']: the regions use ['int8']"),
    "precisions out of order": (_set(("hardware", "precisions"), ["int16", "int8"]), "narrowest first"),
    "a 12-bit region": (_set(("regions", 0, "bits"), 12), "region x.bits = 12: not 8 or 16"),
    "a region without bits": (_set(("regions", 1, "bits"), _DELETE), "regions[1]: no bits"),
    "a region's bits a float": (_set(("regions", 2, "bits"), 8.0), "region conv7.bits = 8.0: not 8 or 16"),
    "a head's bits a float": (_set(("heads", 0, "bits"), 8.0), "heads[0].bits = 8.0"),
    "a zero point outside the region's int8": (_set(("regions", 1, "zp"), 200), "region leakyrelu4.zp = 200"),
    "a region's bytes at another width": (_set(("regions", 1, "bytes"), 16384), "region leakyrelu4.bytes = 16384"),
    "a head of another precision than its region": (_set(("heads", 0, "bits"), 16), "heads[0].bits = 16"),
    "an input dtype not its region's": (_set(("input", "dtype"), "int16"), "input.dtype = 'int16'"),
    "classes inconsistent with the channels": (_set(("heads", 0, "yolo", "classes"), 2), "heads[0].yolo"),
    "a 1 TiB weights space": (_set(("base_sizes", "WEIGHTS"), 1 << 40), "base_sizes.WEIGHTS"),
    "no status register": (_set(("registers", "status"), _DELETE), "registers: no status"),
    "class names not strings": (_set(("names",), [1]), "names: not a list of strings"),
    "a string register offset": (_set(("registers", "CTRL", "offset"), "0"), "registers.CTRL.offset"),
    "an unaligned register offset": (_set(("registers", "status", "offset"), 0x4D), "not a multiple of 4"),
    "a negative region address": (_set(("regions", 1, "addr"), -64), ".addr = -64"),
}


@pytest.mark.parametrize("what", list(MANIFEST_TAMPERINGS))
def test_driver_refuses_a_manifest_value_it_cannot_use_naming_the_key(packages, tmp_path, what):
    """A value of manifest.json that the driver uses, of the wrong type, out of range or inconsistent with another:
    refused at load with one PackageError naming the manifest and the key, before the accelerator is touched."""
    change, key = MANIFEST_TAMPERINGS[what]
    d = tmp_path / "pkg"
    shutil.copytree(packages[0], d)
    m = json.loads((d / "manifest.json").read_text())
    change(m)
    (d / "manifest.json").write_text(json.dumps(m))
    with active(GoldenSimDevice("zcu19eg")) as dev:
        with pytest.raises(PackageError) as e:
            YoloAccelerator(d)
        assert dev.accel.runs == 0
    assert str(d / "manifest.json") in str(e.value) and key in str(e.value), str(e.value)


def test_package_compiled_without_class_names_labels_by_class_id(packages, tmp_path):
    """A program compiled without class names (``invoke compile --cfg X --weights Y`` of a cfg without names=) has
    ``names: []`` in its manifest: the driver loads it and labels detections ``class <id>`` (found by the CLI
    property test: the driver used to refuse what the compiler wrote)."""
    m = json.loads((packages[0] / "manifest.json").read_text())
    m["names"] = []
    d = tmp_path / "no-names"
    shutil.copytree(packages[0], d)
    (d / "manifest.json").write_text(json.dumps(m))
    img = np.random.default_rng(5).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    with active(GoldenSimDevice("zcu19eg")):
        dets = YoloAccelerator(d, timeout_s=300, thresh=0.001).detect(img)
    assert dets and all(x["label"] == f"class {x['class_id']}" for x in dets)
