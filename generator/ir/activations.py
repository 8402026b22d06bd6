"""The activation functions the accelerator runs (defined once): ReLU / LeakyReLU in POST's multipliers, every
other one through POST's activation table (:data:`TABLE_ACTIVATIONS`), as float64 functions of the ONNX operators'
definitions. The graph passes (which recognise them), the float and integer references and the quantizer (which
builds the tables) all read them here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


def _sigmoid(x):
    with np.errstate(over="ignore"):               # (exp(-x) = inf for x below about -709: the sigmoid is 0 there)
        return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


#: the error function, element-wise on float64 (the C library's erf; numpy has none)
erf = np.vectorize(math.erf, otypes=[np.float64])


@dataclass(frozen=True)
class Activation:
    """One table activation, every fact about it in one record (adding an activation is adding a record to
    :data:`ACTIVATIONS` and its tests; the hardware needs nothing: POST's table takes any function).

    ``name``: the graph's ``act``; ``fn``: f(x, alpha, beta) on float64 arrays (the ONNX operator's definition);
    ``onnx_op``: the single ONNX operator written for it (None: only a gate or a chain); ``params``: that operator's
    attributes read into (alpha, beta), each (attribute name, ONNX default); ``chain``: recognized as a chain of
    element-wise operators by value (parameterless functions, :func:`generator.ir.passes.fuse_activation.chains`);
    ``darknet``: darknet's ``activation=`` name; ``doc``: how ONNX exports write it (the README's operator table)."""
    name: str
    fn: Callable
    onnx_op: str | None = None
    params: tuple = ()
    chain: bool = False
    darknet: str | None = None
    doc: str = ""


#: POST's table activations (:data:`generator.spec.isa.TABLE_ENTRIES`): the ONNX operators' definitions (Sigmoid,
#: HardSigmoid, HardSwish, Tanh, Softplus, Mish, Elu, Selu) and SiLU = x * Sigmoid(x) (PyTorch exports it as Sigmoid
#: and Mul); GELU (Hendrycks and Gimpel, "Gaussian Error Linear Units", 2016) exact, x * Phi(x), and its tanh
#: approximation (ONNX Gelu, approximate "none" / "tanh"); SELU (Klambauer et al., "Self-Normalizing Neural
#: Networks", 2017), gamma * (x if x > 0 else alpha * (exp(x) - 1)), its alpha / gamma as the record's alpha / beta
ACTIVATIONS = (
    Activation("sigmoid", lambda x, a, b: _sigmoid(x), "Sigmoid", chain=True, darknet="logistic", doc="Sigmoid"),
    Activation("silu", lambda x, a, b: x * _sigmoid(x), chain=True, darknet="swish", doc="Sigmoid x Mul"),
    Activation("tanh", lambda x, a, b: np.tanh(x), "Tanh", chain=True, doc="Tanh"),
    Activation("hardsigmoid", lambda x, a, b: np.clip(a * x + b, 0.0, 1.0), "HardSigmoid",
               (("alpha", 0.2), ("beta", 0.5)), doc="HardSigmoid"),
    Activation("hardswish", lambda x, a, b: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0), "HardSwish", chain=True,
               darknet="hard_swish", doc="HardSwish; HardSigmoid x Mul"),
    Activation("softplus", lambda x, a, b: _softplus(x), "Softplus", chain=True, doc="Softplus"),
    Activation("mish", lambda x, a, b: x * np.tanh(_softplus(x)), "Mish", chain=True, darknet="mish",
               doc="Mish; Tanh(Softplus) x Mul"),
    Activation("elu", lambda x, a, b: np.where(x < 0, a * np.expm1(np.minimum(x, 0.0)), x), "Elu",
               (("alpha", 1.0),), doc="Elu"),
    Activation("selu", lambda x, a, b: b * np.where(x < 0, a * np.expm1(np.minimum(x, 0.0)), x), "Selu",
               (("alpha", 1.67326319217681884765625), ("gamma", 1.05070102214813232421875)), doc="Selu"),
    Activation("gelu", lambda x, a, b: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))), "Gelu", chain=True,
               doc="Gelu; Div, Erf, Add, Mul, Mul"),
    Activation("gelu_tanh", lambda x, a, b: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                                                       * (x + 0.044715 * x ** 3))),
               chain=True, doc="Gelu (approximate tanh); its Tanh chain"),
)
#: name -> f(x, alpha, beta) of every table activation
TABLE_ACTIVATIONS = {a.name: a.fn for a in ACTIVATIONS}
#: single ONNX operator -> its record
ONNX_OPS = {a.onnx_op: a for a in ACTIVATIONS if a.onnx_op}
#: the parameterless activations a chain of element-wise operators may equal
CHAIN_FUNCTIONS = tuple(a.name for a in ACTIVATIONS if a.chain)


def onnx_params(a: Activation, attrs: dict) -> tuple[float, float]:
    """(alpha, beta) of activation ``a`` from an ONNX node's attributes (each missing one: the operator's
    default; unused slots 0)."""
    vals = [float(attrs.get(k, d)) for k, d in a.params] + [0.0, 0.0]
    return vals[0], vals[1]


def activation(x: np.ndarray, act: str, alpha: float, beta: float = 0.0) -> np.ndarray:
    """Float activation: "linear", "relu", "leaky" (slope ``alpha`` for x < 0) or one of
    :data:`TABLE_ACTIVATIONS` (``alpha`` / ``beta``: the record's parameters, :class:`Activation`), computed in float64 and returned
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
