"""The network input's pixel formats (host/preprocess.py INPUT_FORMATS): darknet and Ultralytics RGB 0..1, and the
unnormalized 0..255 ones (YOLOX's BGR)."""
from __future__ import annotations

import numpy as np
import pytest

from host.preprocess import preprocess


def test_input_formats_bgr255_and_rgb255():
    """The pixel formats of the network input (host.preprocess.INPUT_FORMATS): YOLOX's BGR 0..255 reverses the
    channels and keeps the 8-bit values; quantized with the 0..255 range's int8-asym parameters (scale 1, zero point
    -128) every pixel is exact, in the reversed order; an unknown format is refused."""
    from host.preprocess import input_range, to_input

    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    x = img.astype(np.float32) / 255
    np.testing.assert_allclose(to_input(x, 3, "bgr255"), img[:, :, ::-1].astype(np.float32), atol=1e-4)
    np.testing.assert_allclose(to_input(x, 3, "rgb255"), img.astype(np.float32), atol=1e-4)
    assert to_input(x, 3, "rgb01") is not None and np.array_equal(to_input(x, 3, "rgb01"), x)
    assert input_range("bgr255") == (0.0, 255.0) and input_range("rgb01") == (0.0, 1.0)
    q = preprocess(img, 6, 4, 1.0, -128, 8, mode="stretch", fmt="bgr255")
    np.testing.assert_array_equal(q.astype(int), img[:, :, ::-1].astype(int) - 128)
    with pytest.raises(ValueError, match="unknown input format"):
        to_input(x, 3, "bgr01")
