"""Flows: the build steps ``tasks.py`` calls, one function each, in the order of use.

=================================  ===============================================================================
flow                               what it does
=================================  ===============================================================================
``compile.compile_flow``           model -> program for a board; artifacts written (``invoke compile``)
``detect.detect_flow``             compile, one image through the golden simulator, detections (``invoke detect``)
``resources.resources_flow``       HLS estimate / Yosys synthesis against the part (``invoke resources``)
``build.build_flow``               HLS kernel rendered and C-simulated bit-exact, report, Vitis / Vivado
                                   (``invoke build``)
``package.package_flow``           deployment folder + tarball (``invoke package``)
``rtl_frame.rtl_frame_flow``       one whole frame through the RTL, bit-exact, cycle report (``invoke rtl-frame``)
``disasm.disasm_flow``             a program disassembled (``invoke disasm``)
=================================  ===============================================================================

``compiler`` is the compiler driver they share (model loading, calibration cache, ``compile_model``); ``inputs``
resolves what every flow needs first (output folder, image, model) and defines :class:`inputs.FlowError`, the one
error a flow raises for bad input or a failed check. The accuracy table, the fuzzer and the ONNX conformance run
live in ``generator/eval/``.
"""
