"""Host-side input pipeline: load an image, resize it exactly like darknet, quantize it for the accelerator.

Runs on the PYNQ 3.x board image (Python 3.10, numpy 1.x, Pillow); imports nothing else (no onnx, no cv2, no
``generator``).

Darknet (AlexeyAB) feeds YOLOv4-tiny with the RGB image scaled to 0..1 and stretched to the network size with
``resize_image`` (no letterbox for ``detector test``/``demo`` with the default ``letter_box=0``).
:func:`darknet_resize` reproduces that function bit for bit in float32 (same operation order, same float
rounding), including its quirks at the last column and row; tests/host/test_host.py checks it bit-exact against
the C ``resize_image`` of libdarknet on every real image.
"""
from __future__ import annotations

import os
import re
import threading
import warnings

import numpy as np
from PIL import Image, UnidentifiedImageError

__all__ = ["ImageError", "MAX_IMAGE_PIXELS", "load_image", "darknet_resize", "quantize_input", "preprocess", "RESIZE_MODES", "resize",
           "letterbox_geometry", "boxes_to_image", "INPUT_FORMATS", "input_range", "to_input"]


class ImageError(ValueError):
    """An input file is missing, unreadable, or not a decodable image; the message names the path and why."""


MAX_IMAGE_PIXELS = 1 << 26
"""The largest image :func:`load_image` decodes, in pixels (width x height): 67,108,864 (e.g. 8192 x 8192, or a
48-megapixel camera's 8000 x 6000), about 200 MB as 8-bit RGB. A larger image -- or a file whose header merely
claims one (a "decompression bomb": a few KB that would expand to gigabytes) -- is an :class:`ImageError` naming the
file, its size and this limit, raised before any pixel is decoded. It replaces Pillow's own check
(``PIL.Image.MAX_IMAGE_PIXELS``, about 89 MP, which only warns up to twice its value): Pillow's warning is
silenced while an image is opened, and Pillow's error (when its limit is the lower one) becomes the same
ImageError. Assign another value to this module attribute to change it."""

BACKGROUND = (128, 128, 128)
"""RGB uint8 background that transparent pixels are composited on: a neutral mid gray (darknet pads its letterbox
with 0.5 gray), so a transparent area reads as featureless rather than as black or white objects."""


