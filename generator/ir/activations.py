"""The activation functions the accelerator runs (defined once): ReLU / LeakyReLU in POST's multipliers, every
other one through POST's activation table (:data:`TABLE_ACTIVATIONS`), as float64 functions of the ONNX operators'
definitions. The graph passes (which recognise them), the float and integer references and the quantizer (which
builds the tables) all read them here.
"""
from __future__ import annotations

import math

import numpy as np


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


#: the error function, element-wise on float64 (the C library's erf; numpy has none)
erf = np.vectorize(math.erf, otypes=[np.float64])


#: activations POST runs through its table (:data:`generator.spec.isa.TABLE_ENTRIES`), as f(x, alpha, beta) on
#: float64 arrays: the ONNX operators' definitions (Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus, Mish, Elu)
#: and SiLU = x * Sigmoid(x) (PyTorch exports it as Sigmoid and Mul); GELU (Hendrycks and Gimpel, "Gaussian Error
#: Linear Units", 2016) exact, x * Phi(x), and its tanh approximation (ONNX Gelu, approximate "none" / "tanh")
TABLE_ACTIVATIONS = {
    "sigmoid": lambda x, a, b: _sigmoid(x),
    "silu": lambda x, a, b: x * _sigmoid(x),
    "tanh": lambda x, a, b: np.tanh(x),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0.0, 1.0),
    "hardswish": lambda x, a, b: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "softplus": lambda x, a, b: _softplus(x),
    "mish": lambda x, a, b: x * np.tanh(_softplus(x)),
    "elu": lambda x, a, b: np.where(x < 0, a * np.expm1(np.minimum(x, 0.0)), x),
    "gelu": lambda x, a, b: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "gelu_tanh": lambda x, a, b: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
}


def activation(x: np.ndarray, act: str, alpha: float, beta: float = 0.0) -> np.ndarray:
    """Float activation: "linear", "relu", "leaky" (slope ``alpha`` for x < 0) or one of
    :data:`TABLE_ACTIVATIONS` (``alpha`` / ``beta``: HardSigmoid's, Elu's alpha), computed in float64 and returned
    as ``x``'s dtype."""
    if act in TABLE_ACTIVATIONS:
        return TABLE_ACTIVATIONS[act](np.asarray(x, np.float64), alpha, beta).astype(np.asarray(x).dtype)
    if act == "linear":
        return x
    if act == "relu":
        return np.maximum(x, 0)
    if act == "leaky":
        return np.where(x < 0, x * np.float32(alpha), x)
    raise ValueError(f"unknown activation {act!r}")
