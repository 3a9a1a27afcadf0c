"""OCR: scans made from documents with a text layer, read back and compared with that layer.

The scans are synthetic and clean: each page of a PDF with a text layer is drawn to a grey
image at 200 and 300 dpi (PyMuPDF) and wrapped as an image-only PDF, so the text layer is the
exact reference and nothing else (no noise, skew or paper) is measured. The sets:

- **English**: the 20 SEC 10-Q filings (``../shared/corpus/sec10q_en``, 1037 pages, many tables);
- **Russian**: the ПМИ and the ТЗ (DOCX of ``specs_hse_app_ru``, opened and laid out as PDF by
  PyMuPDF) and a sample of QA Bible wiki pages (Markdown, laid out as PDF with PyMuPDF's Story).

Printed:

1. **Character error rate** per language and dpi, on a fixed sample (every ``--every``-th page
   of each SEC filing; every page of the Russian set): the edit distance (rapidfuzz) between the
   page's text layer and what the pipeline's own OCR calls (``scan.render_page`` and
   ``ocr.recognise``, the KB_OCR_* defaults) read from the scan of that page, over the length
   of the text layer. Both sides are the page's words in visual rows (top to bottom, left to
   right, the same grouping for both) with typographic quotes and dashes made plain, so that
   the reading order of columns and tables is not counted as recognition errors.
2. **A 50-page scan through the normal ingestion** (``manage.py ingest`` in this process:
   registration, OCR of two pages at a time, layout, chunking, embedding, store), the first 50
   pages of the 300 dpi SEC scans: wall time, pages per minute of the recognition, peak memory
   (the process and its Tesseract children together, sampled every 0.1 s).
3. **SEC 10-Q retrieval** on scanned filings (300 dpi) beside their text layer:
   ``retrieval_sec.py``'s final ranking (filing in the top 5, a reference figure in the top 10).
   Recognising all 1,037 pages takes an hour or more on two shared cores, so both knowledge
   bases hold the pages the questions need, the same on both sides (the first three pages of
   each filing and every page whose text layer holds a reference figure of a question about
   it: 519 pages of the 20 filings, under their own names); in one the five 2023 Q3 filings
   are scans (153 pages recognised), the other fifteen text layer, in the other all twenty
   are text layer; asked: the 67 questions that name a 2023 Q3 filing. Each knowledge base in
   a data folder of its own (``var/bench-ocr-sec-text``, ``var/bench-ocr-sec-scans``).

The load on the portal during an OCR ingest is ``load.py --during-ocr``.

Run: ``.venv/bin/python benchmarks/ocr.py [--every 10] [--wiki 30] [--skip-retrieval] [--quick]``
(``--quick``: one page of each language at 300 dpi, a 2-page scan, one 2023 Q3 filing's first two
pages in the retrieval part, its scans kept apart in ``var/bench-quick-ocr-scans``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import threading
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _setup import CORPUS, ROOT, arguments

SEC = CORPUS / "sec10q_en" / "data" / "v1" / "docs"
SPECS = CORPUS / "specs_hse_app_ru"
WIKI = CORPUS / "wiki_qa_bible_ru"
SCANS = ROOT / "var" / "bench-ocr-scans"
RUSSIAN_DOCX = ["Программа и методика испытаний.docx", "ТЗ-Шакруа-Максим-БПИ182.docx"]
_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "−": "-"})
_PLAIN.update({ord("\u00ad"): None, ord("\xa0"): " "})


# --- the sets ----------------------------------------------------------------------------------


def russian_set(wiki_pages: int) -> list[tuple[str, bytes]]:
    """(name, PDF with a text layer) of the ПМИ, the ТЗ and a sample of wiki pages."""
    import pymupdf

    out = []
    for name in RUSSIAN_DOCX:
        with pymupdf.open(SPECS / name) as docx:
            out.append((Path(name).stem + ".pdf", docx.convert_to_pdf()))
    pages = sorted(p for p in WIKI.rglob("*.md") if p.parent != WIKI)
    step = max(1, len(pages) // max(1, wiki_pages))
    for path in pages[::step][:wiki_pages]:
        out.append((path.stem + ".pdf", markdown_pdf(path.read_text(encoding="utf-8"))))
    return out


def markdown_pdf(text: str) -> bytes:
    """A wiki page laid out on A4 pages by PyMuPDF's Story (HTML from markdown-it)."""
    import io

    import pymupdf
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(text)
    css = "* {font-family: sans-serif; font-size: 11pt;} td, th {border: 1px solid #999;}"
    story = pymupdf.Story(html=html, user_css=css)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    more = True
    while more:
        device = writer.begin_page(pymupdf.paper_rect("a4"))
        more, _ = story.place(pymupdf.Rect(50, 50, 545, 792))
        story.draw(device)
        writer.end_page()
    writer.close()
    return buffer.getvalue()


