"""The float executor's fast paths (generator/ref/float_ref.py: _conv, _table_act) against the reference kernels
they replace (generator/kinds/conv.py: conv2d; generator/ir/activations.py: activation), value for value:
calibration's ranges must not depend on which one ran."""
from __future__ import annotations

import numpy as np
import pytest

from generator.ir import activations
from generator.kinds.conv import conv2d
from generator.ref import float_ref


@pytest.mark.parametrize("ic,oc,k,stride,pads,h,w", [
    (3, 16, 3, 2, (1, 1, 1, 1), 33, 40),      # a first layer, odd size
    (16, 8, 3, 1, (1, 1, 1, 1), 20, 18),
    (8, 24, 5, 1, (2, 1, 2, 3), 17, 23),      # asymmetric padding
    (12, 12, 3, 2, (0, 0, 1, 1), 16, 16),     # SAME_UPPER-like
    (6, 10, 2, 2, (0, 0, 0, 0), 12, 14),      # no padding
    (32, 16, 1, 1, (0, 0, 0, 0), 9, 11),      # 1x1: the reference itself
    (32, 16, 1, 2, (0, 0, 0, 0), 9, 11),      # 1x1 stride 2
    (4, 4, 7, 3, (3, 3, 3, 3), 21, 21)])
def test_conv_equals_the_reference_kernel(ic, oc, k, stride, pads, h, w):
    rng = np.random.default_rng(ic * 100 + k)
    x = rng.standard_normal((ic, h, w)).astype(np.float32)
    wt = rng.standard_normal((oc, ic, k, k)).astype(np.float32)
    got = float_ref._conv(x, wt, stride, pads)
    ref = conv2d(x, wt, stride, pads)
    assert got.dtype == ref.dtype == np.float32 and got.shape == ref.shape
    assert got.tobytes() == ref.tobytes()
    again = float_ref._conv(x[:, :h - 1], wt, stride, pads)     # the reused scratch buffers hold no stale data
    assert again.tobytes() == conv2d(x[:, :h - 1], wt, stride, pads).tobytes()


@pytest.mark.parametrize("act", sorted(activations.TABLE_ACTIVATIONS))
def test_table_activation_equals_the_reference(act):
    """Every table activation on 100k float32 values (several pieces, a ragged last one), wide range and values
    near 0 alike, contiguous or not."""
    rng = np.random.default_rng(7)
    y = np.concatenate([rng.standard_normal(60_000) * 8, rng.standard_normal(40_001) * 1e-3]).astype(np.float32)
    y = y[:7 * 3 * 4761].reshape(7, 3, 4761)
    for v in (y, y[:, :, ::2]):                     # contiguous, and a strided view
        got = float_ref._table_act(v, act, 0.2, 0.5)
        ref = activations.activation(v, act, 0.2, 0.5)
        assert got.dtype == ref.dtype and got.shape == ref.shape and got.tobytes() == ref.tobytes()


_KERNEL_PROBE = """
import hashlib, numpy as np
from generator.kinds.conv import conv2d
from generator.ref import float_ref
rng = np.random.default_rng(5)
x = rng.standard_normal((256, 13, 13)).astype(np.float32)
w = rng.standard_normal((64, 256, 3, 3)).astype(np.float32)
h = hashlib.sha256()
for y in (float_ref._conv(x, w, 1, (1, 1, 1, 1)), conv2d(x, w[:, :, :1, :1], 1, 0),
          float_ref._matmul(x.reshape(256, -1).T.copy(), w[:, :, 0, 0].T.copy())):
    h.update(y.tobytes())
print(h.hexdigest())
"""


def test_float_results_do_not_depend_on_the_blas_kernel():
    """The float executor's products (3x3 and 1x1 convolutions, MatMul) under three OpenBLAS kernels (generic
    SSE3, AVX2, and AVX-512 where the CPU has it; OPENBLAS_CORETYPE picks them in numpy's OpenBLAS): the same
    bytes. Float32 sums differ from kernel to kernel (summation order), which made calibration -- and so every
    quantization parameter -- depend on the compiling machine."""
    import os
    import subprocess
    import sys
    kernels = ["Prescott", "Haswell"] + (["SkylakeX"] if "avx512f" in open("/proc/cpuinfo").read() else [])
    out = {}
    for k in kernels:
        env = dict(os.environ, OPENBLAS_CORETYPE=k, OPENBLAS_VERBOSE="2")
        r = subprocess.run([sys.executable, "-c", _KERNEL_PROBE], env=env, capture_output=True, text=True, check=True)
        assert k.lower() in (r.stdout + r.stderr).lower(), f"OpenBLAS did not take {k}: {r.stdout}{r.stderr}"
        out[k] = r.stdout.split()[-1]
    assert len(set(out.values())) == 1, out


def test_float32_matmul_is_the_correctly_rounded_sum():
    """float32_matmul against an exact reference: every product of two float32 values is exact in float64, their
    sum exact in Python's math.fsum, rounded to float32 once."""
    import math
    from generator.kinds.conv import float32_matmul
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((5, 300)) * np.exp(rng.standard_normal((5, 300)) * 3)).astype(np.float32)
    b = rng.standard_normal((300, 4)).astype(np.float32)
    got = float32_matmul(a, b)
    ref = np.array([[math.fsum(float(p) * float(q) for p, q in zip(a[i], b[:, j])) for j in range(4)]
                    for i in range(5)]).astype(np.float32)
    assert got.dtype == np.float32 and got.tobytes() == ref.tobytes()
