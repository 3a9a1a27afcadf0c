"""Issue 48, item 1: where e5 (the second vectors) can bring the right document first.

Captures, for every answerable question of kb_dev_ru and kb_dev2_ru on the demo knowledge base
(``var/bench-answers``, built by ``benchmarks/answers.py``), the portal's wide ranking (60
candidates a list, no cap, no minimum score) with each candidate's scores at every stage and
the cosine of its best unit to the question in e5's space; and e5 alone over every searchable
chunk of the knowledge base (each chunk by its best unit, and by the mean of its units). The
capture is kept in ``var/bench-first-stage.json`` (``--capture`` makes it again).

Then ranks documents (each by its best chunk) with variants of the fusion, offline, and prints
document Recall@1 / @5 per set with the sign test against the portal's default ranking:

- ``portal``: the default search (the hits, as ``retrieval_kb.py`` and ``peers.py`` rank them);
- ``meaning w``: the ranking score plus ``w`` x the best unit's meaning score (what
  ``KB_SEARCH_MEANING_WEIGHT`` does) over the same candidates;
- ``agree w``: the same with the weight scaled by how little the lexical list holds of the
  question (1 - the best candidate's lexical share);
- ``rrf``: reciprocal rank fusion of the portal's document order with e5's over the whole base.

Not product code: the figures it prints decide what the product does (RESULTS.md, 2026-12-07).
Run: ``.venv/bin/python benchmarks/experiments/first_stage.py [--capture]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _setup import EVAL, ROOT, setup, teardown  # noqa: E402

CAPTURE = ROOT / "var" / "bench-first-stage.json"
SETS = {
    "kb_dev": EVAL / "kb_dev_ru" / "questions.jsonl",
    "kb_dev2": EVAL / "kb_dev2_ru" / "questions.jsonl",
}


def capture() -> dict:
    import numpy as np
    from answers import gold_keys

    from knowledge.embedding import get_second_embedder
    from knowledge.ingest.second import stored_vectors
    from knowledge.models import Chunk
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.weights import Fusion, Hits, Retrieval

    documents, _ = gold_keys()
    types = dict(Chunk.objects.values_list("pk", "block_type"))
    searchable = list(Chunk.objects.filter(searchable=True).values_list("pk", "document_id"))
    vectors = stored_vectors([pk for pk, _ in searchable])
    chunk_doc = dict(searchable)
    ids = [pk for pk, _ in searchable if pk in vectors]
    second = get_second_embedder()
    wide = SearchOptions(
        hits=Hits(k=60, per_document=60, spread=0),
        retrieval=Retrieval(candidates=60),
        fusion=Fusion(meaning_weight=1e-9),
        min_score=-1.0,
        answer=True,
    )
    rows = []
    for name, path in SETS.items():
        for line in path.read_text().splitlines():
            item = json.loads(line) if line.strip() else None
            if not item or item["group"] != "answerable":
                continue
            question = item["question"]
            default = search(question, options=SearchOptions(answer=True), reranker=None)
            result = search(question, options=wide, reranker=None)
            q = second.embed_query(question).dense[0]
            best = {pk: float((vectors[pk] @ q).max()) for pk in ids}
            mean = {}
            for pk in ids:
                v = vectors[pk]
                m = v[np.abs(v).sum(axis=1) > 0].mean(axis=0) if len(v) else v
                norm = float(np.linalg.norm(m)) if len(v) else 0.0
                mean[pk] = float(m @ q / norm) if norm else 0.0
            e5_best = sorted(best, key=lambda pk: -best[pk])[:100]
            e5_mean = sorted(mean, key=lambda pk: -mean[pk])[:100]
            rows.append(
                {
                    "set": name,
                    "id": item["id"],
                    "style": item.get("style", ""),
                    "gold": item["gold_docs"],
                    "portal": [documents.get(h.document_id, "") for h in default.hits],
                    "candidates": [
                        {
                            "doc": documents.get(c.document_id, ""),
                            "type": types.get(c.chunk_id, ""),
                            # With the tiny meaning weight: it moves nothing measurable.
                            "fused": c.fused.score if c.fused else 0.0,
                            "own": c.own_score,
                            "lexical_norm": c.calibrated.lexical_norm if c.calibrated else 0.0,
                            "dense": c.dense.score if c.dense else 0.0,
                            "meaning": c.meaning.score if c.meaning else None,
                            "document_evidence": c.document_evidence,
                            "name_evidence": c.name_evidence,
                        }
                        for c in result.candidates
                    ],
                    "e5_best": [(documents.get(chunk_doc[pk], ""), best[pk]) for pk in e5_best],
                    "e5_mean": [(documents.get(chunk_doc[pk], ""), mean[pk]) for pk in e5_mean],
                }
            )
            print(f"\r  captured {len(rows)}", end="", flush=True)
    print()
    return {"rows": rows}


def documents_by(scored: list[tuple[str, float]]) -> list[str]:
    """Documents ranked by their best chunk's score."""
    best: dict[str, float] = {}
    for doc, score in scored:
        if doc not in best or score > best[doc]:
            best[doc] = score
    return sorted(best, key=lambda d: -best[d])


