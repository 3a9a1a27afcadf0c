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

Run: ``.venv/bin/python benchmarks/crafted_files.py [--quick]``. Needs no database.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import re
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller files, same code path")
    quick = parser.parse_args().quick
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    import django

    django.setup()
    budget = 5.0 if quick else 60.0
    if quick:
        measure("xlsx", [10_000, 100_000], [5_000, 10_000, 20_000], budget)
        measure("md", [5_000, 50_000], [2_500, 5_000, 10_000], budget)
    else:
        measure("xlsx", [10_000, 40_000, 700_000, 1_400_000], [10_000, 20_000, 40_000], budget)
        measure("md", [10_000, 40_000, 200_000, 800_000], [5_000, 10_000, 20_000, 40_000], budget)


if __name__ == "__main__":
    main()
