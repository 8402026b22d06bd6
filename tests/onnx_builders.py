"""The tests' ONNX graph builder lives in :mod:`generator.frontend.modelgen` (the fuzzer uses it too)."""
from generator.frontend.modelgen import Builder, ort_run  # noqa: F401