def first_seen(docs: list[str]) -> list[str]:
    return list(dict.fromkeys(docs))


def meaning_score(cosine: float | None, floor: float = 0.813, ceiling: float = 0.882) -> float:
    if cosine is None:
        return 0.0
    return min(1.0, max(0.0, (cosine - floor) / (ceiling - floor)))


def rank_of(ranking: list[str], gold: list[str]) -> int | None:
    return next((i for i, d in enumerate(ranking, 1) if d in set(gold)), None)


def sign_test(a: int, b: int) -> float:
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * p)


def share(c: dict) -> float:
    """The candidate's document's share of the document evidence (1 where none was computed)."""
    d = c.get("document_evidence")
    return 1.0 if d is None else d


TABLES = ("table", "row", "test_case")
VARIANTS = [
    "fused",
    *[f"meaning {w}" for w in (0.1, 0.2, 0.3)],
    *[f"prose {w}" for w in (0.1, 0.2, 0.3)],
    *[f"disagree {w}" for w in (0.1, 0.2, 0.3)],
    *[f"margin {w} {d}" for w in (0.1, 0.2, 0.3) for d in (0.05, 0.1)],
    *[f"lexweak {w} {t}" for w in (0.1, 0.2, 0.3) for t in (0.3, 0.5)],
    *[f"unnamed {w}" for w in (0.1, 0.2, 0.3)],
    *[f"unnamedtop {w} {k}" for w in (0.1, 0.2) for k in (10, 20, 30)],
    *[f"unnamedweak {w} {t}" for w in (0.2, 0.3) for t in (0.3, 0.5)],
]


def variant_scores(cands: list[dict], name: str) -> list[float]:
    """Each candidate's ranking score under a variant of e5's place in the fusion."""
    kind, *args = name.split()
    w = float(args[0]) if args else 0.0
    fused = [c["fused"] for c in cands]
    near = [meaning_score(c["meaning"]) for c in cands]
    if kind == "fused" or not cands:
        return fused
    if kind == "prose":
        return [
            f + (0 if c.get("type") in TABLES else w * m)
            for f, m, c in zip(fused, near, cands, strict=False)
        ]
    if kind == "disagree":
        by_dense = max(cands, key=lambda c: c.get("dense", 0.0))["doc"]
        by_words = max(cands, key=lambda c: c["lexical_norm"])["doc"]
        w = w if by_dense != by_words else 0.0
    if kind == "margin":
        top = max(fused)
        return [
            f + (w * m if f >= top - float(args[1]) else 0.0)
            for f, m in zip(fused, near, strict=False)
        ]
    if kind == "lexweak":
        w = w if max(c["lexical_norm"] for c in cands) < float(args[1]) else 0.0
    named = any(c.get("name_evidence") is not None for c in cands)
    if kind == "unnamed":
        w = 0.0 if named else w
    if kind == "unnamedtop":
        w = 0.0 if named else w
        cut = sorted(fused, reverse=True)[: int(args[1])][-1]
        return [f + (w * m if f >= cut else 0.0) for f, m in zip(fused, near, strict=False)]
    if kind == "unnamedweak":
        weak = max(c["lexical_norm"] for c in cands) < float(args[1])
        w = w if weak and not named else 0.0
    return [f + w * m for f, m in zip(fused, near, strict=False)]


def variants(row: dict) -> dict[str, list[str]]:
    cands = row["candidates"]
    out = {"portal": first_seen(row["portal"])}
    for name in VARIANTS:
        scores = variant_scores(cands, name)
        out[name] = documents_by([(c["doc"], x) for c, x in zip(cands, scores, strict=False)])
    fused_docs = documents_by([(c["doc"], c["fused"]) for c in cands])
    e5_docs = first_seen([d for d, _ in row["e5_best"]])
    e5_mean_docs = first_seen([d for d, _ in row["e5_mean"]])
    out["e5 best unit alone"] = e5_docs
    out["e5 mean of units alone"] = e5_mean_docs
    for k in (10, 60):
        scores: dict[str, float] = {}
        for ranking in (fused_docs, e5_docs):
            for r, d in enumerate(ranking, 1):
                scores[d] = scores.get(d, 0.0) + 1 / (k + r)
        out[f"rrf fused+e5 k={k}"] = sorted(scores, key=lambda d: -scores[d])
    return out


