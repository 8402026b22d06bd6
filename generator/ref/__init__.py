"""References: what the executors and the compiler are checked against, apart from the simulators (``exec/``).

``float_ref`` runs the float fused graph in numpy (checked against onnxruntime) and ``kernels`` holds the tensor
kernels it shares with ``layer_ref``, the layer-level integer reference of a quantized graph; ``int_ref`` derives
every quantization parameter itself from the float graph and the calibration ranges (it trusts nothing of
``quant/``), sharing only the activation tables' domain policy ``tables`` with the quantizer.
"""
