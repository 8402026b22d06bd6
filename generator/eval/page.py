"""The document page test image (``--image page``): a page of a paper drawn with Pillow, for the document-layout
detector (the DocLayNet YOLOv8n, :func:`generator.eval.data.doclaynet_onnx`); no page photo ships in a registry
package.

:func:`render_page` draws, deterministically (fixed text, no randomness), a white 1024 x 1324 RGB page: a page
header and footer, a title, an author line, section headers, justified paragraphs of real words, a bulleted list,
a bar chart with axes and its caption, a ruled table of numbers with its caption, and a footnote; in DejaVu Sans /
Serif when installed (Debian ``fonts-dejavu-core``), else Pillow's built-in font. :func:`page_path` writes it once
as a PNG into ``build/images/`` (atomically), under a name carrying a hash of this module's source, the font files
and the Pillow version, so a change of any of them draws it again.

:func:`render_variant` draws other pages from a seed (one or two columns of paragraphs of the same words reshuffled,
section headers, lists, charts and tables of other values, synthetic pictures, equations; some on a grey, noisy
"scanned" background), and :func:`document_set` writes a numbered set of them: calibration images for a document
model (:func:`generator.flows.doc_calibration.document_calib_set`), never the measured page itself.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import PIL
from generator import ROOT_DIR

#: page size in pixels (width, height): US letter at about 120 dpi
PAGE_SIZE = (1024, 1324)
#: where :func:`page_path` caches the PNG
CACHE_DIR = ROOT_DIR / "build" / "images"
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_FONTS = {"serif": "DejaVuSerif.ttf", "bold": "DejaVuSans-Bold.ttf", "sans": "DejaVuSans.ttf",
          "italic": "DejaVuSerif-Italic.ttf"}
MARGIN = 96

_BODY = (
    "Object detectors on embedded boards trade accuracy for speed. A compiler that maps a trained network onto a "
    "fixed array of multipliers must choose, for every layer, how the tensors are tiled, in which order the loops "
    "run and how many bits each value keeps. These choices decide the frame rate and the memory traffic, and the "
    "quantization decides how far the detections move from those of the floating point model.",
    "We measure the signal to quantization noise ratio of every layer on real images and report the agreement of "
    "the detections as the mean average precision of the quantized boxes scored against the float ones.",
    "The accelerator reads its weights once per frame and keeps partial sums on chip, so the traffic of a layer "
    "is bounded below by its inputs and outputs. Layers with large maps are tiled along the rows, while the deep "
    "layers near the head are tiled along the channels, with the error measured as",
)
_LIST = ("Calibration on a held out set of twenty images.", "Per channel weight scales with bias correction.",
         "Sixteen bit activations where eight bits lose too much.")


def _font(kind: str, size: int):
    """A DejaVu font of ``kind`` (:data:`_FONTS`) at ``size`` pixels, else Pillow's built-in font at that size."""
    f = FONT_DIR / _FONTS[kind]
    if f.is_file():
        return ImageFont.truetype(str(f), size)
    return ImageFont.load_default(size)


def _wrap(d: ImageDraw.ImageDraw, text: str, font, width: int) -> list:
    """Words of ``text`` greedily filled into lines no wider than ``width`` pixels: a list of word lists."""
    lines, cur = [], []
    for w in text.split():
        if cur and d.textlength(" ".join(cur + [w]), font=font) > width:
            lines.append(cur)
            cur = []
        cur.append(w)
    return lines + ([cur] if cur else [])


def _paragraph(d: ImageDraw.ImageDraw, text: str, x: int, y: int, width: int, font, lead: int,
               indent: int = 0) -> int:
    """Draw ``text`` justified in a ``width``-pixel column from (x, y) (the last line flush left); returns the y
    below it."""
    lines = _wrap(d, text, font, width - indent)
    for i, words in enumerate(lines):
        if i == len(lines) - 1 or len(words) == 1:
            d.text((x + indent, y), " ".join(words), fill=(20, 20, 20), font=font)
        else:
            gap = (width - indent - sum(d.textlength(w, font=font) for w in words)) / (len(words) - 1)
            cx = float(x + indent)
            for w in words:
                d.text((round(cx), y), w, fill=(20, 20, 20), font=font)
                cx += d.textlength(w, font=font) + gap
        y += lead
    return y


