"""Figures in real PDF tables: the SEC 10-Q set, the portal against a naive pipeline.

The 20 filings of ``../shared/corpus/sec10q_en`` are ingested through the normal ingestion
(``var/bench-sec``; ``--reuse`` keeps them, parsing takes a while). The 195 human-reviewed
questions go through ``search()``; for each list and the final ranking this prints:

- **filing in top 5**: a filing the question is about (``Source Docs``: "*2023 Q3 AAPL*",
  "*AAPL*") among the first five documents;
- **figure in top 10**: for the questions whose reference answer holds figures (a number of
  three or more digits, or with a decimal point or a thousands comma; years and file names
  left out), one of those figures in the text of the first ten chunks.

In the same run, the naive pipeline anyone would write in an afternoon: PyMuPDF page text cut
into 1,000-character windows, BM25 and the same USE model, reciprocal-rank fusion.

Run: ``.venv/bin/python benchmarks/retrieval_sec.py [--reuse] [--quick]`` (``--quick``: the first
six pages of two filings, the questions about them).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import io
import math
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _setup import CORPUS, ROOT, arguments, fill_second_vectors, percentile, setup, teardown

SEC = CORPUS / "sec10q_en" / "data" / "v1"
DOCS = SEC / "docs"  # the filings measured (a part of them under --quick: quick_filings())
_WORD = re.compile(r"\w+")


def load_questions() -> list[dict]:
    with (SEC / "qna_data.csv").open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["figures"] = figures(row["Answer"])
        row["patterns"] = [p.strip() for p in row["Source Docs"].split(",") if p.strip()]
    return rows


def figures(answer: str) -> set[str]:
    answer = re.sub(r"\(SOURCE[^)]*\)|SOURCE\(S\):.*", " ", answer)
    answer = re.sub(r"\d{4} Q\d \w+\.pdf", " ", answer)
    found = set()
    for match in re.finditer(r"\d[\d,]*(?:\.\d+)?", answer):
        token = match.group(0).rstrip(".,")
        digits = re.sub(r"\D", "", token)
        if re.fullmatch(r"(19|20)\d\d", token):
            continue
        if len(digits) < 3 and not re.search(r"[.,]", token):
            continue
        found.add(token)
    return found


def has_figure(text: str, wanted: set[str]) -> bool:
    return any(f in text or f.replace(",", "") in text for f in wanted)


def filing_hit(names: list[str], patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(Path(n).stem, p) for n in names for p in patterns)


# --- the portal --------------------------------------------------------------------------------


def ingest_filings() -> None:
    from django.core.management import call_command

    from knowledge.models import Source

    if Source.objects.filter(name="SEC 10-Q").exists():
        return
    started = time.perf_counter()
    call_command("ingest", str(DOCS), source="SEC 10-Q", json=True, stdout=io.StringIO())
    count = len(list(DOCS.glob("*.pdf")))
    print(f"portal: {count} filings ingested in {time.perf_counter() - started:.0f} s")


def portal_lists(questions: list[dict]) -> dict[str, tuple[float, float]]:
    from knowledge.models import Chunk
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.weights import Hits, Retrieval

    wide = {
        "hits": Hits(k=40, per_document=40),
        "retrieval": Retrieval(candidates=60),
        "min_score": -1.0,
    }
    configurations = {
        "portal dense": SearchOptions(lists=("dense",), **wide),
        "portal lexical": SearchOptions(lists=("lexical",), **wide),
        "portal calibrated (no cap/threshold)": SearchOptions(lists=("dense", "lexical"), **wide),
        "portal final (defaults, k=10)": SearchOptions(hits=Hits(k=10)),
    }
    results = {}
    for name, options in configurations.items():
        filing, figure, timings = 0, 0, []
        for question in questions:
            started = time.perf_counter()
            hits = search(question["Question"], options=options).hits
            timings.append((time.perf_counter() - started) * 1000)
            chunks = {
                c.pk: c
                for c in Chunk.objects.filter(
                    pk__in=[h.chunk_id for h in hits[:10]]
                ).select_related("version")
            }
            names: list[str] = []
            for hit in hits:
                chunk = chunks.get(hit.chunk_id) or Chunk.objects.select_related("version").get(
                    pk=hit.chunk_id
                )
                if chunk.version.filename not in names:
                    names.append(chunk.version.filename)
            filing += filing_hit(names[:5], question["patterns"])
            if question["figures"]:
                text = "\n".join(chunks[h.chunk_id].text for h in hits[:10] if h.chunk_id in chunks)
                figure += has_figure(text, question["figures"])
        results[name] = _shares(filing, figure, questions, timings)
    return results


# --- the naive pipeline ------------------------------------------------------------------------


def naive_windows() -> list[tuple[str, str]]:
    import pymupdf

    windows = []
    for path in sorted(DOCS.glob("*.pdf")):
        with pymupdf.open(path) as pdf:
            for page in pdf:
                text = page.get_text()
                for start in range(0, len(text), 1000):
                    piece = text[start : start + 1000]
                    if piece.strip():
                        windows.append((path.name, piece))
    return windows


class Bm25:
    def __init__(self, texts: list[str]) -> None:
        self.docs = [Counter(w.lower() for w in _WORD.findall(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.lengths)
        self.df = Counter(w for d in self.docs for w in d)
        self.n = len(texts)

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n)
        for word in {w.lower() for w in _WORD.findall(query)}:
            df = self.df.get(word)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for i, d in enumerate(self.docs):
                tf = d.get(word)
                if tf:
                    out[i] += (
                        idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lengths[i] / self.avg))
                    )
        return out


def naive_lists(questions: list[dict], cache: Path) -> dict[str, tuple[float, float]]:
    from knowledge.embedding import get_embedder

    windows = naive_windows()
    texts = [t for _, t in windows]
    embedder = get_embedder()
    if cache.exists():
        vectors = np.load(cache)["v"]
    else:
        started = time.perf_counter()
        vectors = np.vstack(
            [embedder.embed_documents(texts[i : i + 64]).dense for i in range(0, len(texts), 64)]
        )
        np.savez(cache, v=vectors)
        print(f"naive: {len(texts)} windows embedded in {time.perf_counter() - started:.0f} s")
    bm25 = Bm25(texts)
    results = {}
    rankings = {"naive dense": [], "naive BM25": [], "naive RRF": []}
    for question in questions:
        dense = vectors @ embedder.embed_query(question["Question"]).dense[0]
        lexical = bm25.scores(question["Question"])
        d_order = np.argsort(-dense)[:100]
        l_order = np.argsort(-lexical)[:100]
        fused: dict[int, float] = {}
        for order in (d_order, l_order):
            for rank, i in enumerate(order, 1):
                fused[int(i)] = fused.get(int(i), 0.0) + 1 / (60 + rank)
        r_order = sorted(fused, key=lambda i: -fused[i])
        for name, order in (
            ("naive dense", d_order),
            ("naive BM25", l_order),
            ("naive RRF", r_order),
        ):
            rankings[name].append([int(i) for i in order])
    for name, per_question in rankings.items():
        filing, figure = 0, 0
        for question, order in zip(questions, per_question, strict=True):
            names = list(dict.fromkeys(windows[i][0] for i in order))
            filing += filing_hit(names[:5], question["patterns"])
            if question["figures"]:
                figure += has_figure("\n".join(texts[i] for i in order[:10]), question["figures"])
        results[name] = _shares(filing, figure, questions, [])
    return results


def _shares(filing: int, figure: int, questions: list[dict], timings: list[float]) -> tuple:
    with_figures = sum(1 for q in questions if q["figures"])
    p50 = percentile(timings, 50) if timings else None
    return filing / len(questions), figure / with_figures, p50


def quick_filings(pages: int = 6) -> list[str]:
    """The first ``pages`` pages of the first two filings, under their own names, in
    ``var/bench-quick-sec-filings`` (then ``DOCS``); returns their names."""
    import pymupdf

    global DOCS
    folder = ROOT / "var" / "bench-quick-sec-filings"
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(DOCS.glob("*.pdf"))[:2]:
        with pymupdf.open(path) as document, pymupdf.open() as part:
            part.insert_pdf(document, from_page=0, to_page=pages - 1)
            part.save(folder / path.name)
        names.append(path.name)
    DOCS = folder
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep the filings of an earlier run")
    args = arguments(parser)
    data_dir = setup("sec", fresh=not args.reuse)
    try:
        questions = load_questions()
        if args.quick:
            names = quick_filings()
            questions = [q for q in questions if filing_hit(names, q["patterns"])]
        with_figures = sum(1 for q in questions if q["figures"])
        ingest_filings()
        fill_second_vectors()  # what the workers do after the ingest (e5, each unit)
        print(f"{len(questions)} questions, {with_figures} with figures in the reference answer")
        rows = {**naive_lists(questions, data_dir / "naive-vectors.npz"), **portal_lists(questions)}
        print(f"\n  {'list':<40}{'filing in top 5':>16}{'figure in top 10':>18}")
        for name, (filing, figure, p50) in rows.items():
            extra = f"   (search p50 {p50:.0f} ms)" if p50 is not None else ""
            print(f"  {name:<40}{filing:>16.1%}{figure:>18.1%}{extra}")
    finally:
        teardown()


if __name__ == "__main__":
    main()
