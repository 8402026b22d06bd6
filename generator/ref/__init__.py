"""References: what the executors and the compiler are checked against, apart from the simulators (``exec/``).

``float_ref`` runs the float fused graph in numpy (checked against onnxruntime) and ``kernels`` holds the POST
kernels it shares with ``layer_ref``, the layer-level integer reference of a quantized graph; what a layer computes
before POST is its kind's core (:mod:`generator.kinds`). ``int_ref`` derives every quantization parameter itself from
the float graph and the calibration ranges (it trusts nothing of ``quant/``), sharing only the activation tables'
domain policy ``tables`` and the layer kinds' per-kind terms with the quantizer.
"""
