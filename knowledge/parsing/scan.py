"""Which pages of a PDF are scans, and their recognition: render, Tesseract, progress, limits.

A page is recognised when it has no text layer but shows something (an image, or enough vector
paths to be text drawn as outlines), when its text is garbage (``textquality``), or when a
page-sized image carries a few words of text only (a scanner's stamp or page number); a page
with good text is never touched. Pages are
rendered one at a time in the calling thread (MuPDF objects are not shared between threads)
and recognised ``jobs`` at a time in Tesseract processes, so rendering the next page overlaps
the recognition of the others. After every page the caller's ``progress(done, total)`` runs
in the calling thread: it records the progress, and it is where a cancelled run stops (the
ingest's heartbeat raises when a reindex took the version over).
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

import pymupdf

from knowledge.parsing.base import ParseError
from knowledge.parsing.ocr import (
    OcrError,
    OcrOptions,
    OcrPage,
    Progress,
    check_engine,
    recognise,
)
from knowledge.parsing.textquality import MIN_CHARACTERS, is_garbage

NO_TEXT = "no_text"  # why a page is recognised: no text layer ...
GARBAGE = "garbage"  # ... or a text layer that is garbage
IMAGE = "image"  # ... or the document is an image
FULL_PAGE_IMAGE = 0.5  # an image over this share of the page makes a page with little text a scan
MIN_DRAWINGS = 10  # vector paths on a page without text that may be text drawn as outlines
MAX_PIXELS = 40_000_000  # a page is rendered at most this large (an A3 at 400 dpi is 31 Mpx)
MIN_NATIVE_DPI = 150  # a scan image finer than this is read at its own resolution
MAX_IMAGE_PIXELS = 150_000_000  # a larger image on a page is not decoded (a decompression bomb)


@dataclass
class Recognised:
    """The outcome of recognising a document's scanned pages."""

    engine: str = ""
    pages: dict[int, OcrPage] = field(default_factory=dict)  # 1-based page -> what was read
    reasons: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)  # page -> why it could not be read
    seconds: float = 0.0

    def record(self, options: OcrOptions) -> dict:
        """What the version keeps (``DocumentVersion.ocr``): engine, languages, per page."""
        return {
            "engine": self.engine,
            "wrapper": "pytesseract",
            "languages": options.languages,
            "min_confidence": options.min_confidence,
            "seconds": round(self.seconds, 1),
            "pages": [
                {
                    "page": number,
                    "confidence": page.confidence,
                    "reason": self.reasons[number],
                    "dpi": round(page.dpi),
                }
                for number, page in sorted(self.pages.items())
            ],
            "failed": [{"page": n, "error": e} for n, e in sorted(self.failed.items())],
        }


def page_needs_ocr(page: pymupdf.Page, text: str) -> str:
    """Why ``page`` (whose text layer reads ``text``) must be recognised, or "" when it need
    not: see the module docstring."""
    visible = sum(1 for ch in text if not ch.isspace())
    if visible >= MIN_CHARACTERS:
        if is_garbage(text):
            return GARBAGE
        if visible >= 4 * MIN_CHARACTERS:
            return ""
    images = _image_share(page)
    if visible < MIN_CHARACTERS and (images > 0 or _has_drawings(page)):
        return NO_TEXT
    return NO_TEXT if images >= FULL_PAGE_IMAGE else ""


def _image_share(page: pymupdf.Page) -> float:
    area = abs(page.rect) or 1.0
    covered = sum(abs(pymupdf.Rect(info["bbox"]) & page.rect) for info in page.get_image_info())
    return min(1.0, covered / area)


def _has_drawings(page: pymupdf.Page) -> bool:
    """Enough vector paths to be text drawn as outlines (a blank page's background is one)."""
    return len(page.get_cdrawings()) >= MIN_DRAWINGS


