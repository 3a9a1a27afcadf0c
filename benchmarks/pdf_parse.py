"""PDF parsing speed and yield on the 20 SEC 10-Q filings (about 1000 pages).

For each table mode it parses every filing with ``PdfParser`` and prints per filing and in
total: pages, wall and CPU seconds per page, tables, tables with a non-empty header row,
headings, and the share of blocks that carry their page. Modes:

- ``auto`` (the parser's default): ruled lines first, the layout model where they leave most
  of a page's numbers outside any table,
- ``layout``: find_tables with PyMuPDF's layout model on every tabular page,
- ``lines``: find_tables on ruled lines only (``use_layout=False``),
- ``none``: no table detection, the cost of text, headings and paragraphs alone.

``--gate-audit`` also runs table detection on the pages the cheap "looks tabular" gate skips
and counts the tables that would have been kept there: the price of the gate in tables.

Run: ``.venv/bin/python benchmarks/pdf_parse.py [layout|lines|none ...] [--gate-audit] [--quick]``
(``--quick``: the first three pages of two filings).
The machine's load shows in wall time; CPU time is the steadier figure to compare modes by.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from _setup import ROOT, arguments, settings_only

sys.path.insert(0, str(ROOT))
settings_only()  # the parser reads its limits from the settings

import pymupdf  # noqa: E402

from knowledge.parsing.pdf import PdfParser  # noqa: E402
from knowledge.parsing.pdf_tables import find_page_tables, looks_tabular  # noqa: E402

DOCS = ROOT.parent / "shared" / "corpus" / "sec10q_en" / "data" / "v1" / "docs"
MODES = ("auto", "layout", "lines", "none")
QUICK_PAGES = 3  # of each of the first two filings under --quick


def filings(quick: bool) -> list[tuple[str, bytes]]:
    """(name, PDF) of every filing, or under ``--quick`` of the first pages of two."""
    paths = sorted(DOCS.glob("*.pdf"))
    if not quick:
        return [(p.name, p.read_bytes()) for p in paths]
    out = []
    for path in paths[:2]:
        with pymupdf.open(path) as document, pymupdf.open() as part:
            part.insert_pdf(document, from_page=0, to_page=QUICK_PAGES - 1)
            out.append((path.name, part.tobytes()))
    return out


def run(mode: str, documents: list[tuple[str, bytes]]) -> None:
    parser = PdfParser(tables="" if mode == "none" else mode)
    totals = dict.fromkeys(
        ("pages", "wall", "cpu", "tables", "headed", "blocks", "paged", "headings"), 0
    )
    print(f"\n== mode {mode}")
    print(f"{'filing':18} {'pages':>5} {'s/page':>7} {'cpu/p':>6} {'tables':>6} {'headed':>6}")
    for name, data in documents:
        wall, cpu = time.perf_counter(), time.process_time()
        doc = parser.parse(data, filename=name)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        pages = doc.metadata["pages"]
        tables = [b for b in doc.blocks if b.kind == "table"]
        headed = sum(1 for b in tables if b.table and any(b.table.header))
        totals["pages"] += pages
        totals["wall"] += wall
        totals["cpu"] += cpu
        totals["tables"] += len(tables)
        totals["headed"] += headed
        totals["blocks"] += len(doc.blocks)
        totals["paged"] += sum(1 for b in doc.blocks if b.page)
        totals["headings"] += sum(1 for b in doc.blocks if b.kind == "heading")
        print(
            f"{Path(name).stem:18} {pages:5} {wall / pages:7.3f} {cpu / pages:6.3f} "
            f"{len(tables):6} {headed:6}",
            flush=True,
        )
    t = totals
    print(
        f"TOTAL {mode}: {t['pages']} pages in {t['wall']:.0f} s wall ({t['pages'] / t['wall']:.2f}"
        f" pages/s, {t['wall'] / t['pages']:.3f} s/page; CPU {t['cpu'] / t['pages']:.3f} s/page);"
        f" {t['tables']} tables, {t['headed']} with a header row"
        f" ({t['headed'] / max(1, t['tables']):.0%}); {t['headings']} headings;"
        f" blocks with a page: {t['paged']}/{t['blocks']} ({t['paged'] / t['blocks']:.1%})"
    )


def gate_audit(documents: list[tuple[str, bytes]]) -> None:
    """Tables the default finder keeps on pages the gate skips, and the time the gate saves."""
    skipped = kept = 0
    saved = 0.0
    gated = 0
    for _, data in documents:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            for page in doc:
                words = page.get_text("words")
                if looks_tabular(words):
                    gated += 1
                    continue
                skipped += 1
                start = time.perf_counter()
                kept += len(find_page_tables(page, words, strategy="auto"))
                saved += time.perf_counter() - start
    print(
        f"\n== gate audit: {gated} pages looked tabular, {skipped} were skipped; detection on the"
        f" skipped pages would take {saved:.0f} s ({saved / max(1, skipped):.3f} s/page) and"
        f" keep {kept} tables"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modes", nargs="*", help=f"some of {', '.join(MODES)} (default: all)")
    parser.add_argument("--gate-audit", action="store_true")
    args = arguments(parser)
    if set(args.modes) - set(MODES):
        parser.error(f"modes are {', '.join(MODES)}")
    documents = filings(args.quick)
    for name in args.modes or list(MODES):
        run(name, documents)
    if args.gate_audit or args.quick:
        gate_audit(documents)


if __name__ == "__main__":
    main()
