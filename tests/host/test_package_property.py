"""A deployment package mutated file by file (Hypothesis) under the PYNQ driver (``host/driver.py`` over the
golden-simulator device of ``generator/exec/pynq_golden.py``): it loads and detects (finite boxes, scores in
[0, 1]), or it is refused with one of the driver's own errors (:mod:`host.errors`), never another exception.
Mutations: bytes of ``program.bin``, ``weights.bin`` or ``manifest.json`` (truncation, flips, garbage, a float32
NaN / Inf), or one JSON leaf of the manifest replaced by a value of any JSON type or deleted. The default run is
derandomized (the ``yolofpga`` profile of ``tests/conftest.py``); ``--hypothesis-profile=long`` draws fresh ones."""
from __future__ import annotations

import json
import math
import shutil

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from mutations import FRACTION, MUTATIONS, make_sandbox, mutate

_COUNTER = [0]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """The small model and image (:func:`mutations.make_sandbox`)."""
    return make_sandbox(tmp_path_factory.mktemp("pkg-sandbox"))


@pytest.fixture(scope="module")
def small_package(sandbox, tmp_path_factory):
    """Program artifacts of the small model (int8-asym, zcu19eg): a deployment package without a bitstream."""
    from generator.flows.artifacts import write_artifacts
    from generator.flows.pipeline import compile_model

    comp = compile_model("zcu19eg", "int8-asym", model=str(sandbox / "small.onnx"), progress=False)
    return write_artifacts(comp, tmp_path_factory.mktemp("small-package"))


def _json_leaves(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _json_leaves(x, path + (k,))
    elif isinstance(v, list) and v:
        for i, x in enumerate(v):
            yield from _json_leaves(x, path + (i,))
    else:
        yield path


JSON_VALUES = st.one_of(st.integers(-2**40, 2**40), st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -1e-300, 1e308]), st.text(max_size=6),
                        st.none(), st.booleans(), st.just([]), st.just({}), st.lists(st.integers(-5, 5), max_size=3))


@st.composite
def package_mutation(draw):
    """("bytes", file, mutation) on program.bin / weights.bin / manifest.json, or ("json", leaf fraction, new
    value or None to delete the key) on manifest.json."""
    if draw(st.booleans()):
        return ("bytes", draw(st.sampled_from(["program.bin", "weights.bin", "manifest.json"])), draw(MUTATIONS))
    return ("json", draw(FRACTION), draw(st.one_of(st.just("<delete>"), JSON_VALUES)))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(package_mutation())
def test_driver_loads_or_refuses_mutated_packages(small_package, sandbox, mutation):
    """A package mutated in one file: the PYNQ driver (over the golden-simulator device) either loads it and
    returns detections (finite boxes, scores in [0, 1]) or raises one of its own errors (:mod:`host.errors`:
    PackageError, PackageMismatchError, AcceleratorError, AcceleratorTimeout); never another exception."""
    from generator.exec.pynq_golden import GoldenSimDevice, active
    from host.driver import DriverError, YoloAccelerator
    from host.preprocess import load_image

    _COUNTER[0] += 1
    d = sandbox / "pkgs" / str(_COUNTER[0])
    shutil.copytree(small_package, d)
    try:
        if mutation[0] == "bytes":
            f = d / mutation[1]
            f.write_bytes(mutate(f.read_bytes(), mutation[2]))
        else:
            m = json.loads((d / "manifest.json").read_text())
            leaves = list(_json_leaves(m))
            path = leaves[min(int(mutation[1] * len(leaves)), len(leaves) - 1)]
            parent = m
            for k in path[:-1]:
                parent = parent[k]
            if mutation[2] == "<delete>":
                del parent[path[-1]]
            else:
                parent[path[-1]] = mutation[2]
            note(f"manifest {path} -> {mutation[2]!r}")
            (d / "manifest.json").write_text(json.dumps(m))
        with active(GoldenSimDevice("zcu19eg")):
            try:
                acc = YoloAccelerator(d, timeout_s=120)
                dets = acc.detect(load_image(sandbox / "image.jpg"))
            except DriverError:
                return
        assert isinstance(dets, list)
        for det in dets:
            assert all(math.isfinite(v) for v in det["box"]) and 0 <= det["score"] <= 1, det
    finally:
        shutil.rmtree(d, ignore_errors=True)