def recognise_pages(
    doc: pymupdf.Document,
    reasons: dict[int, str],
    options: OcrOptions,
    progress: Progress | None = None,
) -> Recognised:
    """Recognise the pages named in ``reasons`` (1-based page -> why). ParseError past the page
    or time limit; OcrUnavailable when Tesseract is missing; a page Tesseract fails on is
    listed in ``failed`` and the others go on."""
    total = len(reasons)
    if total > options.max_pages:
        raise ParseError(
            f"The document has {total} scanned pages to recognise; at most {options.max_pages} "
            "are recognised per document (KB_OCR_MAX_PAGES). Split it into smaller files, or "
            "raise the limit."
        )
    result = Recognised(engine=check_engine(options), reasons=dict(reasons))
    started = time.monotonic()
    todo = deque(sorted(reasons))
    running: deque[tuple[int, str, Future[OcrPage]]] = deque()
    with (
        tempfile.TemporaryDirectory(prefix="kb-ocr-") as folder,
        ThreadPoolExecutor(max_workers=options.jobs, thread_name_prefix="kb-ocr") as pool,
    ):
        try:
            while todo or running:
                while todo and len(running) < options.jobs + 1:
                    number = todo.popleft()
                    try:
                        path, dpi = render_page(doc[number - 1], options, folder, reasons[number])
                    except OcrError as exc:
                        result.failed[number] = str(exc)
                        continue
                    running.append((number, path, pool.submit(recognise, path, dpi, options)))
                if not running:
                    break
                number, path, future = running.popleft()
                left = options.time_limit - (time.monotonic() - started)
                try:
                    result.pages[number] = future.result(timeout=max(0.0, left))
                    measure_strokes(path, result.pages[number])
                except FutureTimeout:
                    raise ParseError(_too_long(options, len(result.pages), total)) from None
                except OcrError as exc:
                    result.failed[number] = str(exc)
                os.remove(path)
                done = len(result.pages) + len(result.failed)
                if progress is not None:
                    progress(done, total)
                if todo and time.monotonic() - started > options.time_limit:
                    raise ParseError(_too_long(options, done, total))
        finally:
            # A cancelled or failed run does not start the pages still queued; the ones being
            # read end within the page timeout.
            pool.shutdown(wait=True, cancel_futures=True)
    result.seconds = time.monotonic() - started
    return result


def _too_long(options: OcrOptions, done: int, total: int) -> str:
    minutes = options.time_limit / 60
    return (
        f"Recognising the scan took longer than the limit of {minutes:g} minutes "
        f"(KB_OCR_TIME_LIMIT_SECONDS); {done} of {total} pages were done. Split it into "
        "smaller files, or raise the limit."
    )


def render_page(
    page: pymupdf.Page, options: OcrOptions, folder: str, reason: str = NO_TEXT
) -> tuple[str, float]:
    """The page as a grey image file for Tesseract, and its resolution in dots per inch.

    A page that is one scanned image is rendered at the image's own resolution (resampling
    adds nothing a scanner did not see), unless coarser than 150 dpi in a PDF; an image file
    always at its own pixels (its declared resolution is often wrong); any other page at
    ``options.dpi``. Never larger than 40 megapixels. OcrError for an image too large to
    decode or a page MuPDF cannot draw.
    """
    try:
        infos = page.get_image_info()
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:
        raise OcrError(f"The page could not be drawn ({exc})") from exc
    for info in infos:
        if info["width"] * info["height"] > MAX_IMAGE_PIXELS:
            raise OcrError(
                f"The page's image is {info['width']} x {info['height']} pixels; images over "
                f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels are not read"
            )
    dpi = float(options.dpi)
    native = _native_dpi(page, infos)
    if native and (native >= MIN_NATIVE_DPI or reason == IMAGE):
        dpi = native
    pixels = (page.rect.width * dpi / 72) * (page.rect.height * dpi / 72)
    if pixels > MAX_PIXELS:
        dpi *= math.sqrt(MAX_PIXELS / pixels)
    try:
        pixmap = page.get_pixmap(
            matrix=pymupdf.Matrix(dpi / 72, dpi / 72), colorspace=pymupdf.csGRAY, alpha=False
        )
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:
        raise OcrError(f"The page could not be drawn ({exc})") from exc
    # Tesseract reads the resolution from the file; a wrong one (an image file's) is clamped.
    hint = min(1200, max(70, round(dpi)))
    pixmap.set_dpi(hint, hint)
    path = os.path.join(folder, f"page-{page.number + 1}.png")
    pixmap.save(path)
    return path, dpi


def measure_strokes(path: str, page: OcrPage) -> None:
    """Set each line's mean stroke width (pixels of ink per run of ink along a pixel row):
    bold type is about one and a half times as thick as regular type of its size, which is how
    ``ocr_layout`` tells a heading set bold at body size (Tesseract does not say)."""
    import numpy

    image = pymupdf.Pixmap(path)
    if image.n != 1:
        image = pymupdf.Pixmap(pymupdf.csGRAY, image)
    pixels = numpy.frombuffer(image.samples, dtype=numpy.uint8).reshape(image.h, image.w)
    for line in page.lines:
        x0, y0, x1, y1 = (int(v) for v in line.box)
        ink = pixels[max(0, y0) : y1, max(0, x0) : x1] < 128
        runs = int(ink[:, :1].sum()) + int((ink[:, 1:] & ~ink[:, :-1]).sum())
        line.stroke = float(ink.sum()) / runs if runs else 0.0


def _native_dpi(page: pymupdf.Page, infos: list[dict]) -> float | None:
    """The resolution of the image that fills the page, when one does."""
    for info in infos:
        box = pymupdf.Rect(info["bbox"]) & page.rect
        if abs(box) >= 0.9 * abs(page.rect) and box.width > 0:
            return info["width"] / box.width * 72
    return None
