"""Office packages (DOCX, XLSX) opened within a byte budget, whatever their zip declares.

python-docx and openpyxl read a package's parts whole with ``zipfile``, trusting what the zip
says about itself. A zip may lie: a deflate part that truly unpacks to 175 MB passes a check of
the ratio, and ``zipfile`` hands bzip2 and lzma parts to a decompressor without any output limit
(a 2.7 KB file unpacked 2 GB into a worker). So before a parser sees a package:

- only stored and deflate parts are accepted (what Word, Excel and LibreOffice write); a part in
  any other method is refused by name, before anything is unpacked;
- every part is read as a stream, a megabyte at a time, and counted: past ``part_limit`` bytes
  for one part, or ``total_limit`` for the whole package, reading stops and the file is refused;
  a deflate stream cannot produce more than it is read for, so memory stays within the budget;
- a package of more than ``MAX_PARTS`` parts is refused before its directory is read (a 17 MB
  file of 150,000 empty entries took 42 s and 353 MB to open); Word and Excel write tens;
- pictures and embedded files (``word/media/``, ``xl/embeddings/``...) are not unpacked at all:
  no parser reads them, they are kept as empty parts;
- the parts read are packed again, stored, for the parser: what it opens is exactly what was
  counted.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from knowledge.parsing.base import ParseError

METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
METHOD_NAMES = {
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "LZMA",
    9: "Deflate64",
    93: "Zstandard",
    98: "PPMd",
}
SKIPPED_FOLDERS = ("media/", "embeddings/", "activeX/", "printerSettings/")
SKIPPED_PARTS = ("docProps/thumbnail.jpeg", "docProps/thumbnail.png", "docProps/thumbnail.wmf")
CHUNK = 1024 * 1024
MAX_PARTS = 5000
_DIRECTORY_ENTRY = b"PK\x01\x02"  # the signature of each entry of a zip's central directory


def _skipped(name: str) -> bool:
    folder = name.split("/", 1)[1] if "/" in name else ""
    return name in SKIPPED_PARTS or folder.startswith(SKIPPED_FOLDERS)


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.0f} MB"


def read_package(data: bytes, *, part_limit: int, total_limit: int, noun: str) -> bytes:
    """The package's parts, read within the limits and packed again (stored); ``ParseError``
    in plain words when it breaks a rule (``noun``: "Word document", "Excel workbook")."""
    check_part_count(data, noun)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ParseError(
            f"The file is not a valid {noun} (it may be truncated or damaged)"
        ) from exc
    for member in members:
        if member.compress_type not in METHODS:
            method = METHOD_NAMES.get(member.compress_type, f"method {member.compress_type}")
            raise ParseError(
                f"The {noun} stores its part {member.filename} compressed with {method}; "
                "Office packages use deflate only, so it was not opened"
            )
    out = io.BytesIO()
    total = 0
    with archive, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as packed:
        for member in members:
            if member.is_dir():
                continue
            if _skipped(member.filename):
                packed.writestr(member.filename, b"")
                continue
            if member.file_size > part_limit:
                raise _too_big(noun, member.filename, member.file_size, part_limit)
            body = _read_part(archive, member, noun, part_limit)
            total += len(body)
            if total > total_limit:
                raise ParseError(
                    f"The {noun} unpacks to more than {_mb(total_limit)}; it was not read further"
                )
            packed.writestr(member.filename, body)
    return out.getvalue()


def check_part_count(data: bytes, noun: str) -> None:
    """ParseError when the zip ``data`` holds more than ``MAX_PARTS`` entries, before
    ``zipfile`` reads its directory. Counted in the bytes, not taken from the directory's own
    count, which may lie: at least as many signatures as entries (one inside compressed data
    only adds to the count)."""
    entries = data.count(_DIRECTORY_ENTRY)
    if entries > MAX_PARTS:
        raise ParseError(
            f"The {noun} holds {entries} parts; documents have far fewer, and at most "
            f"{MAX_PARTS} are read, so it was not opened"
        )


def _read_part(archive: zipfile.ZipFile, member: zipfile.ZipInfo, noun: str, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        with archive.open(member) as stream:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise _too_big(noun, member.filename, size, limit, more=True)
                parts.append(chunk)
    except ParseError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError) as exc:
        raise ParseError(
            f"The file is not a valid {noun} (it may be truncated or damaged)"
        ) from exc
    return b"".join(parts)


def _too_big(noun: str, name: str, size: int, limit: int, *, more: bool = False) -> ParseError:
    amount = f"more than {_mb(limit)}" if more else _mb(size)
    return ParseError(
        f"The {noun}'s part {name} unpacks to {amount}; at most {_mb(limit)} a part are read, "
        "so it was not opened"
    )
