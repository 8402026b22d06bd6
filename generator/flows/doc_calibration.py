"""The default calibration set of a document-layout model: document pages beside the shipped photos.

The shipped calibration set (:func:`generator.flows.calibration.calib_files`) holds photos. A document-layout
detector (the DocLayNet YOLOv8n, ``--model doclaynet``) sees pages: calibrated on photos alone, its first layers
and its class branch clip on a page (the page's values of ``/model.0`` reach 2.6x the top of the range chosen on
photos; the clipping is 97 % of that layer's error on the page). :func:`document_calib_set` makes the set a user
of such a model would calibrate on: pages drawn deterministically by :func:`generator.eval.page.render_variant`
(never the measured ``--image page``) beside the photos, named ``--calib documents`` (:func:`named_calib`).

Measured (DocLayNet YOLOv8n, int8-asym, golden simulator; ``invoke compare --model doclaynet --image page|bus
--quant int8-asym`` without, then with ``--calib documents``; photos -> photos + 4 pages):

* page: lowest layer 14.5 -> 15.7 dB, mean layer 18.4 -> 20.3 dB, scores 11.7 -> 20.9 dB, boxes 34.8 -> 37.1 dB,
  detections mAP@0.5 0.894 -> 0.909;
* bus: lowest layer 17.2 -> 15.8 dB, mean 22.3 -> 21.4 dB, scores 16.2 -> 12.0 dB, mAP 1.000 -> 1.000;
* three other pages (render_variant seeds 100-102, fake-quantized, :mod:`generator.quant.fakequant`): lowest layer
  14.6 -> 13.7 dB (mean of the three), mean layer 19.1 -> 19.6 dB, mAP 0.953 -> 0.994;
* 16 pages instead of 4: page lowest 14.9, mean 20.8, scores 12.3 dB, mAP 0.818; bus lowest 16.6, scores 12.1 dB.

Detections on documents agree better; the lowest layer does not rise on every image (on bus and the three pages
``/model.4/m.1/cv1``, whose range chosen on the mixed set clips those images' tails, falls), so it is not the
default of any model.
"""
from __future__ import annotations

from pathlib import Path

from generator.flows.calibration import calib_files


#: the ``--calib`` name of :func:`document_calib_set`'s folder (a folder of that name in the working directory wins)
CALIB_NAME = "documents"
#: document pages (:func:`generator.eval.page.render_variant`) in the set
DOC_PAGES = 4


def document_calib_set(pages: int = DOC_PAGES, cache_dir=None) -> Path:
    """The document calibration folder: ``pages`` document pages drawn deterministically
    by :func:`generator.eval.page.render_variant` (seeds 0..pages-1; never the measured ``--image page``) beside
    the shipped photos of :func:`calib_files` (symbolic links), in ``<cache_dir>/calib-docs-<page key>-<pages>/``
    (default ``build/images``), made once. Raises DataMissingError (a shipped photo is absent) or OSError."""
    import os

    from generator.eval.page import CACHE_DIR, document_set, page_key

    d = Path(cache_dir or CACHE_DIR) / f"calib-docs-{page_key()}-{pages}"
    d.mkdir(parents=True, exist_ok=True)
    links = {f"doc-{k}.png": document_set(pages, cache_dir) / f"doc-{k}.png" for k in range(pages)}
    links.update({f"photo-{n}{Path(q).suffix.lower()}": Path(q) for n, q in calib_files(None).items()})
    for name, target in links.items():
        p = d / name
        if not (p.is_symlink() and Path(os.readlink(p)) == target.resolve()):
            tmp = d / f".{name}.{os.getpid()}.tmp"
            tmp.unlink(missing_ok=True)
            os.symlink(target.resolve(), tmp)
            os.replace(tmp, p)
    return d


def named_calib(calib):
    """``calib`` (a ``--calib`` value) with the name :data:`CALIB_NAME` replaced by the folder of
    :func:`document_calib_set` (made once), unless a folder of that name exists; any other value unchanged.
    Raises as :func:`document_calib_set`."""
    if calib == CALIB_NAME and not Path(calib).is_dir():
        return str(document_calib_set())
    return calib
