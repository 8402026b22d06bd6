"""SystemVerilog back end: the hand-written RTL of ``rtl/`` with one rendered package, ``accel_pkg.sv``
(:mod:`~generator.backends.rtl.render`), so that no constant of the ISA or the board is typed by hand.

Public API: :func:`write_rtl` (board -> package, ROM image and sources in compile order), :func:`render_package`,
:func:`package_context`, :func:`ram_styles` / :data:`RAM_STYLES`, :func:`rom_image`, :data:`RTL_SOURCES`,
:data:`RTL_DIR`, :data:`TOP`, :class:`RtlError`.
"""
from generator.backends.rtl.render import (RAM_STYLES, RTL_DIR, RTL_SOURCES, TOP, RtlError, package_context,
                                           ram_styles, render_package, rom_image, write_rtl)

__all__ = ["RAM_STYLES", "RTL_DIR", "RTL_SOURCES", "TOP", "RtlError", "package_context", "ram_styles",
           "render_package", "rom_image", "write_rtl"]
