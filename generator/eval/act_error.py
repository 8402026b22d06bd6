"""The error of POST's activation tables against the float functions (``invoke activations``).

For every table activation (:data:`generator.exec.kernels.TABLE_ACTIVATIONS`) and both precisions, the table the
quantizer builds (:func:`generator.quant.quantize.activation_table`) is evaluated at every integer of its input
domain and compared with the float function at the same (dequantized) input, so that the figure is the table's own
error, not the input's quantization. The input domain is [-8, 8) (a pre-activation range of the size YOLO layers
show), symmetric; the output is quantized over the function's range on that domain as the compiler does it: int8
asymmetric, int16 symmetric. Reported per activation and precision: the largest error and the RMS error in output
steps (LSB; rounding alone gives 0.5 and 0.29), and the SQNR of the table's output against the float function in dB.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from generator.exec.kernels import TABLE_ACTIVATIONS, apply_table
from generator.quant.quantize import QuantConfig, _act_params, activation_table

#: the pre-activation range of the measurement, and each activation's parameters (alpha, beta)
DOMAIN = (-8.0, 8.0)
PARAMS = {"hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}
#: the modes of the measurement (as ``invoke compare`` reports them)
MODES = ("int8-asym", "int16-sym")


def table_error(act: str, mode: str, domain=DOMAIN) -> dict:
    """The error of ``act``'s table in quantization ``mode`` over ``domain`` (see the module docstring).

    Returns dict(act, mode, max_lsb, rms_lsb, sqnr_db, in_scale, out_scale). Raises KeyError for an unknown
    activation, ValueError for an unknown mode."""
    cfg = QuantConfig.from_mode(mode)
    alpha, beta = PARAMS.get(act, (0.0, 0.0))
    f = TABLE_ACTIVATIONS[act]
    s_t, zp_t = _act_params(domain[0], domain[1], cfg, 1.0)
    t = np.arange(cfg.qmin, cfg.qmax + 1, dtype=np.int64)
    x = s_t * (t - zp_t)
    y = f(x.astype(np.float64), alpha, beta)
    s_o, zp_o = _act_params(float(y.min()), float(y.max()), cfg, 1.0)
    m = SimpleNamespace(act=act, alpha=alpha, beta=beta)
    table = activation_table(m, s_t, zp_t, s_o, zp_o, cfg.bits)
    q = apply_table(t, table, cfg.qmin, cfg.qmax)
    err = (q - zp_o) * s_o - y
    return dict(act=act, mode=mode, max_lsb=float(np.abs(err).max() / s_o), rms_lsb=float(np.sqrt(np.mean(err ** 2)) / s_o),
                sqnr_db=float(10 * np.log10(np.sum(y ** 2) / max(np.sum(err ** 2), 1e-300))), in_scale=s_t, out_scale=s_o)


def error_table(modes=MODES) -> list[dict]:
    """:func:`table_error` of every table activation in each of ``modes``."""
    return [table_error(a, m) for a in TABLE_ACTIVATIONS for m in modes]


def markdown(rows: list[dict]) -> str:
    """The rows of :func:`error_table` as a Markdown table, one line per activation, both modes side by side."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    head = "| activation | " + " | ".join(f"{m}: max / RMS error (LSB), SQNR (dB)" for m in modes) + " |"
    out = [head, "|---|" + "---:|" * len(modes)]
    for a in dict.fromkeys(r["act"] for r in rows):
        cells = [next(r for r in rows if r["act"] == a and r["mode"] == m) for m in modes]
        out.append(f"| {a} | " + " | ".join(f"{c['max_lsb']:.2f} / {c['rms_lsb']:.2f}, {c['sqnr_db']:.1f}" for c in cells)
                   + " |")
    return "\n".join(out)
