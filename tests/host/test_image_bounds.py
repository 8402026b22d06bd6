"""The largest image the host decodes (issue 41, defect 5): an image whose header claims more than
``host.preprocess.MAX_IMAGE_PIXELS`` is an ``ImageError`` naming the file, its size and the limit, raised before
any pixel is decoded -- whether Pillow would have raised ``DecompressionBombError`` (over twice its own limit),
only warned (between once and twice its limit) or said nothing (below its limit)."""
from __future__ import annotations

import io
import struct
import warnings
import zlib

import numpy as np
import pytest
from PIL import Image

from host import preprocess
from host.preprocess import ImageError, load_image


def forged_png(path, width: int, height: int):
    """A 1x1 PNG whose IHDR claims ``width`` x ``height`` (CRC recomputed: a valid header)."""
    b = io.BytesIO()
    Image.new("RGB", (1, 1)).save(b, "PNG")
    d = bytearray(b.getvalue())
    d[16:24] = struct.pack(">II", width, height)
    d[29:33] = struct.pack(">I", zlib.crc32(bytes(d[12:29])))
    path.write_bytes(bytes(d))
    return path


@pytest.mark.parametrize("w,h", [(30000, 30000),     # over 2 x Pillow's limit: Pillow raises its bomb error
                                 (10000, 10000),     # between 1x and 2x Pillow's limit: Pillow only warns
                                 (9000, 8000)])      # under Pillow's limit, over ours
def test_image_over_the_limit_is_refused_by_name(tmp_path, w, h):
    assert w * h > preprocess.MAX_IMAGE_PIXELS
    p = forged_png(tmp_path / "huge.png", w, h)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ImageError) as e:
            load_image(p)
    msg = str(e.value)
    assert str(p) in msg and f"{w * h:,} pixels" in msg and f"{preprocess.MAX_IMAGE_PIXELS:,} pixels" in msg, msg
    assert "\n" not in msg
    assert not [c for c in caught if issubclass(c.category, Image.DecompressionBombWarning)]


def test_limit_is_the_module_constant(tmp_path, monkeypatch):
    p = tmp_path / "img.png"
    Image.new("RGB", (20, 10), (1, 2, 3)).save(p)
    monkeypatch.setattr(preprocess, "MAX_IMAGE_PIXELS", 200)
    assert load_image(p).shape == (10, 20, 3)                  # exactly at the limit: decoded
    monkeypatch.setattr(preprocess, "MAX_IMAGE_PIXELS", 199)
    with pytest.raises(ImageError, match=r"img\.png: image of 20x10 = 200 pixels .* limit of 199 pixels"):
        load_image(p)


def test_pillow_limit_lower_than_ours(tmp_path, monkeypatch):
    """When Pillow's own limit is the lower one (set by the application), its bomb error is an ImageError too."""
    p = tmp_path / "img.png"
    Image.new("RGB", (30, 30)).save(p)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)           # Pillow raises above 200 pixels
    with pytest.raises(ImageError, match=r"img\.png: image of 900 pixels .* Pillow's limit of 200 pixels"):
        load_image(p)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)          # Pillow's check off: ours still applies
    assert np.array_equal(load_image(p), np.zeros((30, 30, 3), np.uint8))
