"""Scans made in the test from known text: a page typeset with PyMuPDF, then drawn as pixels.

What goes in is known word for word, so a test can ask for a sentence it put on the page. The
pages are clean (no noise, no skew): they test the pipeline, not Tesseract's accuracy, which
``benchmarks/ocr.py`` measures.
"""

from __future__ import annotations

import pymupdf

CSS = "* {font-family: sans-serif; font-size: 13pt;} td {padding: 2pt 10pt;}"


def typeset(html: str) -> pymupdf.Document:
    """One A4 page holding ``html`` (MuPDF's own fonts: Latin and Cyrillic)."""
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    page.insert_htmlbox(pymupdf.Rect(60, 60, 535, 780), html, css=CSS)
    return document


def page_png(html: str, *, dpi: int = 300) -> bytes:
    """A PNG of the page ``html`` makes, as a scanner would give it (grey, no text layer)."""
    document = typeset(html)
    return document[0].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("png")


def scanned_pdf(pages: list[str], *, dpi: int = 200) -> bytes:
    """A PDF of one image per page and no text layer: what a scanner's "scan to PDF" gives."""
    scan = pymupdf.open()
    for html in pages:
        image = page_png(html, dpi=dpi)
        page = scan.new_page(width=595, height=842)
        page.insert_image(page.rect, stream=image)
    return scan.tobytes()
