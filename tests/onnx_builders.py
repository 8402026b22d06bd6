"""The tests' ONNX graph builder lives in :mod:`generator.modelgen` (the fuzzer uses it too)."""
from generator.modelgen import Builder, ort_run  # noqa: F401