def scan(pdf: bytes, dpi: int, pages: list[int] | None = None) -> bytes:
    """An image-only PDF of ``pdf``'s pages (0-based ``pages``, all by default) drawn at dpi."""
    import pymupdf

    source = pymupdf.open(stream=pdf, filetype="pdf")
    out = pymupdf.open()
    for number in pages if pages is not None else range(source.page_count):
        page = source[number]
        image = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("png")
        target = out.new_page(width=page.rect.width, height=page.rect.height)
        target.insert_image(target.rect, stream=image)
    return out.tobytes(garbage=3, deflate=True)


# --- 1. character error rate -------------------------------------------------------------------


def rows_text(words: list[tuple[float, float, float, float, str]]) -> str:
    """Words in visual rows (a word joins the row whose middle band holds its middle)."""
    rows: list[list[tuple[float, float, float, float, str]]] = []
    for word in sorted(words, key=lambda w: (w[1] + w[3]) / 2):
        middle = (word[1] + word[3]) / 2
        if rows:
            top = min(w[1] for w in rows[-1])
            bottom = max(w[3] for w in rows[-1])
            if top <= middle <= bottom:
                rows[-1].append(word)
                continue
        rows.append([word])
    text = "\n".join(" ".join(w[4] for w in sorted(row, key=lambda w: w[0])) for row in rows)
    return normalise(text)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN)
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def prepare_page(pdf: bytes, number: int, dpi: int, folder: str) -> tuple[str, str, float]:
    """The page's text layer in visual rows, and its scan at ``dpi`` rendered for Tesseract as
    the pipeline renders it (path, dpi). In the calling thread: MuPDF is used from one thread."""
    import pymupdf

    from knowledge.parsing.ocr import OcrOptions
    from knowledge.parsing.scan import render_page

    with pymupdf.open(stream=pdf, filetype="pdf") as source:
        reference = rows_text([w[:5] for w in source[number].get_text("words")])
    with pymupdf.open(stream=scan(pdf, dpi, [number]), filetype="pdf") as scanned:
        path, used = render_page(scanned[0], OcrOptions(), folder)
    return reference, path, used


def read_page(reference: str, path: str, dpi: float) -> tuple[int, int, float, bool]:
    """(reference characters, edits, seconds, failed) of Tesseract's reading of one rendered
    page; a page Tesseract fails on (the page timeout) counts as all wrong."""
    from rapidfuzz.distance import Levenshtein

    from knowledge.parsing.ocr import OcrError, OcrOptions, recognise

    started = time.perf_counter()
    try:
        result = recognise(path, dpi, OcrOptions(nice=int(os.environ.get("KB_OCR_NICE", "10"))))
    except OcrError:
        return len(reference), len(reference), time.perf_counter() - started, True
    finally:
        os.remove(path)
    seconds = time.perf_counter() - started
    scale = 72.0 / result.dpi
    words = [(*(v * scale for v in w.box), w.text) for line in result.lines for w in line.words]
    return len(reference), Levenshtein.distance(reference, rows_text(words)), seconds, False