def analyse(data: dict) -> None:
    rows = data["rows"]
    names = list(variants(rows[0]))
    for subset in ("kb_dev", "kb_dev2", "both"):
        chosen = [r for r in rows if subset == "both" or r["set"] == subset]
        base = [rank_of(variants(r)["portal"], r["gold"]) for r in chosen]
        print(
            f"\n{subset} ({len(chosen)} questions)   R@1    R@5   only-it/only-portal @1 p   @5 p"
        )
        for name in names:
            ranks = [rank_of(variants(r)[name], r["gold"]) for r in chosen]
            r1 = sum(x == 1 for x in ranks) / len(ranks)
            r5 = sum(x is not None and x <= 5 for x in ranks) / len(ranks)
            a1 = sum(x == 1 and y != 1 for x, y in zip(ranks, base, strict=True))
            b1 = sum(y == 1 and x != 1 for x, y in zip(ranks, base, strict=True))
            a5 = sum((x or 99) <= 5 < (y or 99) for x, y in zip(ranks, base, strict=True))
            b5 = sum((y or 99) <= 5 < (x or 99) for x, y in zip(ranks, base, strict=True))
            print(
                f"  {name:<26}{r1:6.3f}{r5:7.3f}   {a1:>3}/{b1:<3} {sign_test(a1, b1):5.2f}"
                f"   {a5:>3}/{b5:<3} {sign_test(a5, b5):5.2f}"
            )


SEC_CAPTURE = ROOT / "var" / "bench-first-stage-sec.json"


def capture_sec() -> dict:
    """The SEC 10-Q questions (``retrieval_sec.py``'s knowledge base): each wide candidate's
    filing, scores, meaning cosine, and whether its text holds a reference figure."""
    from retrieval_sec import has_figure, load_questions

    from knowledge.models import Chunk
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.weights import Fusion, Hits, Retrieval

    wide = SearchOptions(
        hits=Hits(k=60, per_document=60, spread=0),
        retrieval=Retrieval(candidates=60),
        fusion=Fusion(meaning_weight=1e-9),
        min_score=-1.0,
        answer=True,
    )
    rows = []
    for question in load_questions():
        result = search(question["Question"], options=wide, reranker=None)
        ids = [c.chunk_id for c in result.candidates]
        chunks = {c.pk: c for c in Chunk.objects.filter(pk__in=ids).select_related("version")}
        rows.append(
            {
                "patterns": question["patterns"],
                "has_figures": bool(question["figures"]),
                "candidates": [
                    {
                        "doc": chunks[c.chunk_id].version.filename,
                        "type": chunks[c.chunk_id].block_type,
                        "dense": c.dense.score if c.dense else 0.0,
                        "fused": c.fused.score if c.fused else 0.0,
                        "lexical_norm": c.calibrated.lexical_norm if c.calibrated else 0.0,
                        "meaning": c.meaning.score if c.meaning else None,
                        "document_evidence": c.document_evidence,
                        "name_evidence": c.name_evidence,
                        "figure": bool(question["figures"])
                        and has_figure(chunks[c.chunk_id].text, question["figures"]),
                    }
                    for c in result.candidates
                    if c.chunk_id in chunks
                ],
            }
        )
        print(f"\r  captured {len(rows)}", end="", flush=True)
    print()
    return {"rows": rows}


def sec_scores(row: dict, name: str) -> list[float]:
    cands = row["candidates"]
    best_lex = max((c["lexical_norm"] for c in cands), default=0.0)
    kind, _, w = name.partition(" ")
    w = float(w or 0)
    if kind == "agree":
        w *= 1.0 - best_lex
    factor = share if kind == "docev" else (lambda c: 1.0)
    return [c["fused"] + w * meaning_score(c["meaning"]) * factor(c) for c in cands]


def analyse_sec(data: dict) -> None:
    import fnmatch

    rows = data["rows"]
    print(f"\nSEC ({len(rows)} questions), offline: cap 6 a filing, first 10 chunks")
    print(f"  {'variant':<16}{'filing@5':>10}{'figure@10':>11}")
    for name in VARIANTS:
        filing = figure = 0
        for row in rows:
            scores = variant_scores(row["candidates"], name)
            order = sorted(range(len(scores)), key=lambda i: -scores[i])
            seen: dict[str, int] = {}
            top = []
            for i in order:
                doc = row["candidates"][i]["doc"]
                if seen.get(doc, 0) < 6:
                    seen[doc] = seen.get(doc, 0) + 1
                    top.append(row["candidates"][i])
            filings = list(dict.fromkeys(c["doc"] for c in top))[:5]
            filing += any(
                fnmatch.fnmatch(Path(f).stem, p) for f in filings for p in row["patterns"]
            )
            figure += any(c["figure"] for c in top[:10])
        with_figures = sum(r["has_figures"] for r in rows)
        print(f"  {name:<16}{filing / len(rows):>10.3f}{figure / max(1, with_figures):>11.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capture", action="store_true", help="capture again")
    parser.add_argument("--sec", action="store_true", help="the SEC 10-Q set instead")
    args = parser.parse_args()
    if args.sec:
        if args.capture or not SEC_CAPTURE.exists():
            setup("sec", fresh=False)
            try:
                data = capture_sec()
            finally:
                teardown()
            SEC_CAPTURE.write_text(json.dumps(data))
        analyse_sec(json.loads(SEC_CAPTURE.read_text()))
        return
    if args.capture or not CAPTURE.exists():
        setup("answers", fresh=False)
        try:
            data = capture()
        finally:
            teardown()
        CAPTURE.write_text(json.dumps(data, ensure_ascii=False))
    analyse(json.loads(CAPTURE.read_text()))


if __name__ == "__main__":
    main()
