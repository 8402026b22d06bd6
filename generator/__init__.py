"""yolofpga generator: model -> IR -> passes -> quantized IR -> schedule -> program -> executors."""
import os
from pathlib import Path

#: the repository root (boards/, hls_templates/, rtl/, host/ beside generator/)
ROOT_DIR = Path(__file__).resolve().parent.parent


def build_dir(*parts: str, shared: bool = False) -> Path:
    """The folder ``build/<parts...>`` under :data:`ROOT_DIR` (not created): the one place that names a folder of
    ``build/``.

    A work folder (``shared=False``: a Verilator or g++ build, a synthesis run, a flow's default output) belongs to
    one process at a time: under a pytest-xdist worker (environment variable ``PYTEST_XDIST_WORKER``, e.g. ``gw1``)
    its first part carries the worker's name (``build_dir("rtl_sim", "tiny")`` -> ``build/rtl_sim-gw1/tiny``), so
    two test workers never build into one folder at once. ``shared=True`` is for caches keyed by their content and
    written atomically (calibration ranges, converted models, drawn images), which every process may read and
    write. Without ``PYTEST_XDIST_WORKER`` (every task, a plain pytest run) both are ``build/<parts...>``.

    Args:
        parts: path components below ``build/`` (none: ``build/`` itself, or ``build/<worker>`` for a worker's
            work folder).
        shared: the folder is a content-keyed cache shared by every process.
    Returns:
        pathlib.Path, absolute.
    """
    worker = "" if shared else os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker:
        parts = (f"{parts[0]}-{worker}", *parts[1:]) if parts else (worker,)
    return ROOT_DIR.joinpath("build", *parts)
