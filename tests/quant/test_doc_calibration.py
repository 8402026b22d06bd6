"""Document calibration pages (generator/eval/page.py: render_variant, document_set) and the document-layout
calibration set `--calib documents` (generator/flows/doc_calibration.py: document_calib_set, named_calib),
checked against the measured page and the shipped photos."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from generator.eval import data
from generator.eval.page import PAGE_SIZE, document_set, render_page, render_variant
from generator.flows.calibration import calib_files
from generator.flows.doc_calibration import CALIB_NAME, document_calib_set, named_calib


def test_variants_are_deterministic_pages_other_than_the_measured_one():
    """Same seed, same array; other seeds, other pages; none is the measured page (held out) or blank."""
    a, b, c = render_variant(3), render_variant(3), render_variant(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    page = render_page()
    for v in (a, c):
        assert v.dtype == np.uint8 and v.ndim == 3 and v.shape[1:] == (PAGE_SIZE[0], 3)
        assert v.shape != page.shape or not np.array_equal(v, page)
        dark = (v.mean(axis=2) < 128).mean()          # text and figures on light paper
        assert 0.005 < dark < 0.5 and np.median(v) > 200


def test_document_set_writes_the_variants(tmp_path):
    """document_set: n PNG files, each the variant of its seed pixel for pixel; a second call rewrites nothing."""
    d = document_set(3, tmp_path)
    files = sorted(d.glob("doc-*.png"))
    assert [f.name for f in files] == ["doc-0.png", "doc-1.png", "doc-2.png"]
    for k, f in enumerate(files):
        assert np.array_equal(np.asarray(Image.open(f).convert("RGB")), render_variant(k))
    mtimes = [f.stat().st_mtime_ns for f in files]
    assert document_set(3, tmp_path) == d and [f.stat().st_mtime_ns for f in files] == mtimes


def _sha(p) -> str:
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def test_document_calib_set_holds_pages_and_the_shipped_photos(tmp_path):
    """The folder --calib reads: the pages of document_set and every shipped photo (same bytes), nothing else;
    the page measured by `--image page` is not among them."""
    d = document_calib_set(2, tmp_path)
    got = {n: _sha(p) for n, p in calib_files(d).items()}
    photos = {_sha(p) for p in calib_files(None).values()}
    pages = {_sha(p) for p in document_set(2, tmp_path).glob("doc-*.png")}
    assert set(got.values()) == photos | pages and len(got) == len(photos) + 2
    assert _sha(data.page_image()) not in set(got.values())
    assert document_calib_set(2, tmp_path) == d and {n: _sha(p) for n, p in calib_files(d).items()} == got


def test_the_name_documents_gives_the_set_and_a_folder_of_that_name_wins(tmp_path, monkeypatch):
    assert named_calib(None) is None and named_calib(str(tmp_path)) == str(tmp_path)
    monkeypatch.chdir(tmp_path)
    got = named_calib(CALIB_NAME)
    assert got == str(document_calib_set()) and calib_files(got)
    (tmp_path / CALIB_NAME).mkdir()
    assert named_calib(CALIB_NAME) == CALIB_NAME