def cer(args) -> dict:
    import tempfile

    import pymupdf

    english = []
    for path in sorted(SEC.glob("*.pdf"))[: 1 if args.quick else None]:
        data = path.read_bytes()
        with pymupdf.open(stream=data, filetype="pdf") as document:
            english += [(path.name, data, n) for n in range(0, document.page_count, args.every)]
    russian = []
    for name, data in russian_set(args.wiki):
        with pymupdf.open(stream=data, filetype="pdf") as document:
            russian += [(name, data, n) for n in range(document.page_count)]
    if args.quick:
        english, russian = english[:1], russian[:1]
    results = {}
    sets = (("English (SEC 10-Q)", english), ("Russian (ПМИ, ТЗ, wiki)", russian))
    sets = tuple(s for s in sets if s[0][:2].lower() in args.languages)
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(2) as pool:
        for dpi in args.dpi:
            for language, pages in sets:
                started = time.perf_counter()
                # As the pipeline does: pages drawn here, read by two Tesseract processes.
                futures = []
                for index, (_, data, number) in enumerate(pages):
                    own = os.path.join(folder, str(index))  # each page's image a folder of its own
                    os.makedirs(own, exist_ok=True)
                    futures.append(pool.submit(read_page, *prepare_page(data, number, dpi, own)))
                measured = [f.result() for f in futures]
                wall = time.perf_counter() - started
                chars = sum(m[0] for m in measured)
                edits = sum(m[1] for m in measured)
                per_page = sorted(m[1] / max(1, m[0]) for m in measured if m[0])
                results[f"{language} {dpi} dpi"] = {
                    "pages": len(pages),
                    "documents": len({p[0] for p in pages}),
                    "characters": chars,
                    "cer": edits / max(1, chars),
                    "median_page_cer": per_page[len(per_page) // 2] if per_page else 0.0,
                    "worst_page_cer": per_page[-1] if per_page else 0.0,
                    "ocr_seconds_per_page": sum(m[2] for m in measured) / max(1, len(measured)),
                    "pages_per_minute_two_at_a_time": 60 * len(pages) / wall,
                    "failed_pages": sum(1 for m in measured if m[3]),
                }
                # Each set as it is measured: a long run that stops later keeps what it had.
                print(
                    json.dumps({language + f" {dpi} dpi": results[f"{language} {dpi} dpi"]}),
                    file=sys.stderr,
                )
    return results


# --- 2. a 50-page scan through the normal ingestion --------------------------------------------


class PeakMemory(threading.Thread):
    """The largest resident memory of this process plus its children, sampled every 0.1 s."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        import psutil

        self.process = psutil.Process()
        self.peak_total = self.peak_self = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        import psutil

        while not self.stopped.wait(0.1):
            try:
                own = self.process.memory_info().rss
                children = sum(c.memory_info().rss for c in self.process.children(recursive=True))
            except psutil.Error:
                continue
            self.peak_self = max(self.peak_self, own)
            self.peak_total = max(self.peak_total, own + children)


def ingest50(args) -> dict:
    from _setup import setup, teardown

    pdf = scan(_first_pages(2 if args.quick else 50), 300)
    setup("ocr-50", fresh=True)
    try:
        from django.core.management import call_command

        from knowledge.models import DocumentVersion

        folder = _scans(args) / "fifty"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "sec-50-pages-300dpi.pdf"
        path.write_bytes(pdf)
        memory = PeakMemory()
        memory.start()
        started = time.perf_counter()
        call_command("ingest", str(path), source="Scans", json=True, stdout=io.StringIO())
        wall = time.perf_counter() - started
        memory.stopped.set()
        version = DocumentVersion.objects.get()
        return {
            "source": "the first pages of the SEC filings in name order",
            "status": version.status,
            "error": version.error,
            "wall_seconds": wall,
            "parse_seconds": version.timings.get("parse_s"),
            "ocr_seconds": version.ocr.get("seconds"),
            "pages": len(version.ocr.get("pages", [])),
            "chunks": version.chunk_count,
            "mean_confidence": _mean([p["confidence"] for p in version.ocr.get("pages", [])]),
            "peak_rss_mb_with_tesseract": memory.peak_total / 2**20,
            "peak_rss_mb_ingest_process": memory.peak_self / 2**20,
        }
    finally:
        teardown()


def _first_pages(count: int) -> bytes:
    """The first ``count`` pages of the SEC filings, in file-name order, as one PDF."""
    import pymupdf

    out = pymupdf.open()
    for path in sorted(SEC.glob("*.pdf")):
        with pymupdf.open(path) as document:
            take = min(document.page_count, count - out.page_count)
            out.insert_pdf(document, from_page=0, to_page=take - 1)
        if out.page_count >= count:
            break
    return out.tobytes()


def _mean(values: list) -> float:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else 0.0


# --- 3. SEC retrieval, scanned filings beside the text layer -----------------------------------


def needed_pages(path: Path, questions: list[dict]) -> list[int]:
    """The pages of a filing the questions need (0-based): its first three (cover, contents)
    and every page whose text layer holds a reference figure of a question about it."""
    import pymupdf
    from retrieval_sec import filing_hit, has_figure

    wanted: set[str] = set()
    for question in questions:
        if filing_hit([path.name], question["patterns"]):
            wanted |= question["figures"]
    with pymupdf.open(path) as document:
        keep = set(range(min(3, document.page_count)))
        keep |= {page.number for page in document if has_figure(page.get_text(), wanted)}
    return sorted(keep)


SCANNED_FILINGS = ("2023 Q3",)  # the filings scanned in the retrieval part (a name prefix)


def retrieval(args) -> dict:
    """In a data folder of its own: the 20 filings' needed pages, the 2023 Q3 ones scanned
    (``retrieval-scans``) or all as text layer (``retrieval-text``); the questions naming a
    2023 Q3 filing asked."""
    import pymupdf
    from _setup import setup, teardown
    from retrieval_sec import filing_hit, load_questions, portal_lists

    scanned = args.part == "retrieval-scans"
    questions = load_questions()
    asked = [q for q in questions if all(p.startswith("*2023 Q3 ") for p in q["patterns"])]
    filings = sorted(SEC.glob("*.pdf"))
    if args.quick:  # one scanned filing, its questions
        filings = [p for p in filings if p.name.startswith(SCANNED_FILINGS)][:1]
        asked = [q for q in asked if filing_hit([filings[0].name], q["patterns"])]
    folder = _scans(args) / ("sec-needed-2023q3-scanned" if scanned else "sec-needed-text")
    folder.mkdir(parents=True, exist_ok=True)
    pages = recognised = 0
    for path in filings:
        needed = needed_pages(path, questions)[: 2 if args.quick else None]
        pages += len(needed)
        target = folder / path.name  # the filing's own name: the questions name filings
        as_scan = scanned and path.name.startswith(SCANNED_FILINGS)
        recognised += len(needed) if as_scan else 0
        if target.exists():
            continue
        if as_scan:
            target.write_bytes(scan(path.read_bytes(), 300, needed))
        else:
            with pymupdf.open(path) as document, pymupdf.open() as out:
                for number in needed:
                    out.insert_pdf(document, from_page=number, to_page=number)
                target.write_bytes(out.tobytes())
    setup("ocr-sec-scans" if scanned else "ocr-sec-text", fresh=True)
    try:
        from django.core.management import call_command

        from knowledge.models import DocumentVersion

        started = time.perf_counter()
        call_command("ingest", str(folder), source="SEC 10-Q", json=True, stdout=io.StringIO())
        timing = {"ingest_seconds": time.perf_counter() - started, "pages": pages}
        versions = DocumentVersion.objects.all()
        timing["ready"] = versions.filter(status="ready").count()
        timing["recognised_pages"] = sum(len(v.ocr.get("pages", [])) for v in versions)
        timing["ocr_seconds"] = sum(v.ocr.get("seconds", 0) for v in versions)
        timing["scans"] = [
            {
                "filing": v.filename,
                "pages": len(v.ocr["pages"]),
                "ocr_seconds": v.ocr.get("seconds", 0),
                "parse_seconds": v.timings.get("parse_s", 0),
                "total_seconds": sum(
                    v.timings.get(k, 0) for k in ("parse_s", "chunk_s", "embed_s", "store_s")
                ),
                "confidence": _mean([p["confidence"] for p in v.ocr["pages"]]),
            }
            for v in versions.order_by("filename")
            if v.ocr.get("pages")
        ]
        timing["questions"] = len(asked)
        timing["with_figures"] = sum(1 for q in asked if q["figures"])
        lists = portal_lists(asked)
        final = lists["portal final (defaults, k=10)"]
        fusion = lists["portal calibrated (no cap/threshold)"]
        return {**timing, "final": final[:2], "fusion": fusion[:2]}
    finally:
        teardown()


# --- the report --------------------------------------------------------------------------------


def _scans(args) -> Path:
    """Where the scans are kept between runs; a quick run's apart (fewer pages, same names)."""
    return SCANS.with_name("bench-quick-ocr-scans") if args.quick else SCANS


def run_part(part: str, args) -> dict:
    command = [sys.executable, str(Path(__file__)), "--part", part, "--every", str(args.every)]
    command += ["--quick"] if args.quick else []
    command += ["--wiki", str(args.wiki), "--dpi", *map(str, args.dpi)]
    command += ["--languages", *args.languages]
    # stderr goes through: a part that fails says why.
    output = subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=10, help="SEC pages sampled for the CER")
    parser.add_argument("--wiki", type=int, default=30, help="wiki pages in the Russian set")
    parser.add_argument("--dpi", type=int, nargs="+", default=[300, 200])
    parser.add_argument("--languages", nargs="+", default=["en", "ru"], help="sets measured")
    parser.add_argument("--skip-retrieval", action="store_true")
    parser.add_argument("--part", default="", help=argparse.SUPPRESS)
    args = arguments(parser)
    if args.quick:
        args.dpi = [300]
    sys.path.insert(0, str(ROOT))
    if args.part:
        handler = {"cer": cer, "ingest50": ingest50}.get(args.part, retrieval)
        print(json.dumps(handler(args)))
        return
    print(
        f"Tesseract OCR on {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f} at the "
        "start: other work on this machine slows every figure of time); clean synthetic scans "
        "(see the docstring)\n"
    )
    print("1. Character error rate against the text layer (pages in visual rows):")
    for name, row in run_part("cer", args).items():
        print(
            f"  {name:<32} CER {row['cer']:6.2%} over {row['pages']} pages of "
            f"{row['documents']} documents ({row['characters']:,} characters); page median "
            f"{row['median_page_cer']:.2%}, worst {row['worst_page_cer']:.1%}; "
            f"{row['ocr_seconds_per_page']:.1f} s a page in one process, "
            f"{row['pages_per_minute_two_at_a_time']:.0f} pages/min two at a time"
            + (
                f"; {row['failed_pages']} pages timed out (counted all wrong)"
                if row["failed_pages"]
                else ""
            )
        )
    print(f"  (load average {os.getloadavg()[0]:.1f})")
    fifty = run_part("ingest50", args)
    print(
        f"\n2. A {fifty['pages']}-page scan (300 dpi, {fifty['source']}) through manage.py ingest:"
    )
    print(
        f"  {fifty['status']} {fifty['error']}; {fifty['wall_seconds']:.0f} s in all "
        f"(goal < 300 s), recognition {fifty['ocr_seconds']:.0f} s = "
        f"{60 * fifty['pages'] / max(1.0, fifty['ocr_seconds']):.0f} pages/min, "
        f"{fifty['chunks']} chunks, mean page confidence {fifty['mean_confidence']:.1f}; "
        f"peak memory {fifty['peak_rss_mb_with_tesseract']:.0f} MB with the Tesseract "
        f"processes ({fifty['peak_rss_mb_ingest_process']:.0f} MB the ingest process alone); "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if args.skip_retrieval:
        return
    print(
        "\n3. SEC 10-Q retrieval on the pages the questions need of the 20 filings (the first "
        "three of each and every page holding a reference figure; the same pages on both "
        "sides), the questions naming a 2023 Q3 filing: final ranking, and the fusion without "
        "cap or threshold"
    )
    rows = [
        ("all text layer", "retrieval-text"),
        ("2023 Q3 scanned", "retrieval-scans"),
    ]
    for label, part in rows:
        row = run_part(part, args)
        extra = ""
        if row.get("recognised_pages"):
            extra = (
                f"; {row['recognised_pages']} pages recognised in {row['ocr_seconds']:.0f} s "
                f"({60 * row['recognised_pages'] / max(1.0, row['ocr_seconds']):.0f} pages/min)"
            )
        print(
            f"  {label:<16} filing in top 5 {row['final'][0]:6.1%}, figure in top 10 "
            f"{row['final'][1]:6.1%} (fusion {row['fusion'][0]:.1%} / {row['fusion'][1]:.1%}); "
            f"{row['ready']} filings ({row['pages']} pages) ready; {row['questions']} questions, "
            f"{row['with_figures']} with figures{extra}"
        )
        for one in row.get("scans", []):
            print(
                f"    {one['filing']}: {one['pages']} scanned pages through the ingest in "
                f"{one['total_seconds']:.0f} s (recognition {one['ocr_seconds']:.0f} s, "
                f"{60 * one['pages'] / max(1.0, one['ocr_seconds']):.0f} pages/min), mean page "
                f"confidence {one['confidence']:.1f}"
            )


if __name__ == "__main__":
    main()
