"""Issue 48, item 2: which unit the extractive answer leads with, measured offline.

Captures once, for every answerable question of kb_dev_ru and kb_dev2_ru on the demo knowledge
base (``var/bench-answers``, built by ``benchmarks/answers.py``), what the answer step gets: the
sources' passages (their text, title, heading and the e5 cosine of each unit), the answer
check's decision, and the gold documents; kept in ``var/bench-quotes-<weight>.json`` (the
ranking's meaning weight, ``KB_SEARCH_MEANING_WEIGHT``, named in the file). Then builds the
extractive answer from them with the product's code (``chat.answer.extractive``) and prints
what the reader sees: the key fact shown (any, all), in the opening (``evaluation.metrics
.fact_first``), the first cited source gold, the answer's median length; per set and together.

``--set NAME=VALUE`` changes a module constant of ``chat.answer.extractive`` for the run (a
sweep: ``--set VALUE_LEAD=0.3``); the answers are built in this process, nothing is stored.

Not product code: its figures chose the constants (RESULTS.md, 2026-12-07).
Run: ``.venv/bin/python benchmarks/experiments/quotes.py [--capture] [--set NAME=VALUE ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _setup import EVAL, ROOT, setup, teardown  # noqa: E402

SETS = {
    "kb_dev": EVAL / "kb_dev_ru" / "questions.jsonl",
    "kb_dev2": EVAL / "kb_dev2_ru" / "questions.jsonl",
}


def capture_path() -> Path:
    weight = os.environ.get("KB_SEARCH_MEANING_WEIGHT", "default")
    return ROOT / "var" / f"bench-quotes-{weight}.json"


def capture() -> list[dict]:
    from answers import gold_keys

    from chat.answer.prompting import build_sources
    from chat.assess.evidence import assess
    from knowledge.question import read
    from knowledge.retrieval.hybrid import SearchOptions, search

    documents, _ = gold_keys()
    rows = []
    for name, path in SETS.items():
        for line in path.read_text().splitlines():
            item = json.loads(line) if line.strip() else None
            if not item or item["group"] != "answerable":
                continue
            question = item["question"]
            reading = read(question)
            result = search(question, reading=reading, options=SearchOptions(answer=True))
            sources = build_sources(result, reading=reading) if result.hits else []
            check = assess(reading, sources, result) if sources else None
            rows.append(
                {
                    "set": name,
                    "id": item["id"],
                    "question": question,
                    "gold": item["gold_docs"],
                    "notes": item.get("notes") or "",
                    "decision": check.decision if check else "refusal",
                    "passages": [
                        {
                            "number": s.number,
                            "title": s.title,
                            "heading": s.heading,
                            "text": s.chunk_text,
                            "is_table": s.is_table,
                            "meaning": list(s.meaning),
                            "doc": documents.get(s.document_id, ""),
                        }
                        for s in sources
                    ],
                }
            )
            print(f"\r  captured {len(rows)}", end="", flush=True)
    print()
    return rows


def build(row: dict) -> str:
    from chat.answer.extractive import Passage, extractive_answer
    from knowledge.question import read

    passages = [
        Passage(
            p["number"], p["title"], p["heading"], p["text"], p["is_table"], tuple(p["meaning"])
        )
        for p in row["passages"]
    ]
    return extractive_answer(read(row["question"]), passages, language="ru")


def cited(answer: str, row: dict) -> list[str]:
    """The documents of the sources the answer cites, in the order it first cites them."""
    import re

    numbers = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d{1,2})\]", answer)))
    by_number = {p["number"]: p["doc"] for p in row["passages"]}
    return [by_number[n] for n in numbers if n in by_number]


def measure(rows: list[dict], show: bool = False) -> None:
    from evaluation import metrics

    for subset in ("kb_dev", "kb_dev2", "both"):
        chosen = [r for r in rows if subset == "both" or r["set"] == subset]
        any_, all_, first, gold_first, lengths, counted, times = 0, 0, 0, 0, [], 0, []
        for row in chosen:
            facts = metrics.key_facts(row["notes"])
            if not facts or row["decision"] != "answer" or not row["passages"]:
                counted += bool(facts)
                continue
            counted += 1
            started = time.perf_counter()
            answer = build(row)
            times.append((time.perf_counter() - started) * 1000)
            shown = metrics.facts_shown(answer, facts)
            any_ += shown > 0
            all_ += shown == len(facts)
            first += metrics.fact_first(answer, facts)
            docs = cited(answer, row)
            gold_first += bool(docs) and docs[0] in set(row["gold"])
            lengths.append(len(answer))
            if show and subset != "both" and not metrics.fact_first(answer, facts):
                print(f"--- {row['id']} {row['question'][:100]}\n    facts {facts}")
                print("    " + metrics.opening(answer)[:400].replace("\n", "\n    "))
        n = counted
        print(
            f"{subset:<8} n={n:<4} fact any {any_ / n:.1%}  all {all_ / n:.1%}  first "
            f"{first / n:.1%}  first cited gold {gold_first / n:.1%}  median "
            f"{statistics.median(lengths):.0f} chars  {statistics.median(times):.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capture", action="store_true", help="capture again")
    parser.add_argument("--show", action="store_true", help="print the openings that miss")
    parser.add_argument("--set", action="append", default=[], help="NAME=VALUE of extractive")
    args = parser.parse_args()
    path = capture_path()
    setup("answers", fresh=False)
    try:
        if args.capture or not path.exists():
            path.write_text(json.dumps(capture(), ensure_ascii=False))
        from chat.answer import extractive

        for assignment in args.set:
            name, _, value = assignment.partition("=")
            setattr(extractive, name, type(getattr(extractive, name))(value))
        measure(json.loads(path.read_text()), show=args.show)
    finally:
        teardown()


if __name__ == "__main__":
    main()