def _chart(d: ImageDraw.ImageDraw, box: tuple, font, vals: tuple = (31.0, 38.5, 24.2, 41.7, 35.3, 29.8, 44.1)) -> None:
    """A bar chart of ``vals`` (each in 0..50) with axes, ticks and labels inside ``box`` (x1, y1, x2, y2 pixels)."""
    x1, y1, x2, y2 = box
    ox, oy = x1 + 50, y2 - 34
    d.line([(ox, y1 + 8), (ox, oy), (x2 - 8, oy)], fill=(0, 0, 0), width=2)
    top = 50.0
    for k in range(6):
        ty = oy - (oy - y1 - 16) * k / 5
        d.line([(ox - 6, ty), (ox, ty)], fill=(0, 0, 0), width=1)
        d.text((x1 + 8, ty - 8), f"{int(top * k / 5)}", fill=(0, 0, 0), font=font)
        if k:
            d.line([(ox + 1, ty), (x2 - 8, ty)], fill=(215, 215, 215), width=1)
    bw = (x2 - 8 - ox) / len(vals)
    colors = ((52, 101, 164), (204, 102, 0))
    for i, v in enumerate(vals):
        bx = ox + i * bw + bw * 0.2
        by = oy - (oy - y1 - 16) * v / top
        d.rectangle([bx, by, bx + bw * 0.6, oy - 1], fill=colors[i % 2])
        d.text((bx + bw * 0.1, oy + 8), f"L{i + 1}", fill=(0, 0, 0), font=font)


def _table(d: ImageDraw.ImageDraw, x: int, y: int, width: int, font, bold, rows: list | None = None) -> int:
    """A ruled table of numbers (header row, ``rows`` of four cells; default three rows) from (x, y); returns the
    y below it."""
    head = ("Layer", "Cycles", "DDR bytes", "SQNR (dB)")
    rows = rows or [(f"conv_{i}", f"{12840 + 3917 * i:,}", f"{204800 - 17408 * i:,}", f"{38.4 - 2.3 * i:.1f}")
                    for i in range(3)]
    rh, cw = 30, width / len(head)
    for r, cells in enumerate([head] + rows):
        for c, t in enumerate(cells):
            f = bold if r == 0 else font
            tx = x + c * cw + (8 if c == 0 else cw - 8 - d.textlength(t, font=f))
            d.text((round(tx), y + r * rh + 7), t, fill=(0, 0, 0), font=f)
    n = len(rows) + 1
    for r in range(n + 1):
        d.line([(x, y + r * rh), (x + width, y + r * rh)], fill=(0, 0, 0), width=2 if r in (0, 1, n) else 1)
    for c in range(len(head) + 1):
        d.line([(x + c * cw, y), (x + c * cw, y + n * rh)], fill=(0, 0, 0), width=1)
    return y + n * rh


def _formula(d: ImageDraw.ImageDraw, x: int, y: int, width: int) -> int:
    """A displayed equation (a fraction with sums, numbered at the right margin) from y; returns the y below it."""
    f, fs = _font("italic", 20), _font("serif", 20)
    cx = x + width / 2 - 150
    d.text((cx, y + 14), "SQNR = 10 log", fill=(0, 0, 0), font=f)
    cx += d.textlength("SQNR = 10 log", font=f)
    d.text((cx, y + 26), "10", fill=(0, 0, 0), font=_font("serif", 12))
    cx += 22
    num, den = "\u03a3 x\u00b2", "\u03a3 (x \u2212 q)\u00b2"
    fw = max(d.textlength(num, font=fs), d.textlength(den, font=fs)) + 12
    d.text((cx + (fw - d.textlength(num, font=fs)) / 2, y), num, fill=(0, 0, 0), font=fs)
    d.line([(cx, y + 26), (cx + fw, y + 26)], fill=(0, 0, 0), width=1)
    d.text((cx + (fw - d.textlength(den, font=fs)) / 2, y + 29), den, fill=(0, 0, 0), font=fs)
    d.text((x + width - d.textlength("(1)", font=fs), y + 14), "(1)", fill=(0, 0, 0), font=fs)
    return y + 56


