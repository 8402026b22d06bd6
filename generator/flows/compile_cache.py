"""The compile cache: a compile's result (fused float graph, quantized graph, program) kept on disk, so that compiling
the same model with the same options again takes no calibration, quantization or scheduling.

A cache file (``build/compiled/<model key>-<16 hex digits of the options>.pkl``, one per model and options, written
atomically with :func:`host.fileio.atomic_write`) is one JSON header line, then the pickled (graph, quantized graph,
program). The header records the key (:func:`compile_key`: the model file's SHA-256, every option that shapes the
result, the board's configuration, the calibration set's digest, the bytes of the calibration caches the compile
read, and the code: a digest of every source file of ``generator/`` and ``host/``, numpy's and Python's versions)
and the payload's size and SHA-256. A file of another key (another model, options, calibration cache or code) is
recomputed and replaced silently; a file that cannot be read, is not whole or whose payload does not match its digest
is recomputed with one ``warning: <file>: ..., recomputing`` line on stderr. It is never unpickled unless its key
and digest match: only this module writes it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import pickle
import sys
from pathlib import Path

import numpy as np

from generator import ROOT_DIR
from generator.flows import calibration
from host.fileio import atomic_write

#: layout of the cache files (a file of another version is recomputed)
CACHE_VERSION = 1


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 (hex) of the source of the compiler: every ``*.py`` file of ``generator/`` and ``host/`` (path and
    content), numpy's and Python's versions. Computed once per process."""
    h = hashlib.sha256(f"numpy {np.__version__} python {sys.version_info[:3]}".encode())
    for d in ("generator", "host"):
        for p in sorted((ROOT_DIR / d).rglob("*.py")):
            if "__pycache__" not in p.parts:
                h.update(f"\n{p.relative_to(ROOT_DIR).as_posix()}\n".encode() + p.read_bytes())
    return h.hexdigest()


def _file_digest(path) -> str | None:
    """SHA-256 (hex) of a file's bytes, None when it cannot be read (missing)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def compile_key(model_path, board, options: dict, cache_files: list) -> dict:
    """The key of a compile: ``model_path``'s SHA-256, the options (``options``: JSON-able, every argument that
    shapes the result), the board's configuration (a :class:`generator.spec.board.Board`), the calibration caches
    ``cache_files`` read (their bytes' SHA-256, None for a missing one), :func:`code_digest` and
    :data:`CACHE_VERSION`."""
    return {"model_sha256": calibration.file_sha256(model_path), "options": json.loads(json.dumps(options)),
            "board": board.model_dump(mode="json"),
            "calibration_caches": {Path(p).name: _file_digest(p) for p in cache_files},
            "code": code_digest(), "version": CACHE_VERSION}


def cache_path(model_path, key: dict) -> Path:
    """``build/compiled/<model key>-<16 hex digits of the key's options and board>.pkl``: one file per model,
    options and board (a later code version replaces it)."""
    slot = hashlib.sha256(json.dumps([key["options"], key["board"]], sort_keys=True).encode()).hexdigest()[:16]
    return calibration.BUILD / "compiled" / f"{calibration.model_key(model_path)}-{slot}.pkl"


def read_compiled(model_path, key: dict):
    """(graph, quantized graph, program) of the cache file of ``key`` when it records ``key`` and is whole; else
    None: silently for a missing file or another key, with one warning line (:func:`calibration._warn`) for a file
    that cannot be read or is damaged. Never raises."""
    path = cache_path(model_path, key)
    try:
        with open(path, "rb") as f:
            head = json.loads(f.readline())
            if not isinstance(head, dict) or head.get("key") != key:
                return None
            payload = f.read()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:      # unreadable, or a header that is not JSON
        calibration._warn(path, f"unreadable compile cache ({getattr(e, 'strerror', None) or e}), recomputing")
        return None
    if len(payload) != head.get("bytes") or hashlib.sha256(payload).hexdigest() != head.get("sha256"):
        calibration._warn(path, f"damaged compile cache ({len(payload)} payload bytes do not match the recorded "
                                f"size and SHA-256), recomputing")
        return None
    try:
        return pickle.loads(payload)
    except Exception as e:  # noqa: BLE001 - a payload of matching digest that does not load: recompute
        calibration._warn(path, f"compile cache does not load ({type(e).__name__}: {e}), recomputing")
        return None


def write_compiled(model_path, key: dict, result: tuple) -> None:
    """Write ``result`` (graph, quantized graph, program) under ``key`` atomically; a failure (read-only build
    folder, full disk, a result that cannot be pickled) is one warning line, not an error."""
    path = cache_path(model_path, key)
    try:
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        head = {"key": key, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(head).encode() + b"\n" + payload)
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as e:
        calibration._warn(path, f"cannot write the compile cache ({getattr(e, 'strerror', None) or e}), continuing "
                                f"without it")
