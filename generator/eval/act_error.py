"""The error of POST's activation tables against the float functions (``invoke activations``).

POST maps a layer's accumulator into the table's input domain (scale s_t, zero point zp_t, chosen by
:func:`generator.ref.tables.table_domain`: the calibrated range, flat ends cut off, and for a function whose upper
side is the identity a window over the curved part with POST's identity above it), then through the table
(:func:`generator.quant.quantize.activation_table`) to the output grid. The error measured here is that whole step
against the float function: pre-activation values x on a dense grid over a domain (:data:`SAMPLES` points; those
whose f(x) lies outside the output's range are left out: that clipping is the output range's choice, which
``invoke compare`` reports) are
rounded to the table's input grid as POST's requantization does (``p = floor(x / s_t + 1/2) + zp_t``, unclamped),
mapped by :func:`generator.ref.kernels.table_activate`, dequantized and compared with f(x). Reported: the largest
and the RMS error in output steps (LSB; the output's rounding alone gives 0.5 and 0.29), and the SQNR of the output
against f(x) in dB.

Two measurements:

* :func:`error_table`: every table activation over the fixed pre-activation domain :data:`DOMAIN`, the output
  quantized over the function's range on that domain as the compiler does it (int8 asymmetric, int16
  symmetric);
* :func:`layer_errors`: every table layer of a compiled model over its own calibrated pre-activation range, with
  the table, domain and output scale the compiler chose for it (e.g. the 57 SiLU layers of the DocLayNet YOLOv8n).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from generator.ref.float_ref import PRE_ACT
from generator.ref.kernels import table_activate
from generator.ir.activations import ACTIVATIONS, TABLE_ACTIVATIONS, onnx_params
from generator.quant.quantize import QuantConfig, _act_params, activation_table
from generator.ref.tables import table_domain

#: the pre-activation range of the fixed-domain measurement, and each activation's parameters (alpha, beta)
DOMAIN = (-8.0, 8.0)
PARAMS = {a.name: onnx_params(a, {}) for a in ACTIVATIONS if a.params}   # (the ONNX operators' defaults)
#: the modes of the measurement (as ``invoke compare`` reports them)
MODES = ("int8-asym", "int16-sym")
#: points of the pre-activation grid
SAMPLES = 200001


def post_error(f, table, s_t: float, zp_t: int, identity, out: tuple, bits: int, domain: tuple) -> dict:
    """The error of one POST table (int64 [256, 2]) with input domain (``s_t``, ``zp_t``), POST identity
    ``identity`` ((id_shift, zp_id) or None) and output ``out`` = (scale, zero point), against the float function
    ``f`` over :data:`SAMPLES` points of ``domain`` = (lo, hi) (see the module docstring). Returns dict(max_lsb,
    rms_lsb, sqnr_db)."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    s_o, zp_o = out
    x = np.linspace(domain[0], domain[1], SAMPLES)
    p = np.floor(x / s_t + 0.5).astype(np.int64) + zp_t
    idn = None if identity is None else (identity[0], zp_t, identity[1])
    q = table_activate(p, table, qmin, qmax, idn)
    y = f(x)
    keep = (y >= (qmin - zp_o) * s_o) & (y <= (qmax - zp_o) * s_o)   # not the output range's own clipping
    q, y = q[keep], y[keep]
    err = (q - zp_o) * s_o - y
    return dict(max_lsb=float(np.abs(err).max() / s_o), rms_lsb=float(np.sqrt(np.mean(err ** 2)) / s_o),
                sqnr_db=float(10 * np.log10(max(np.sum(y ** 2), 1e-300) / max(np.sum(err ** 2), 1e-300))))


def table_error(act: str, mode: str, domain=DOMAIN) -> dict:
    """The error of ``act``'s POST table in quantization ``mode`` over ``domain`` (see the module docstring).

    Returns dict(act, mode, max_lsb, rms_lsb, sqnr_db, in_scale, out_scale, identity). Raises KeyError for an
    unknown activation, QuantError for an unknown mode."""
    cfg = QuantConfig.from_mode(mode)
    alpha, beta = PARAMS.get(act, (0.0, 0.0))
    f = lambda x: TABLE_ACTIVATIONS[act](np.asarray(x, np.float64), alpha, beta)   # noqa: E731
    y = f(np.linspace(domain[0], domain[1], SAMPLES))
    out = _act_params(float(y.min()), float(y.max()), cfg, 1.0)
    s_t, zp_t, identity = table_domain(f, domain[0], domain[1], out, cfg.bits, 0.0)
    table = activation_table(SimpleNamespace(act=act, alpha=alpha, beta=beta), s_t, zp_t, *out, cfg.bits)
    e = post_error(f, table, s_t, zp_t, identity, out, cfg.bits, domain)
    return dict(act=act, mode=mode, **e, in_scale=s_t, out_scale=out[0], identity=identity is not None)