def render_page() -> np.ndarray:
    """The page as uint8 [1324, 1024, 3] RGB (:data:`PAGE_SIZE`), the same array on every call."""
    im = Image.new("RGB", PAGE_SIZE, (255, 255, 255))
    d = ImageDraw.Draw(im)
    small, body, bold = _font("sans", 13), _font("serif", 16), _font("bold", 13)
    w, x = PAGE_SIZE[0] - 2 * MARGIN, MARGIN
    d.text((x, 40), "Journal of Embedded Vision Systems, Vol. 12, No. 3", fill=(90, 90, 90), font=small)
    d.text((x + w - d.textlength("Page 7", font=small), 40), "Page 7", fill=(90, 90, 90), font=small)
    d.line([(x, 62), (x + w, 62)], fill=(120, 120, 120), width=1)
    title = _font("bold", 30)
    for i, t in enumerate(("Compiling Object Detectors for", "Programmable Logic Accelerators")):
        d.text(((PAGE_SIZE[0] - d.textlength(t, font=title)) / 2, 96 + 40 * i), t, fill=(0, 0, 0), font=title)
    authors = "A. Writer and B. Reviewer, Institute of Hardware Design"
    d.text(((PAGE_SIZE[0] - d.textlength(authors, font=_font("italic", 17))) / 2, 190), authors,
           fill=(40, 40, 40), font=_font("italic", 17))
    head = _font("bold", 20)
    y = 250
    d.text((x, y), "1  Introduction", fill=(0, 0, 0), font=head)
    y = _paragraph(d, _BODY[0], x, y + 38, w, body, 24, indent=24) + 14
    y = _paragraph(d, _BODY[1], x, y, w, body, 24, indent=24) + 20
    for item in _LIST:
        d.ellipse([x + 10, y + 8, x + 17, y + 15], fill=(0, 0, 0))
        d.text((x + 30, y), item, fill=(20, 20, 20), font=body)
        y += 28
    y += 16
    _chart(d, (x + 150, y, x + w - 150, y + 190), small)
    cap = "Figure 1: Output SQNR of seven layers in decibels, eight bit activations."
    d.text(((PAGE_SIZE[0] - d.textlength(cap, font=small)) / 2, y + 202), cap, fill=(0, 0, 0), font=small)
    y += 240
    d.text((x, y), "2  Method", fill=(0, 0, 0), font=head)
    y = _paragraph(d, _BODY[2], x, y + 38, w, body, 24, indent=24) + 8
    y = _formula(d, x, y, w) + 8
    d.text((x, y), "Table 1: Cycles, memory traffic and SQNR of the first three layers.", fill=(0, 0, 0),
           font=small)
    y = _table(d, x + 60, y + 28, w - 120, small, bold)
    d.line([(x, PAGE_SIZE[1] - 92), (x + 200, PAGE_SIZE[1] - 92)], fill=(0, 0, 0), width=1)
    d.text((x, PAGE_SIZE[1] - 84), "1 The measurements were taken on a single core at the board clock.",
           fill=(40, 40, 40), font=small)
    d.text(((PAGE_SIZE[0] - d.textlength("7", font=small)) / 2, PAGE_SIZE[1] - 44), "7", fill=(90, 90, 90),
           font=small)
    return np.asarray(im, np.uint8)


def page_key() -> str:
    """8 hex digits of the SHA-256 of this module's source, the font files used and the Pillow version."""
    h = hashlib.sha256(Path(__file__).read_bytes() + PIL.__version__.encode())
    for f in sorted(_FONTS.values()):
        p = FONT_DIR / f
        h.update(p.read_bytes() if p.is_file() else b"-")
    return h.hexdigest()[:8]


def page_path(cache_dir=None) -> Path:
    """The page as a PNG file, ``<cache_dir>/page-<page_key>.png`` (default :data:`CACHE_DIR`), drawn by
    :func:`render_page` and written atomically the first time. Raises OSError when the folder cannot be written."""
    from host.fileio import atomic_path

    d = Path(cache_dir) if cache_dir else CACHE_DIR
    p = d / f"page-{page_key()}.png"
    if not p.is_file():
        d.mkdir(parents=True, exist_ok=True)
        with atomic_path(p) as tmp:
            Image.fromarray(render_page()).save(tmp, format="PNG")
    return p


