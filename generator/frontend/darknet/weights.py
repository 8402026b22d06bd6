"""Darknet ``.weights`` reading.

Weights file layout (``load_weights`` in parser.c): int32 ``major``, ``minor``, ``revision``; then ``seen`` as
int64 if ``major*10 + minor >= 2 and major < 1000`` else int32; then for each ``[convolutional]`` in cfg order:
``biases[filters]`` (BN beta, or the conv bias without BN), and with ``batch_normalize``: ``scales[filters]``
(gamma), ``rolling_mean[filters]``, ``rolling_variance[filters]``; then ``weights[filters, c_in, size, size]``
(OIHW), all little-endian float32. Every float must be consumed: a short file or trailing data is an error.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from generator.frontend.darknet.cfg import DarknetError
from generator.frontend.darknet.layers import Layer


#: darknet's names of the arrays of a [convolutional] in the weights file, by our keys
DARKNET_ARRAYS = {"bias": "biases", "scale": "scales", "mean": "rolling_mean", "var": "rolling_variance",
                  "weight": "weights"}


def _check_values(arrs: dict, l: Layer, wname: str, cfg_name: str) -> None:
    """Refuse non-finite values in a [convolutional]'s arrays (``arrs``: float32 by key, see :func:`read_weights`)
    and a negative rolling variance (batch normalization divides by its square root). Raises DarknetError naming
    the weights file, the array (darknet's name), the section at ``cfg:line``, the layer, the count of bad values and
    the first with its index."""
    for key, a in arrs.items():
        bad = ~np.isfinite(a) if key != "var" else ~(np.isfinite(a) & (a >= 0))
        if not bad.any():
            continue
        first = tuple(int(v) for v in np.argwhere(bad)[0])
        v = float(a[first])
        what = "negative" if key == "var" and np.isfinite(v) else "not finite"
        idx = first[0] if len(first) == 1 else list(first)
        raise DarknetError(f"{wname}: {DARKNET_ARRAYS[key]} of [{l.section.type}] at {cfg_name}:{l.section.line} "
                           f"(layer {l.index}) hold {int(bad.sum())} bad value(s) of {a.size}: {DARKNET_ARRAYS[key]}"
                           f"[{idx}] = {v:g} is {what}"
                           + ("; a batch-normalization variance cannot be negative" if what == "negative" else ""))


def read_weights(weights_path, layers: list[Layer], cfg_name: str) -> tuple[dict, dict[int, dict], int]:
    """Read a darknet ``.weights`` file for the given layers (darknet's ``load_weights``).

    Returns:
        (header dict major/minor/revision/seen,
         {conv layer index: {"bias", "scale", "mean", "var" (BN only), "weight"} float32 arrays},
         number of float32 values consumed after the header)

    Raises:
        DarknetError: unreadable or short header; a section whose floats are missing (names the weights file, the
            section and its cfg line, floats needed and left); floats (or bytes) left over after the last conv;
            a NaN or infinite value, or a negative rolling variance (:func:`_check_values`).
    """
    weights_path = Path(weights_path)
    wname = weights_path.name
    try:
        data = weights_path.read_bytes()
    except OSError as e:
        raise DarknetError(f"{weights_path}: cannot read weights: {e}") from None
    if len(data) < 12:
        raise DarknetError(f"{wname} truncated: header needs at least 12 bytes, file has {len(data)}")
    major, minor, revision = (int(x) for x in np.frombuffer(data, "<i4", 3))
    seen_bytes = 8 if (major * 10 + minor) >= 2 and major < 1000 else 4
    if len(data) < 12 + seen_bytes:
        raise DarknetError(f"{wname} truncated: header (version {major}.{minor}.{revision}) needs "
                           f"{12 + seen_bytes} bytes, file has {len(data)}")
    seen = int(np.frombuffer(data, "<i8" if seen_bytes == 8 else "<i4", 1, 12)[0])
    body = data[12 + seen_bytes:]
    n_total, n_extra_bytes = divmod(len(body), 4)
    floats = np.frombuffer(body, "<f4", n_total).astype(np.float32)
    pos = 0
    out: dict[int, dict] = {}
    for l in layers:
        if l.kind != "convolutional":
            continue
        p = l.params
        need = p["n_floats"]
        left = n_total - pos
        if need > left:
            raise DarknetError(f"{wname} truncated: [{l.section.type}] at {cfg_name}:{l.section.line} (layer "
                               f"{l.index}) needs {need} floats, only {left} left")
        f, c, k = p["filters"], p["c_in"] // p.get("groups", 1), p["size"]
        arrs = {}
        for name in (("bias", "scale", "mean", "var") if p["bn"] else ("bias",)):
            arrs[name] = floats[pos:pos + f].copy()
            pos += f
        arrs["weight"] = floats[pos:pos + f * c * k * k].reshape(f, c, k, k).copy()
        pos += f * c * k * k
        _check_values(arrs, l, wname, cfg_name)
        out[l.index] = arrs
    if pos != n_total or n_extra_bytes:
        extra = f"{n_total - pos} unread float(s)" + (f" and {n_extra_bytes} stray byte(s)" if n_extra_bytes else "")
        raise DarknetError(f"{wname}: {extra} after the last [convolutional] of {cfg_name}: the cfg needs {pos} "
                           f"floats, the file holds {n_total} ({len(data)} bytes, {12 + seen_bytes}-byte header)")
    return {"major": major, "minor": minor, "revision": revision, "seen": seen}, out, pos