def load_image(path, exif_transpose: bool = True) -> np.ndarray:
    """Load an image file as upright 8-bit RGB.

    * **Orientation**: the EXIF orientation tag is applied (Pillow ``ImageOps.exif_transpose``), so the array --
      and the detections and drawings made from it -- are in the upright frame a photo viewer shows. (darknet's
      stb_image ignores the tag; ``exif_transpose=False`` gives that stored pixel grid.)
    * **16-bit** grayscale (Pillow modes ``I;16``, ``I;16L``, ``I;16B``, and ``I`` with values in 0..65535, which
      is how Pillow opens 16-bit PNGs) is scaled to 8 bits as ``round(v / 257)`` (65535 -> 255, so a 16-bit
      image is not clipped to white); 48/64-bit RGB(A) PNGs are reduced to 8 bits per channel by Pillow's decoder
      (the high byte).
    * **Transparency** (RGBA, LA, PA, palette images with a ``transparency`` entry, RGB/L with a transparent
      color): alpha-composited on :data:`BACKGROUND` (mid gray 128) with Pillow ``Image.alpha_composite``.
    * **Palette** (P), **CMYK** (Pillow's conversion, ``R = (255 - C) * (255 - K) / 255``; embedded ICC profiles
      are not applied), **grayscale** (L, 1-bit), **YCbCr**: converted to RGB with Pillow ``convert``.
    * Other modes (e.g. 32-bit float ``F``, ``LAB``, ``HSV``) are an :class:`ImageError` naming the mode.

    On every real JPEG of the project (none carries a rotating EXIF orientation) the pixels equal those of darknet's
    ``load_image_color`` (tests/host/test_host.py).

    Args:
        path: str or os.PathLike of a file Pillow can decode (JPEG, PNG, BMP, TIFF, GIF (first frame), ...).
        exif_transpose: apply the EXIF orientation (default True).
    Returns:
        np.ndarray uint8 [H, W, 3], RGB, C-contiguous (H, W of the upright image).
    Raises:
        ImageError: the path does not exist, is not a regular file, cannot be read, is not a decodable image, is
            larger than :data:`MAX_IMAGE_PIXELS` (by its header), or has an unsupported pixel mode (the message
            contains the path and the reason).
    """
    from PIL import ImageOps

    p = os.fspath(path)
    if not os.path.exists(p):
        raise ImageError(f"{p}: no such file")
    if not os.path.isfile(p):
        raise ImageError(f"{p}: not a regular file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)   # MAX_IMAGE_PIXELS decides
            with Image.open(p) as im:
                _check_pixels(p, im.size)
                im.load()
                if exif_transpose:
                    im = ImageOps.exif_transpose(im)
                arr = _to_rgb8(im, p)
    except Image.DecompressionBombError as e:    # Pillow's limit (2 x PIL.Image.MAX_IMAGE_PIXELS) is the lower one
        m = re.search(r"\((\d+) pixels\)", str(e))
        n = int(m.group(1)) if m else None
        if n is not None and n > MAX_IMAGE_PIXELS:
            raise ImageError(_too_large(p, f"{n:,} pixels")) from None
        raise ImageError(f"{p}: image of {'more' if n is None else f'{n:,}'} pixels (by its header) is over "
                         f"Pillow's limit of {2 * (Image.MAX_IMAGE_PIXELS or 0):,} pixels "
                         f"(2 x PIL.Image.MAX_IMAGE_PIXELS)") from None
    except UnidentifiedImageError as e:
        raise ImageError(f"{p}: not a recognised image file ({e})") from e
    except (OSError, ValueError, SyntaxError) as e:  # truncated/corrupt data, unreadable file
        if isinstance(e, ImageError):
            raise
        raise ImageError(f"{p}: cannot decode image ({type(e).__name__}: {e})") from e
    if arr.ndim != 3 or arr.shape[2] != 3 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ImageError(f"{p}: unexpected decoded shape {arr.shape}")
    return np.ascontiguousarray(arr)


def _check_pixels(p: str, size: tuple) -> None:
    """Raise ImageError when an image of ``size`` (width, height) is over :data:`MAX_IMAGE_PIXELS`."""
    w, h = size
    if w * h > MAX_IMAGE_PIXELS:
        raise ImageError(_too_large(p, f"{w}x{h} = {w * h:,} pixels"))


def _too_large(p: str, size: str) -> str:
    return (f"{p}: image of {size} (by its header) is over the limit of {MAX_IMAGE_PIXELS:,} pixels "
            f"(host.preprocess.MAX_IMAGE_PIXELS)")


_WIDE_GRAY = ("I;16", "I;16L", "I;16B", "I;16N", "I")


def _to_rgb8(im: Image.Image, p: str) -> np.ndarray:
    """A loaded Pillow image of any supported mode -> uint8 [H, W, 3] RGB (see :func:`load_image`)."""
    mode = im.mode
    if mode in _WIDE_GRAY:
        v = np.asarray(im)
        if v.dtype.kind == "f" or (v.size and (int(v.min()) < 0 or int(v.max()) > 65535)):
            raise ImageError(f"{p}: unsupported {mode} image with values outside 0..65535 "
                             f"({int(v.min())}..{int(v.max())}); only 16-bit integer images are scaled")
        g = ((v.astype(np.uint32) * 2 + 257) // 514).astype(np.uint8)   # round(v / 257), half up
        return np.repeat(g[:, :, None], 3, axis=2)
    has_alpha = mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in im.info
    if has_alpha:
        try:
            rgba = im.convert("RGBA")
        except ValueError as e:
            raise ImageError(f"{p}: cannot convert a {mode} image with transparency to RGB ({e})") from e
        bg = Image.new("RGBA", rgba.size, BACKGROUND + (255,))
        return np.asarray(Image.alpha_composite(bg, rgba).convert("RGB"), dtype=np.uint8)
    if mode == "RGB":
        return np.asarray(im, dtype=np.uint8)
    if mode in ("L", "1", "P", "CMYK", "YCbCr", "RGBX"):
        return np.asarray(im.convert("RGB"), dtype=np.uint8)
    raise ImageError(f"{p}: unsupported pixel mode {mode!r} (supported: RGB, RGBA, L, LA, 1, P, PA, CMYK, YCbCr, "
                     f"16-bit grayscale)")


def darknet_resize(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resize exactly like darknet's ``resize_image`` (image.c), after its ``/255.`` float conversion.

    Darknet works on a float CHW image; the arithmetic below is the same float32 arithmetic in the same order:

    * horizontal pass into a ``part`` image of size (width, im.h): ``w_scale = (float)(im.w-1)/(width-1)``;
      for column ``c``: if ``c == width-1`` or ``im.w == 1`` take the last source column, else
      ``sx = c*w_scale; ix = (int)sx; dx = sx-ix; val = (1-dx)*im[ix] + dx*im[ix+1]``;
    * vertical pass: ``h_scale = (float)(im.h-1)/(height-1)``; for row ``r``:
      ``sy = r*h_scale; iy = (int)sy; dy = sy-iy; out = (1-dy)*part[iy]``, then, unless ``r == height-1`` or
      ``im.h == 1``, ``out += dy*part[iy+1]`` (so the last row is only the ``(1-dy)`` term, as in darknet);
    * same size: a plain copy.

    Only the source rows the vertical pass reads are run through the horizontal pass (the result is identical,
    the passes are separable per row), which keeps a 1080x810 -> 416x416 resize at a few milliseconds.

    Args:
        img: uint8 [H, W, 3] (any channel count C >= 1 works), e.g. from :func:`load_image`.
        width, height: output size in pixels, >= 1; ``height == 1`` is only allowed when the image has one row
            or is not resized (darknet divides 0/0 there).
    Returns:
        np.ndarray float32 [height, width, C], values in 0..1 (HWC, not darknet's CHW).
    Raises:
        ValueError: bad dtype/shape or output size.
    """
    img = np.asarray(img)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[0] < 1 or img.shape[1] < 1 or img.shape[2] < 1:
        raise ValueError(f"darknet_resize expects uint8 [H, W, C], got {img.dtype} {img.shape}")
    width, height = int(width), int(height)
    _check_size(img, width, height)
    if img.shape[:2] == (height, width):
        return _to_f32(img)
    out = np.empty((height, width, img.shape[2]), np.float32)
    _resize_into(img, width, height, out)
    return out


def _resize_into(img: np.ndarray, width: int, height: int, out: np.ndarray) -> None:
    """The body of :func:`darknet_resize`, writing float32 [height, width, C] into ``out``.

    Intermediate buffers come from a per-thread workspace: fresh multi-megabyte numpy allocations cost more in
    page faults than the arithmetic itself (measured ~3x slower on the development VM).
    """
    f32 = np.float32
    ih, iw, ch = img.shape
    # --- horizontal sample positions (darknet: float w_scale, float sx = c*w_scale, int ix = (int)sx) ---
    if width > 1:
        w_scale = f32(iw - 1) / f32(width - 1)
        sx = np.arange(width, dtype=f32) * w_scale
    else:
        sx = np.zeros(1, dtype=f32)
    ix = sx.astype(np.int64)                     # truncation == (int) for sx >= 0
    np.minimum(ix, iw - 1, out=ix)
    dx = (sx - ix.astype(f32)).astype(f32)
    ix[width - 1] = iw - 1                        # darknet: c == w-1 (or im.w == 1) -> last source column
    dx[width - 1] = 0.0
    if iw == 1:
        ix[:] = 0
        dx[:] = 0.0
    ix1 = np.minimum(ix + 1, iw - 1)

    # --- vertical sample positions ---
    if height > 1:
        h_scale = f32(ih - 1) / f32(height - 1)
        sy = np.arange(height, dtype=f32) * h_scale
    else:
        sy = np.zeros(1, dtype=f32)
    iy = np.minimum(sy.astype(np.int64), ih - 1)
    dy = (sy - iy.astype(f32)).astype(f32)
    dy2 = dy.copy()                               # weight of part[iy+1]; darknet skips that term on the last
    dy2[height - 1] = 0.0                         # row and when im.h == 1 (adding 0*finite is exact)
    if ih == 1:
        dy2[:] = 0.0
    iy1 = np.minimum(iy + 1, ih - 1)

    # --- horizontal pass, restricted to the source rows used (the passes are separable per row) ---
    rows = np.unique(np.concatenate([iy, iy1]))
    nr, wc = rows.size, width * ch
    src = _buf("src", (nr, iw * ch), np.uint8)    # uint8 [R, iw*C]: whole pixels gathered by flat column index
    np.take(img.reshape(ih, iw * ch), rows, axis=0, out=src, mode="clip")
    chan = np.arange(ch)
    g = _buf("gather", (nr, wc), np.uint8)
    part = _buf("part", (nr, wc), f32)
    tmp = _buf("tmp", (nr, wc), f32)
    # left neighbour: part = (1-dx) * (u8/255)
    np.take(src, (ix[:, None] * ch + chan).ravel(), axis=1, out=g, mode="clip")
    np.divide(g, f32(255), out=part, dtype=f32)   # == (float)(u8/255.) of load_image_stb for every 0..255
    part *= np.repeat(f32(1) - dx, ch)[None, :]
    # right neighbour: part += dx * (u8/255)
    np.take(src, (ix1[:, None] * ch + chan).ravel(), axis=1, out=g, mode="clip")
    np.divide(g, f32(255), out=tmp, dtype=f32)
    tmp *= np.repeat(dx, ch)[None, :]
    part += tmp                                   # last column: 1*im[w-1] + 0*im[w-1], exactly im[w-1]

    # --- vertical pass ---
    o2 = out.reshape(height, wc)
    np.take(part, np.searchsorted(rows, iy), axis=0, out=o2, mode="clip")
    o2 *= (f32(1) - dy)[:, None]
    add = _buf("add", (height, wc), f32)
    np.take(part, np.searchsorted(rows, iy1), axis=0, out=add, mode="clip")
    add *= dy2[:, None]
    o2 += add


def _check_size(img: np.ndarray, width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise ValueError(f"output size must be >= 1, got {width}x{height}")
    if height == 1 and img.shape[0] != 1:
        raise ValueError("darknet's resize_image is undefined for height 1 (h_scale = x/0)")


_tls = threading.local()


def _buf(name: str, shape: tuple, dtype) -> np.ndarray:
    """A reusable per-thread scratch array (contents undefined). A few MB stay allocated between frames."""
    bufs = _tls.__dict__.setdefault("bufs", {})
    b = bufs.get(name)
    if b is None or b.shape != shape or b.dtype != np.dtype(dtype):
        b = np.empty(shape, dtype)
        bufs[name] = b
    return b


def _to_f32(u8: np.ndarray) -> np.ndarray:
    # == float32(u8 / 255.) of darknet (double division rounded to float): a correctly rounded float32 division
    # gives the same value for every 0..255 (double rounding is innocuous for division, 53 >= 2*24 + 2)
    out = u8.astype(np.float32)
    out /= np.float32(255)
    return out


def to_channels(x: np.ndarray, channels: int) -> np.ndarray:
    """An RGB image float [H, W, 3] (0..1) as the ``channels`` channels a model takes, float32 [H, W, channels]:
    1 -> luminance ``0.299 R + 0.587 G + 0.114 B`` (ITU-R BT.601), 3 -> RGB unchanged (the same array), any other
    count -> the RGB channels repeated cyclically (R, G, B, R, ...). Raises ValueError for channels < 1 or an
    input that is not [H, W, 3]."""
    x = np.asarray(x)
    if x.ndim != 3 or x.shape[2] != 3:
        raise ValueError(f"expected an RGB image [H, W, 3], got shape {list(x.shape)}")
    if channels == 3:
        return x
    if channels < 1:
        raise ValueError(f"channels must be >= 1, got {channels}")
    if channels == 1:
        return (x.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32))[:, :, None]
    return np.ascontiguousarray(x[:, :, np.arange(channels) % 3], dtype=np.float32)


#: what the network's input values are: ``rgb01`` (RGB scaled to 0..1: darknet, Ultralytics), ``rgb255`` (RGB
#: 0..255), ``bgr255`` (BGR 0..255, unnormalized: the official YOLOX ONNX export, as OpenCV reads images)
INPUT_FORMATS = ("rgb01", "rgb255", "bgr255")


def input_range(fmt: str) -> tuple:
    """The (min, max) of an input pixel in format ``fmt`` (:data:`INPUT_FORMATS`). Raises ValueError."""
    if fmt not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {fmt!r}; one of {INPUT_FORMATS}")
    return (0.0, 255.0) if fmt.endswith("255") else (0.0, 1.0)


def to_input(x: np.ndarray, channels: int, fmt: str = "rgb01") -> np.ndarray:
    """An RGB image float [H, W, 3] (0..1) as the network's input values, float32 [H, W, channels]:
    :func:`to_channels`, then for ``fmt`` (:data:`INPUT_FORMATS`) the channel order reversed (``bgr255``, three
    channels) and the values times 255 (``*255``). Raises ValueError for an unknown format (and as
    :func:`to_channels`)."""
    hi = input_range(fmt)[1]
    y = to_channels(x, channels)
    if fmt.startswith("bgr") and y.shape[2] == 3:
        y = y[:, :, ::-1]
    return np.ascontiguousarray(y * np.float32(hi) if hi != 1.0 else y, dtype=np.float32)


def quantize_input(x: np.ndarray, scale: float, zero_point: int, bits: int) -> np.ndarray:
    """Affine-quantize the float image (0..1, or 0..255: :data:`INPUT_FORMATS`) for the accelerator's input
    region.

    ``q = clip(floor(x/scale + 0.5) + zero_point, -2^(bits-1), 2^(bits-1)-1)`` (round half up, computed in
    float64), the inverse of ``x = (q - zero_point) * scale``.

    Args:
        x: float array (any shape; normally float32 [H, W, 3] from :func:`darknet_resize`).
        scale: positive float step; zero_point: int; bits: 8 or 16.
    Returns:
        np.ndarray of the same shape, int8 (bits=8) or int16 (bits=16).
    Raises:
        ValueError: bits not 8/16, scale not finite and > 0, or zero_point outside the signed range.
    """
    if bits not in (8, 16):
        raise ValueError(f"bits must be 8 or 16, got {bits}")
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be finite and > 0, got {scale}")
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    zero_point = int(zero_point)
    if not qmin <= zero_point <= qmax:
        raise ValueError(f"zero_point {zero_point} outside the int{bits} range [{qmin}, {qmax}]")
    x = np.asarray(x)
    v = _buf("q64", x.shape, np.float64)
    np.divide(x, scale, out=v, dtype=np.float64)
    v += 0.5
    np.floor(v, out=v)
    v += zero_point
    np.clip(v, qmin, qmax, out=v)
    return v.astype(np.int8 if bits == 8 else np.int16)


#: how an image becomes the network input: ``stretch`` (darknet's ``resize_image`` to the input size, the aspect
#: ratio not kept), ``letterbox`` (Ultralytics' ``LetterBox``: scaled to fit keeping the aspect ratio, centred,
#: padded with gray 114), ``letterbox_topleft`` (YOLOX's ``preproc``: the same scale, placed at the top left)
RESIZE_MODES = ("stretch", "letterbox", "letterbox_topleft")
#: letterbox padding value (uint8 gray, as Ultralytics and YOLOX pad)
LETTERBOX_PAD = 114


def letterbox_geometry(img_w: int, img_h: int, net_w: int, net_h: int, mode: str) -> tuple:
    """(gain, new_w, new_h, left, top) of ``mode``: the image is scaled by ``gain`` to new_w x new_h pixels and
    placed at (left, top) of the net_w x net_h input. ``stretch``: per-axis gains are not one number, so
    (None, net_w, net_h, 0, 0). Ultralytics rounds the scaled size and splits the padding as
    ``round(d / 2 -+ 0.1)``; YOLOX truncates the scaled size. Raises ValueError for an unknown mode."""
    if mode not in RESIZE_MODES:
        raise ValueError(f"unknown resize mode {mode!r}; one of {RESIZE_MODES}")
    if mode == "stretch":
        return None, net_w, net_h, 0, 0
    r = min(net_w / img_w, net_h / img_h)
    if mode == "letterbox_topleft":
        return r, max(1, int(img_w * r)), max(1, int(img_h * r)), 0, 0
    nw, nh = max(1, int(round(img_w * r))), max(1, int(round(img_h * r)))
    dw, dh = (net_w - nw) / 2, (net_h - nh) / 2
    return r, nw, nh, int(round(dw - 0.1)), int(round(dh - 0.1))


def resize(img_u8: np.ndarray, width: int, height: int, mode: str = "stretch") -> np.ndarray:
    """The network input of ``img_u8`` (uint8 [H, W, 3]) by ``mode`` (:data:`RESIZE_MODES`): float32
    [height, width, 3] in 0..1; letterboxes resize the image part with :func:`darknet_resize` (bilinear) and pad
    with :data:`LETTERBOX_PAD` / 255. Raises ValueError as :func:`darknet_resize` or for an unknown mode."""
    gain, nw, nh, left, top = letterbox_geometry(img_u8.shape[1], img_u8.shape[0], width, height, mode)
    if gain is None:
        return darknet_resize(img_u8, width, height)
    out = np.full((height, width, 3), np.float32(LETTERBOX_PAD) / np.float32(255), np.float32)
    out[top:top + nh, left:left + nw] = darknet_resize(img_u8, nw, nh)
    return out


def boxes_to_image(boxes: np.ndarray, img_w: int, img_h: int, net_w: int, net_h: int, mode: str) -> np.ndarray:
    """Boxes [N, 4] (x1, y1, x2, y2) in network-input pixels -> pixels of the original image, undoing ``mode``'s
    scale and padding (float32 [N, 4], not clipped)."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    gain, _, _, left, top = letterbox_geometry(img_w, img_h, net_w, net_h, mode)
    if gain is None:
        return b * np.array([img_w / net_w, img_h / net_h] * 2, np.float32)
    return ((b - np.array([left, top, left, top], np.float32)) / np.float32(gain)).astype(np.float32)


def preprocess(img_u8: np.ndarray, width: int, height: int, scale: float, zero_point: int, bits: int,
               channels: int = 3, mode: str = "stretch", fmt: str = "rgb01") -> np.ndarray:
    """:func:`darknet_resize` (or the letterbox of ``mode``, :func:`resize`) then :func:`quantize_input`: the
    accelerator's input tensor.

    Args:
        img_u8: uint8 [H, W, 3] RGB (e.g. :func:`load_image`).
        width, height: network input size (416, 416 for YOLOv4-tiny); scale, zero_point, bits: the input
            region's quantization parameters; channels: the model's input channels (manifest ``input.channels``),
            derived from RGB by :func:`to_channels` when not 3 (1: luminance, other: RGB repeated cyclically);
            mode: one of :data:`RESIZE_MODES` (manifest ``export.resize``; darknet models: ``stretch``);
            fmt: one of :data:`INPUT_FORMATS` (manifest ``export.input_format``; darknet models: ``rgb01``).
    Returns:
        int8/int16 [height, width, channels] -- NHWC without the batch axis, the accelerator's input layout.
    Raises:
        ValueError: as :func:`darknet_resize` and :func:`quantize_input`.
    """
    img_u8 = np.asarray(img_u8)
    if img_u8.dtype != np.uint8 or img_u8.ndim != 3 or img_u8.shape[2] != 3:
        raise ValueError(f"preprocess expects uint8 [H, W, 3], got {img_u8.dtype} {img_u8.shape}")
    width, height = int(width), int(height)
    _check_size(img_u8, width, height)
    x = _buf("resized", (height, width, 3), np.float32)
    if mode != "stretch":
        x[...] = resize(img_u8, width, height, mode)
    elif img_u8.shape[:2] == (height, width):
        np.divide(img_u8, np.float32(255), out=x, dtype=np.float32)
    else:
        _resize_into(img_u8, width, height, x)
    if channels != 3 or fmt != "rgb01":
        x = to_input(x, channels, fmt)
    return quantize_input(x, scale, zero_point, bits)
