"""Which parser a file needs, decided by its content and never by its extension alone.

Also the checks that must run before any parser touches the bytes: an empty file, a zip bomb
(a DOCX or XLSX that expands to far more than it weighs), an archive or a program named like a
document, an encrypted Office file. Text that is an OpenAPI (Swagger) description, in JSON or
YAML, is an API description whatever its name. A PNG, JPEG or TIFF image is a scanned document
(recognised with OCR) whatever its name; other images are refused.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from knowledge.parsing.base import ParseError
from knowledge.parsing.openapi_load import load_spec
from knowledge.parsing.safezip import check_part_count

FORMATS = ("docx", "pdf", "xlsx", "markdown", "text", "openapi", "image")
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".jpe", ".tif", ".tiff"}
MARKDOWN_EXTENSIONS = {".md", ".markdown", ".mdown", ".mkd"}
TEXT_EXTENSIONS = {".txt", ".text", ".log", ".csv", ".rst"}
# JSON and YAML files are indexed only as API descriptions: a name like these sends the file to
# the OpenAPI parser, which says in plain words what else it is (invalid, or no API at all).
API_EXTENSIONS = {".json", ".yaml", ".yml"}
# An OpenAPI/Swagger description by content: the version key and "paths" at the top level
# (YAML: at the start of a line; JSON: as a key anywhere, checked again by the parser).
_YAML_API = re.compile(rb"^(?:openapi|swagger)[ \t]*:", re.M)
_YAML_PATHS = re.compile(rb"^paths[ \t]*:", re.M)
_JSON_API = re.compile(rb'"(?:openapi|swagger)"\s*:')
_JSON_PATHS = re.compile(rb'"paths"\s*:\s*\{')

# Images read as scans, by their first bytes.
IMAGE_KINDS = {"png": "PNG", "jpeg": "JPEG", "tiff": "TIFF"}
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
)

# A DOCX/XLSX may not unpack to more than this, nor with a higher ratio than this.
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
MAX_COMPRESSION_RATIO = 200

_MAGIC = [
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"MZ\x90\x00", "a Windows program"),
]

_EXPECTED = {
    ".docx": "a Word document",
    ".pdf": "a PDF",
    ".xlsx": "an Excel workbook",
    ".md": "a Markdown page",
    ".txt": "a text file",
    ".json": "an API description",
    ".yaml": "an API description",
    ".yml": "an API description",
    ".png": "a PNG image",
    ".jpg": "a JPEG image",
    ".jpeg": "a JPEG image",
    ".tif": "a TIFF image",
    ".tiff": "a TIFF image",
}


@dataclass(frozen=True)
class Detected:
    format: str
    warning: str = ""  # e.g. the extension did not match the content


def _what_it_should_be(filename: str) -> str:
    return _EXPECTED.get(PurePosixPath(filename).suffix.lower(), "a document")


def detect_format(data: bytes, filename: str) -> Detected:
    """The format of ``data`` by content; ParseError with plain words when it is none we read."""
    if not data or not data.strip():
        raise ParseError("The file is empty")
    suffix = PurePosixPath(filename).suffix.lower()
    kind = image_kind(data)
    if kind:
        return _image(kind, suffix)
    for magic, name in _MAGIC:
        if data.startswith(magic):
            raise ParseError(
                f"The file is {name}, not {_what_it_should_be(filename)}; it cannot be indexed"
            )
    if data[:1024].lstrip().startswith(b"%PDF-") or b"%PDF-" in data[:1024]:
        return _with_warning("pdf", suffix, {".pdf"})
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        # OLE compound file: an encrypted DOCX/XLSX, or the old binary .doc/.xls.
        if suffix in {".docx", ".xlsx", ".doc", ".xls"}:
            raise ParseError(
                "The file is password-protected or in the old binary Office format (.doc/.xls); "
                "remove the password or save it as .docx/.xlsx"
            )
        raise ParseError("The file is an old binary Office file; save it as .docx or .xlsx")
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _detect_zip(data, filename, suffix)
    if data.startswith(b"PK"):
        raise ParseError(
            f"The file is not a valid {_noun(filename)} (it may be truncated or damaged)"
        )
    return _detect_text(data, suffix)


def _with_warning(fmt: str, suffix: str, expected: set[str]) -> Detected:
    if suffix and suffix not in expected:
        return Detected(
            fmt,
            f"The file is named '{suffix}' but its content is {fmt.upper()}; read as {fmt.upper()}",
        )
    return Detected(fmt)


def image_kind(data: bytes) -> str:
    """ "png", "jpeg" or "tiff" by the file's first bytes; "" for anything else."""
    return next((kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)), "")


