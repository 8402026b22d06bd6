"""HLS back end (hls4ml style: a static template library, ``hls_templates/``, with thin generated glue).

Modules: :mod:`~generator.backends.hls.kernel` renders the kernel's glue (headers, tops, instruction ROM,
testbench, Tcl) next to the static kernel; :mod:`~generator.backends.hls.block_design` is the Vivado block
design's streams and memories; :mod:`~generator.backends.hls.report` the tool commands;
:mod:`~generator.backends.hls.lint` the Vitis HLS rule checker. Compiling and running the C-simulation is the
executor :mod:`generator.exec.csim`.

Public API: :func:`render` (board -> rendered kernel folder), :func:`render_cosim`, :func:`port_depths`,
:func:`vitis_csim_argv`, :data:`TOP` / :data:`TOPS` / (the exported IPs: VLNVs from :mod:`host.registers`),
:class:`HlsError`, :func:`tool_commands`, :func:`missing_tools_message`.
"""
from generator.backends.hls.kernel import (TOP, TOPS, HlsError, port_depths, render, render_cosim,
                                           vitis_csim_argv)
from generator.backends.hls.report import missing_tools_message, tool_commands

__all__ = ["TOP", "TOPS", "HlsError", "port_depths", "render", "render_cosim", 
           "vitis_csim_argv", "missing_tools_message", "tool_commands"]
