"""Row-label evidence: a table row that the question names.

"How have NVIDIA's inventory levels changed?" is answered by the balance sheet's row
"Inventories | 4,319 | 5,159", but BM25 prefers the prose around it: the risk factors and the
discussion repeat "NVIDIA", "supply", "quarter" and "inventory", while the row holds one of the
question's words among figures. What makes the row the answer is that its *label* (the first
cell) is what the question asks about. So, among the tables and row units of the documents the
lists already found, each row label is compared with the question's own lexemes:

    coverage = |label ∩ question| / |label|          (is the label made of asked words?)
    share    = idf(label ∩ question) / idf(question)  (how much of the question it names)
    evidence = max over the chunk's labels of coverage x share

A label made only of words the question uses ("Inventories", "Research and development") has
coverage 1; "Total inventories" 0.5 for a question without "total". The share keeps a common
word ("Total", "Итого") from counting much. Like the document evidence, it adds to a
candidate's ranking score only (``KB_SEARCH_LABEL_WEIGHT`` times the evidence times the
document's share of the document evidence, so that Apple's "Inventories" row counts little for
a question about NVIDIA), never to the score the minimum applies to: a label cannot turn a
refusal into an answer. Measured with
benchmarks/retrieval_sec.py (a reference figure in the top 10 chunks), retrieval_kb.py and
retrieval.py (README, configuration).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from knowledge.retrieval import sql as q


def label_evidence(
    scope: q.Scope,
    document_ids: Sequence[int],
    own: Sequence[str],
    idf: Mapping[str, float],
) -> dict[int, float]:
    """Chunk id -> evidence for the tables and row units of ``document_ids``
    with a row label that shares a lexeme with the question (``own``: its lexemes, weighted by
    ``idf``); evidence as in the module's docstring, in (0, 1]."""
    asked = {x for x in own if idf.get(x, 0.0) > 0}
    total = sum(idf[x] for x in asked)
    if not asked or total <= 0:
        return {}
    found: dict[int, float] = {}
    for chunk_id, labels in q.table_labels(scope, document_ids, sorted(asked)):
        evidence = max((label_score(x, asked, idf, total) for x in labels), default=0.0)
        if evidence > 0:
            found[chunk_id] = evidence
    return found


def label_score(
    label: Sequence[str], asked: set[str], idf: Mapping[str, float], total: float
) -> float:
    """coverage x share of one label's lexemes for the question's lexemes ``asked`` (whose
    idf sums to ``total``); 0 when they share nothing."""
    lexemes = set(label)
    matched = lexemes & asked
    if not lexemes or not matched or total <= 0:
        return 0.0
    coverage = len(matched) / len(lexemes)
    share = sum(idf[x] for x in matched) / total
    return coverage * share
