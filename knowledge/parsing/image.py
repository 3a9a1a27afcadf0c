"""PNG, JPEG and TIFF images (a TIFF of several pages too) as scanned documents.

The image becomes a PDF of one page per frame, each page sized so that its image is drawn at
its own pixels, and that PDF is read as a scan (``PdfParser(scanned=True)``): every page is
recognised, with the same layout, tables, headings and page numbers as a scanned PDF. MuPDF
reads the image's header before any pixel, so a damaged file is refused in plain words and an
image too large to decode is never decoded.
"""

from __future__ import annotations

import pymupdf

from knowledge.parsing.base import ParsedDocument, ParseError
from knowledge.parsing.detect import IMAGE_KINDS, image_kind
from knowledge.parsing.ocr import OcrOptions, Progress
from knowledge.parsing.pdf import PdfParser
from knowledge.parsing.scan import MAX_IMAGE_PIXELS

OCR_OFF = "The file is an image and OCR is switched off here (KB_OCR); it cannot be indexed"


class ImageParser:
    """Reads an image file as a scanned document (see the module docstring)."""

    def __init__(self, *, ocr: OcrOptions | None = None, progress: Progress | None = None) -> None:
        self.ocr = ocr
        self.progress = progress

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        if self.ocr is None:
            raise ParseError(OCR_OFF)
        pdf = image_to_pdf(data)
        document = PdfParser(ocr=self.ocr, progress=self.progress, scanned=True).parse(
            pdf, filename=filename
        )
        document.metadata["image"] = IMAGE_KINDS[image_kind(data)]
        return document


def image_to_pdf(data: bytes) -> bytes:
    """A PDF of the image's frames, one page each; ParseError for a damaged or huge image."""
    kind = image_kind(data)
    name = IMAGE_KINDS.get(kind, "image")
    damaged = f"The file is a damaged {name} image (it may be truncated); it cannot be read"
    try:
        image = pymupdf.open(stream=data, filetype=kind or None)
        if image.page_count == 0:
            raise ParseError(damaged)
        for page in image:
            for info in page.get_image_info():
                if info["width"] * info["height"] > MAX_IMAGE_PIXELS:
                    raise ParseError(
                        f"The image is {info['width']} x {info['height']} pixels; images over "
                        f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels are not read"
                    )
        return image.convert_to_pdf()
    except ParseError:
        raise
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:
        raise ParseError(damaged) from exc
