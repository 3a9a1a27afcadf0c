"""From bytes to a ParsedDocument: detect the format by content, then run its parser.

Scanned pages and images are recognised with the OCR settings (``KB_OCR_*``); ``progress(done,
total)`` hears of each page recognised (the ingest records it and stops there when cancelled).
"""

from __future__ import annotations

from knowledge.parsing.base import ParsedDocument, ParseError, Parser, detect_language
from knowledge.parsing.detect import detect_format
from knowledge.parsing.ocr import Progress


def parser_for(fmt: str, progress: Progress | None = None) -> Parser:
    # Imported lazily: a worker that never sees a PDF never loads PyMuPDF.
    if fmt == "docx":
        from knowledge.parsing.docx import DocxParser

        return DocxParser()
    if fmt == "pdf":
        from knowledge.parsing.ocr import OcrOptions
        from knowledge.parsing.pdf import PdfParser

        return PdfParser(ocr=OcrOptions.from_settings(), progress=progress)
    if fmt == "image":
        from knowledge.parsing.image import ImageParser
        from knowledge.parsing.ocr import OcrOptions

        return ImageParser(ocr=OcrOptions.from_settings(), progress=progress)
    if fmt == "xlsx":
        from knowledge.parsing.xlsx import XlsxParser

        return XlsxParser()
    if fmt == "markdown":
        from knowledge.parsing.markdown import MarkdownParser

        return MarkdownParser()
    if fmt == "openapi":
        from knowledge.parsing.openapi import OpenApiParser

        return OpenApiParser()
    if fmt == "text":
        from knowledge.parsing.text import TextParser

        return TextParser()
    raise ParseError(f"No parser for the format {fmt!r}")


def parse_document(
    data: bytes, filename: str, *, progress: Progress | None = None
) -> ParsedDocument:
    """Parse ``data``; ParseError (plain words) for anything that is not a readable document."""
    detected = detect_format(data, filename)
    document = parser_for(detected.format, progress).parse(data, filename=filename)
    if not any(block.text.strip() for block in document.blocks):
        raise ParseError("The document contains no text")
    if not any(block.text.strip() for block in document.blocks if block.kind != "heading"):
        # A wiki's section page often holds its title only: kept, searchable by that title.
        document.warnings.append("The document has headings only, no body text")
    if detected.warning:
        document.warnings.append(detected.warning)
    document.metadata["format"] = detected.format
    if document.language == "simple":
        document.language = detect_language(" ".join(b.text for b in document.blocks[:400]))
    return document