# -- document variants: the calibration pages of a document model (never the measured page above) --------------

#: words of the variants' text (the page's own sentences, reshuffled)
_WORDS = " ".join(_BODY + _LIST).replace(",", "").replace(".", "").split()
#: section names of the variants
_SECTIONS = ("Introduction", "Related Work", "Method", "Results", "Discussion", "Implementation", "Evaluation",
             "Conclusion", "Background", "Data", "Limitations", "Appendix")


def _sentence(rng, lo: int = 6, hi: int = 22) -> str:
    """A sentence of lo..hi-1 words of :data:`_WORDS` drawn by ``rng`` (numpy Generator), capitalized, with a period."""
    words = [str(w) for w in rng.choice(_WORDS, int(rng.integers(lo, hi)))]
    return " ".join([words[0].capitalize()] + [w.lower() for w in words[1:]]) + "."


def _picture(rng, size: tuple) -> Image.Image:
    """A synthetic picture of ``size`` (w, h): a two-colour gradient with random filled ellipses and rectangles."""
    w, h = size
    c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    t = np.linspace(0.0, 1.0, w)[None, :, None] * 0.6 + np.linspace(0.0, 1.0, h)[:, None, None] * 0.4
    im = Image.fromarray((c0 * (1 - t) + c1 * t).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(im)
    for _ in range(int(rng.integers(3, 12))):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        a, b = int(rng.integers(8, max(9, w // 3))), int(rng.integers(8, max(9, h // 3)))
        shape = d.ellipse if rng.random() < 0.5 else d.rectangle
        shape([x, y, x + a, y + b], fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    return im


def _variant_block(d: ImageDraw.ImageDraw, im: Image.Image, rng, kind: str, x: int, y: int, w: int,
                   fonts: dict) -> int:
    """Draw one block of ``kind`` at (x, y) in a ``w``-pixel column; returns the y below it."""
    body, small, lead = fonts["body"], fonts["small"], fonts["lead"]
    if kind == "text":
        text = " ".join(_sentence(rng) for _ in range(int(rng.integers(2, 7))))
        return _paragraph(d, text, x, y, w, body, lead, indent=int(rng.choice([0, 24]))) + lead // 2
    if kind == "section":
        title = f"{int(rng.integers(1, 9))}  {rng.choice(_SECTIONS)}"
        d.text((x, y), title, fill=(0, 0, 0), font=fonts["head"])
        return y + fonts["head"].size + 14
    if kind == "list":
        for _ in range(int(rng.integers(2, 6))):
            d.ellipse([x + 10, y + 8, x + 17, y + 15], fill=(0, 0, 0))
            y = _paragraph(d, _sentence(rng, 4, 12), x + 30, y, w - 30, body, lead)
        return y + lead // 2
    if kind == "formula":
        return _formula(d, x, y, w) + 8
    cap = f"{'Table' if kind == 'table' else 'Figure'} {int(rng.integers(1, 9))}: {_sentence(rng, 5, 12)}"
    if kind == "table":
        d.text((x, y), cap, fill=(0, 0, 0), font=small)
        y0 = y + small.size + 12
        rows = [(f"{rng.choice(_WORDS).lower()}_{i}", f"{int(rng.integers(1e3, 1e6)):,}",
                 f"{int(rng.integers(1e3, 1e7)):,}", f"{rng.uniform(5, 60):.1f}")
                for i in range(int(rng.integers(2, 9)))]
        return _table(d, x + int(rng.integers(0, max(1, w // 8))), y0, int(w * rng.uniform(0.7, 0.95)), small,
                      fonts["bold"], rows) + 18
    hgt = int(rng.integers(140, 260))
    if kind == "chart":
        _chart(d, (x + w // 8, y, x + w - w // 8, y + hgt), small,
               tuple(rng.uniform(3, 49, int(rng.integers(3, 10)))))
    else:
        pw = int(w * rng.uniform(0.5, 0.95))
        im.paste(_picture(rng, (pw, hgt)), (x + (w - pw) // 2, y))
    return _paragraph(d, cap, x, y + hgt + 10, w, small, small.size + 6) + 14


#: block kinds of a variant and their odds
_KINDS = (("text", 0.42), ("section", 0.14), ("list", 0.1), ("chart", 0.08), ("table", 0.1), ("picture", 0.12),
          ("formula", 0.04))


def render_variant(seed: int) -> np.ndarray:
    """A document page drawn from ``seed`` (uint8 [H, 1024, 3] RGB, H 1324 or 1448; the same array for the same
    seed): one or two columns of blocks drawn at random from :data:`_KINDS` (paragraphs of the page's words
    reshuffled, section headers, bulleted lists, bar charts, ruled tables, synthetic pictures, equations, with
    captions), an optional title and author line, page header and footer, fonts and sizes, and on some pages a
    slightly grey, noisy background (a scan). Never equal to :func:`render_page`'s page (other text, layout)."""
    rng = np.random.default_rng([20, int(seed)])
    size = (PAGE_SIZE[0], int(rng.choice([1324, 1448])))
    paper = int(rng.choice([255, 255, 250, 244]))
    im = Image.new("RGB", size, (paper, paper, paper))
    d = ImageDraw.Draw(im)
    serif = rng.random() < 0.6
    fonts = {"body": _font("serif" if serif else "sans", int(rng.integers(13, 19))), "small": _font("sans", 13),
             "bold": _font("bold", 13), "head": _font("bold", int(rng.integers(16, 23)))}
    fonts["lead"] = fonts["body"].size + int(rng.integers(5, 10))
    margin, cols = int(rng.integers(60, 120)), int(rng.choice([1, 2]))
    gap = 32
    cw = (size[0] - 2 * margin - (cols - 1) * gap) // cols
    d.text((margin, 36), _sentence(rng, 3, 8)[:-1], fill=(90, 90, 90), font=fonts["small"])
    d.text((size[0] // 2, size[1] - 48), str(int(rng.integers(1, 400))), fill=(90, 90, 90), font=fonts["small"])
    y = 80
    if rng.random() < 0.5:
        title = _font("bold", int(rng.integers(22, 34)))
        for line in _wrap(d, _sentence(rng, 4, 10)[:-1], title, size[0] - 2 * margin):
            d.text((margin, y), " ".join(line), fill=(0, 0, 0), font=title)
            y += title.size + 10
        d.text((margin, y + 6), "A. Writer, B. Reviewer", fill=(40, 40, 40), font=_font("italic", 16))
        y += 50
    kinds, odds = [k for k, _ in _KINDS], np.array([p for _, p in _KINDS])
    for c in range(cols):
        cy, x = y, margin + c * (cw + gap)
        while cy < size[1] - 260:
            cy = _variant_block(d, im, rng, str(rng.choice(kinds, p=odds / odds.sum())), x, cy, cw, fonts)
    a = np.asarray(im, np.uint8)
    if paper < 255:    # a scan: mild noise
        a = np.clip(a.astype(np.int16) + rng.integers(-6, 7, a.shape), 0, 255).astype(np.uint8)
    return a


#: how many variant pages :func:`document_set` draws by default
DOC_SET_SIZE = 8


def document_set(n: int = DOC_SET_SIZE, cache_dir=None) -> Path:
    """A folder of ``n`` variant pages (:func:`render_variant`, seeds 0..n-1) as PNG files ``doc-<seed>.png``:
    ``<cache_dir>/docs-<page_key>-<n>/`` (default :data:`CACHE_DIR`), drawn and written (each file atomically) the
    first time. Raises OSError when the folder cannot be written."""
    from host.fileio import atomic_path

    d = (Path(cache_dir) if cache_dir else CACHE_DIR) / f"docs-{page_key()}-{n}"
    d.mkdir(parents=True, exist_ok=True)
    for seed in range(n):
        p = d / f"doc-{seed}.png"
        if not p.is_file():
            with atomic_path(p) as tmp:
                Image.fromarray(render_variant(seed)).save(tmp, format="PNG")
    return d
