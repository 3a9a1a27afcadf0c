"""Files crafted to make a parser backtrack, at growing sizes: the time of the patterns the
parsers used before issue 40 beside the parsers' time now.

- XLSX: a cell with an attribute of N cell references (" r='B2'", every 32nd another one), which
  the old formula-cell pattern of ``knowledge.parsing.xlsx`` scanned quadratically (43 s for a
  file of 5.6 KB); now the sheet's tags are read one at a time.
- Markdown: a line of N "{%a " with no "%}", which the old GitBook tag pattern of
  ``knowledge.parsing.markdown`` scanned quadratically; now the line is cut by position.

Printed per kind: the size of the file and of what a parser reads (the sheet's XML, the line),
the old pattern's time alone (kept here for the comparison only; sizes past the budget are
skipped, their time is the last one's times the square of the growth), and the whole parse
now (``parse_document``, openpyxl's own reading of the sheet included).

Issue 50's files, each size in a child process of its own (its time and peak resident memory;
an address-space limit of ``--memory-mb`` and a time limit of ``--seconds`` stand in for the
kernel's OOM killer and the ingest's limit, so a run on an older tree ends):

- **one word**: a heading and one word of N letters (a minified line, a base64 blob), read as
  the ingest reads it: parse, chunk, and the chunks' vectors from the bundled embedder
  (``knowledge.ingest.pipeline``'s steps, no database); printed with the chunks made and the
  longest chunk;
- **nested div**: a Markdown page of N nested ``<div>``, parsed;
- **empty entries**: a DOCX with N empty zip entries added, parsed.

Run: ``.venv/bin/python benchmarks/crafted_files.py [--quick] [--only backtrack|issue50]``.
Needs no database.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The patterns as they were (knowledge/parsing/xlsx.py and markdown.py before issue 40).
OLD_FORMULA_CELL = re.compile(
    rb"<(?:\w+:)?c\b[^>]*?\br=[\"']([A-Z]+[0-9]+)[\"'][^>]*>\s*"
    rb"<(?:\w+:)?f\b(?:[^>]*/>|[^>]*>[^<]*</(?:\w+:)?f>)\s*"
    rb"(?:<(?:\w+:)?v>([^<]*)</(?:\w+:)?v>)?"
)
OLD_GITBOOK_TAG = re.compile(r"\{%-?\s*(\w[\w-]*)((?:[^%]|%(?!\}))*?)-?%\}")


def workbook(repeats: int) -> tuple[bytes, bytes]:
    """(the .xlsx, its sheet's XML) with a first cell of ``repeats`` references."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Check", "Result", "Total"])
    sheet.append(["Login", "Pass", "=1+1"])
    plain = io.BytesIO()
    book.save(plain)
    pick = random.Random(40)
    references = "".join(
        f" r='{chr(65 + pick.randrange(26))}{pick.randrange(1, 999)}'" if i % 32 == 0 else " r='B2'"
        for i in range(repeats)
    )
    crafted, xml = io.BytesIO(), b""
    with (
        zipfile.ZipFile(plain) as source,
        zipfile.ZipFile(crafted, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                attribute = b'<c x="' + references.encode() + b'" r="A1"'
                data = xml = data.replace(b'<c r="A1"', attribute, 1)
            target.writestr(item, data)
    return crafted.getvalue(), xml


def page(repeats: int) -> tuple[bytes, str]:
    line = "{%a " * repeats
    return ("# Release notes\n\nShipped on Friday.\n\n" + line).encode(), line


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def measure(kind: str, sizes: list[int], old_sizes: list[int], budget: float) -> None:
    from knowledge.parsing.registry import parse_document

    make = workbook if kind == "xlsx" else page
    old = (
        (lambda part: list(OLD_FORMULA_CELL.finditer(part)))
        if kind == "xlsx"
        else (lambda part: OLD_GITBOOK_TAG.sub("", part))
    )
    print(f"\n{kind}: repeats, file KB, part KB, old pattern s, parse now s")
    last: tuple[int, float] | None = None
    for repeats in sorted(set(sizes) | set(old_sizes)):
        data, part = make(repeats)
        before = "-"
        if repeats in old_sizes:
            if last is None or last[1] * (repeats / last[0]) ** 2 <= budget:
                seconds = timed(lambda part=part: old(part))
                last, before = (repeats, seconds), f"{seconds:.2f}"
            else:
                guess = last[1] * (repeats / last[0]) ** 2
                before = f"~{guess:.0f} (skipped)"
        now = timed(lambda data=data: parse_document(data, filename=f"crafted.{kind}"))
        print(
            f"{repeats:>9} {len(data) / 1024:>9.1f} {len(part) / 1024:>9.1f} {before:>16} {now:>8.2f}"
        )


def one_word(letters: int) -> bytes:
    return ("Выгрузка\n\n" + "QmFzZTY0" * (letters // 8) + "\n").encode()


def nested_divs(depth: int) -> bytes:
    return ("# Страница\n\nТекст.\n\n" + "<div>" * depth + "глубоко" + "</div>" * depth).encode()


def empty_entries(count: int) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("Короткий документ.")
    plain, crafted = io.BytesIO(), io.BytesIO()
    document.save(plain)
    with (
        zipfile.ZipFile(plain) as source,
        zipfile.ZipFile(crafted, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for item in source.infolist():
            target.writestr(item, source.read(item.filename))
        for number in range(count):
            target.writestr(f"e/{number}", b"", compress_type=zipfile.ZIP_STORED)
    return crafted.getvalue()


CASES = {"word": (one_word, "txt"), "divs": (nested_divs, "md"), "entries": (empty_entries, "docx")}


def run_case(kind: str, size: int) -> dict:
    """In this (child) process: one file of ``kind`` and ``size``, read as the ingest reads it."""
    from knowledge.parsing.registry import parse_document

    make, suffix = CASES[kind]
    data = make(size)
    if kind == "word":  # the model loaded before the clock starts, as a worker has it
        from knowledge.embedding import get_embedder

        get_embedder().embed_documents(["warm"])
    started = time.perf_counter()
    result: dict = {"file_kb": round(len(data) / 1024)}
    try:
        parsed = parse_document(data, filename=f"crafted.{suffix}")
        result["outcome"] = f"parsed, {len(parsed.blocks)} blocks"
        if kind == "word":
            from knowledge.ingest.pipeline import _chunk, embedding_text

            drafts = _chunk(parsed)
            texts = [embedding_text(parsed.title, d) for d in drafts]
            for first in range(0, len(texts), 32):
                get_embedder().embed_documents(texts[first : first + 32])
            longest = max(len(d.text) for d in drafts)
            result["outcome"] = f"{len(drafts)} chunks embedded, longest {longest} characters"
    except Exception as exc:  # noqa: BLE001 - what the file did is the figure
        result["outcome"] = f"{type(exc).__name__}: {str(exc)[:90]}"
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return result


def measure_in_children(kind: str, sizes: list[int], memory_mb: int, seconds: float) -> None:
    print(f"\n{kind}: size, file KB, seconds, peak MB, outcome")
    for size in sizes:
        command = [
            sys.executable,
            __file__,
            "--case",
            kind,
            str(size),
            "--memory-mb",
            str(memory_mb),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=seconds)
            lines = done.stdout.strip().splitlines()
            row = json.loads(lines[-1]) if lines else {"outcome": f"died ({done.returncode})"}
        except subprocess.TimeoutExpired:
            row = {"outcome": f"stopped after {seconds:.0f} s"}
        print(
            f"{size:>9} {row.get('file_kb', '-'):>9} {row.get('seconds', '-'):>8} "
            f"{row.get('peak_mb', '-'):>7}  {row['outcome']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller files, same code path")
    parser.add_argument("--only", choices=["backtrack", "issue50"], default=None)
    parser.add_argument("--memory-mb", type=int, default=4096, help="a child's address space")
    parser.add_argument("--seconds", type=float, default=900, help="a child's time")
    parser.add_argument("--case", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    if args.case:
        limit = args.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import django

    django.setup()
    if args.case:
        print(json.dumps(run_case(args.case[0], int(args.case[1]))))
        return
    quick = args.quick
    budget = 5.0 if quick else 60.0
    if args.only != "issue50":
        if quick:
            measure("xlsx", [10_000, 100_000], [5_000, 10_000, 20_000], budget)
            measure("md", [5_000, 50_000], [2_500, 5_000, 10_000], budget)
        else:
            measure("xlsx", [10_000, 40_000, 700_000, 1_400_000], [10_000, 20_000, 40_000], budget)
            measure(
                "md", [10_000, 40_000, 200_000, 800_000], [5_000, 10_000, 20_000, 40_000], budget
            )
    if args.only == "backtrack":
        return
    words = [20_000, 100_000] if quick else [100_000, 500_000, 1_000_000, 2_000_000, 5_000_000]
    divs = [1_000, 10_000] if quick else [100, 1_000, 10_000, 100_000]
    entries = [1_000, 10_000] if quick else [1_000, 10_000, 50_000, 150_000]
    measure_in_children("word", words, args.memory_mb, args.seconds)
    measure_in_children("divs", divs, args.memory_mb, args.seconds)
    measure_in_children("entries", entries, args.memory_mb, args.seconds)


if __name__ == "__main__":
    main()