def error_table(modes=MODES) -> list[dict]:
    """:func:`table_error` of every table activation in each of ``modes``."""
    return [table_error(a, m) for a in TABLE_ACTIVATIONS for m in modes]


def layer_errors(qg) -> list[dict]:
    """The POST error of every table layer of the quantized graph ``qg`` (from
    :func:`generator.flows.pipeline.compile_model`) over its calibrated pre-activation range (the graph's
    ``metadata["calibration"]`` entry ``PRE_ACT.format(layer)``), with the layer's own table, domain (``q``'s
    ``table_scale``, ``zp_out``, ``identity``) and output scale. Returns one dict(layer, act, lo, hi, identity,
    max_lsb, rms_lsb, sqnr_db) per layer, in graph order. Raises KeyError naming a table layer without a
    calibrated range."""
    bits = qg.metadata["quant"]["bits"]
    cal = qg.metadata.get("calibration", {})
    rows = []
    for n in qg.macro_nodes():
        m, q = n.attrs["macro"], n.attrs["q"]
        if q.get("table") is None:
            continue
        key = PRE_ACT.format(n.name)
        if key not in cal:
            raise KeyError(f"layer {n.name}: no calibrated pre-activation range in the graph's metadata")
        t = qg.tensors[n.outputs[0]]
        f = lambda x, m=m: TABLE_ACTIVATIONS[m.act](np.asarray(x, np.float64), m.alpha, m.beta)   # noqa: E731
        lo, hi = float(cal[key]["lo"]), float(cal[key]["hi"])
        e = post_error(f, q["table"], q["table_scale"], q["zp_out"], q.get("identity"), (t.scale, t.zero_point),
                       bits, (lo, hi))
        rows.append(dict(layer=n.name, act=m.act, lo=lo, hi=hi, identity=q.get("identity") is not None, **e))
    return rows


def markdown(rows: list[dict]) -> str:
    """The rows of :func:`error_table` as a Markdown table, one line per activation, both modes side by side."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    head = "| activation | " + " | ".join(f"{m}: max / RMS error (LSB), SQNR (dB)" for m in modes) + " |"
    out = [head, "|---|" + "---:|" * len(modes)]
    for a in dict.fromkeys(r["act"] for r in rows):
        cells = [next(r for r in rows if r["act"] == a and r["mode"] == m) for m in modes]
        out.append(f"| {a}{' (identity above)' if cells[0]['identity'] else ''} | "
                   + " | ".join(f"{c['max_lsb']:.2f} / {c['rms_lsb']:.2f}, {c['sqnr_db']:.1f}" for c in cells) + " |")
    return "\n".join(out)


def records_markdown(rows: list[dict]) -> str:
    """The activation records (:data:`generator.ir.activations.ACTIVATIONS`) as the README's Markdown table, one
    line per record: its graph name, how ONNX exports write it (``doc``), its operator's parameters with their ONNX
    defaults, darknet's ``activation=`` name, whether POST runs the identity above the table, and the error of
    :func:`error_table` ``rows`` in each mode. Raises StopIteration when ``rows`` lack a record's mode."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    out = ["| activation | ONNX, as exports write it | parameters (ONNX defaults) | darknet | POST | "
           + " | ".join(f"{m}: max / RMS error (LSB), SQNR (dB)" for m in modes) + " |",
           "|---|---|---|---|---|" + "---:|" * len(modes)]
    for a in ACTIVATIONS:
        cells = [next(r for r in rows if r["act"] == a.name and r["mode"] == m) for m in modes]
        params = ", ".join(f"{k} {d:.6g}" for k, d in a.params) or "-"
        post = "table, identity above" if cells[0]["identity"] else "table"
        out.append(f"| {a.name} | {a.doc} | {params} | {a.darknet or '-'} | {post} | "
                   + " | ".join(f"{c['max_lsb']:.2f} / {c['rms_lsb']:.2f}, {c['sqnr_db']:.1f}" for c in cells) + " |")
    return "\n".join(out)


def layer_markdown(per_mode: dict) -> str:
    """{mode: :func:`layer_errors` rows} as a Markdown summary: per mode the number of table layers, how many use
    the identity above the table, and the worst and median max error (LSB) and SQNR (dB) over the layers."""
    out = ["| mode | table layers | identity above | max error (LSB): worst / median | SQNR (dB): worst / median |",
           "|---|---:|---:|---:|---:|"]
    for mode, rows in per_mode.items():
        mx = np.array([r["max_lsb"] for r in rows])
        sq = np.array([r["sqnr_db"] for r in rows])
        out.append(f"| {mode} | {len(rows)} | {sum(r['identity'] for r in rows)} | {mx.max():.2f} / "
                   f"{np.median(mx):.2f} | {sq.min():.1f} / {np.median(sq):.1f} |")
    return "\n".join(out)
