"""The compiler cache of the executors' builds: ccache (https://ccache.dev) in front of g++ for the C-simulation
(:func:`generator.exec.csim.compile_csim`) and for the C++ that Verilator writes (``OBJCACHE`` of Verilator's
``verilated.mk``), so a build that was compiled before is not compiled again.

Every Verilator build compiles the same runtime library (``verilated.cpp``, ``verilated_vpi.cpp``,
``verilated_threads.cpp``, cocotb's ``verilator.cpp``: about 14 s of a 35 s unit build on this machine's core); two
pytest-xdist workers build the same configuration in their own folders; a C-simulation of one board is compiled by
several tests and tasks. ccache keys each object on the compiler, its arguments and the preprocessed source, so a hit
is the same object file g++ would write (a corrupted entry is detected by its checksum and recompiled: ccache's own
contract). The cache lives in ``build/ccache`` (:func:`generator.build_dir`, shared by every process; ccache locks
its own files), at most :data:`MAX_SIZE`.

Without ccache on PATH (``./setup.sh`` installs it) or with ``YOLOFPGA_NO_CCACHE=1`` the builds run the compiler
directly, as before.
"""
from __future__ import annotations

import os
import shutil

from generator import build_dir

#: ccache's size limit for build/ccache
MAX_SIZE = "4G"
#: Verilator's models include a precompiled header (``-include Vtop__pch.h.fast``) made in each build: ccache may
#: use an object compiled with it when the header's source is the same (pch_defines, time_macros), whatever the
#: .gch file's own time stamps (include_file_mtime, include_file_ctime)
SLOPPINESS = "pch_defines,time_macros,include_file_mtime,include_file_ctime"


def ccache() -> str | None:
    """The ccache command (absolute path), or None when it is not on PATH or ``YOLOFPGA_NO_CCACHE`` is set to
    anything but ``0`` or the empty string."""
    if os.environ.get("YOLOFPGA_NO_CCACHE", "0") not in ("", "0"):
        return None
    return shutil.which("ccache")


def ccache_env() -> dict:
    """Environment variables for a compile through ccache (its folder, size limit, sloppiness); {} without ccache.
    The caller adds them to the compiler's environment (they leave every other variable as it is)."""
    if ccache() is None:
        return {}
    return {"CCACHE_DIR": str(build_dir("ccache", shared=True)), "CCACHE_MAXSIZE": MAX_SIZE,
            "CCACHE_SLOPPINESS": SLOPPINESS}