def _image(kind: str, suffix: str) -> Detected:
    """A scanned page (or pages): read with OCR, with a warning when named as something else."""
    name = IMAGE_KINDS[kind]
    if suffix and suffix not in IMAGE_EXTENSIONS:
        return Detected(
            "image",
            f"The file is named '{suffix}' but its content is a {name} image; read as a scan",
        )
    return Detected("image")


def _detect_zip(data: bytes, filename: str, suffix: str) -> Detected:
    check_part_count(data, _noun(filename))
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ParseError(
            f"The file is not a valid {_noun(filename)} (it may be truncated or damaged)"
        ) from None
    unpacked = sum(info.file_size for info in infos)
    packed = max(1, sum(info.compress_size for info in infos))
    if unpacked > MAX_UNPACKED_BYTES or unpacked / packed > MAX_COMPRESSION_RATIO:
        raise ParseError(
            f"The file unpacks to {unpacked / 1024 / 1024:.0f} MB from {len(data) / 1024:.0f} KB; "
            "it looks like a zip bomb and was not opened"
        )
    names = {info.filename for info in infos}
    if "word/document.xml" in names:
        return _with_warning("docx", suffix, {".docx", ".docm", ".dotx"})
    if "xl/workbook.xml" in names:
        return _with_warning("xlsx", suffix, {".xlsx", ".xlsm"})
    if "ppt/presentation.xml" in names:
        raise ParseError("The file is a PowerPoint presentation; presentations are not indexed yet")
    raise ParseError(f"The file is a zip archive, not {_what_it_should_be(filename)}")


def _noun(filename: str) -> str:
    return {
        ".docx": "Word document",
        ".xlsx": "Excel workbook",
    }.get(PurePosixPath(filename).suffix.lower(), "Office document")


def _detect_text(data: bytes, suffix: str) -> Detected:
    sample = data[:65536]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM
        return Detected("markdown" if suffix in MARKDOWN_EXTENSIONS else "text")
    controls = sum(1 for b in sample if b < 9 or 13 < b < 32)
    if b"\x00" in sample or controls > len(sample) * 0.01:
        raise ParseError(f"The file is binary data, not {_what_it_should_be('x' + suffix)}")
    if looks_like_openapi(data, suffix):
        return _with_warning("openapi", suffix, API_EXTENSIONS)
    if suffix in API_EXTENSIONS:
        return Detected("openapi")  # not an API description: the parser says what it is
    if suffix in MARKDOWN_EXTENSIONS:
        return Detected("markdown")
    if suffix in {".docx", ".pdf", ".xlsx"} | IMAGE_EXTENSIONS:
        raise ParseError(f"The file is plain text, not {_what_it_should_be('x' + suffix)}")
    return Detected("text")


def looks_like_openapi(data: bytes, suffix: str = "") -> bool:
    """An OpenAPI 3 or Swagger 2 description in JSON or YAML, by its top-level keys. Under
    another name than .json/.yaml the file must also load as one: a wiki page quoting a YAML
    example in a code block stays a page."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        found = _JSON_API.search(data) and _JSON_PATHS.search(data)
    else:
        found = _YAML_API.search(data) and _YAML_PATHS.search(data)
    if not found or suffix in API_EXTENSIONS:
        return bool(found)

    try:
        load_spec(data)
    except ParseError:
        return False
    return True
