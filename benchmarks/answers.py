"""Answers on the demo knowledge base: answered, partial, refused and asked back, per group.

The knowledge base is the demo one (``knowledge.demo``: the QA Bible wiki, the HSE app
specifications with their ПМИ/ТЗ history, the GitHub Terms of Service history), ingested
in-process. Every question of ``../shared/eval/kb_dev_ru/questions.jsonl`` (or the files given)
goes through ``chat.pipeline.answer_now``, the service behind ``manage.py ask --json``,
without an LLM, as the command line's staff user.

Printed per group: answered / partial / refused / clarified, and what counts as right: an
answerable question answered *fully* with a gold document among the sources the answer cites (a
partial answer to it is a false gap, counted apart; "among all the sources", the figure before
2026-12-03, is printed beside it); the **key fact shown**: the answer's text holds the snippets
the set's notes list as verified in the gold document (all of them, and at least one), and the
answer's length; a trick question refused, partial or asked back; an
out-of-domain question refused; a version question answered from the diff of exactly the pair
asked, or, for a version that does not exist, said so with the versions that exist as tiles
(a diff of another pair is wrong).

Run: ``.venv/bin/python benchmarks/answers.py [--reuse] [--show] [--json FILE] [FILE ...]``.
``--reuse`` keeps the knowledge base of an earlier run (``var/bench-answers``); ``--quick``: a
part of the demo corpus and of the questions (``_setup.demo_corpus``, ``quick_questions``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter, defaultdict
from pathlib import Path

from _setup import (
    EVAL,
    arguments,
    demo_corpus,
    headline,
    percentile,
    quick_questions,
    setup,
    teardown,
)

QUESTIONS = EVAL / "kb_dev_ru" / "questions.jsonl"


def build_knowledge_base() -> None:
    """The demo sources, registered in their order and ingested here (no worker); on a kept
    knowledge base, the second vectors a change of the cutting or the model left missing are
    made first (what the worker's beat would do), so that answers read them."""
    from knowledge.demo import ingest_demo_now
    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.second import fill_second_vectors

    started = time.perf_counter()
    files = ingest_demo_now(demo_corpus())
    if files:
        print(
            f"ingested the demo knowledge base: {files} files in {time.perf_counter() - started:.0f} s"
        )
        return
    done, _ = fill_second_vectors(build_second_embedder(threads=os.cpu_count()))
    if done:
        print(f"second vectors of {done} chunks made in {time.perf_counter() - started:.0f} s")


def gold_keys() -> tuple[dict[int, str], dict[int, str]]:
    """document id -> its path as the question set writes it ("wiki_qa_bible_ru/x.md"), and
    version id -> its file's path ("versions/hse_app_ru/TZ_2019-05-04_e735602.docx")."""
    from knowledge.demo import DEMO_SOURCES
    from knowledge.models import Document, DocumentVersion

    folders = {d.name: (d.folder, d.history) for d in DEMO_SOURCES}
    documents, versions = {}, {}
    for pk, path, source in Document.objects.values_list("pk", "path", "source__name"):
        folder, _ = folders.get(source, ("", ""))
        documents[pk] = f"{folder}/{path}" if folder else path
    for pk, filename, source in DocumentVersion.objects.values_list(
        "pk", "filename", "document__source__name"
    ):
        _, history = folders.get(source, ("", ""))
        versions[pk] = f"{history}/{filename}" if history else filename
    return documents, versions


def ask(question: str, user) -> dict:
    from chat.models import Conversation
    from chat.pipeline import answer_now
    from chat.present.serialize import message_json

    conversation = Conversation.objects.create(user=user, title=question[:120])
    message = answer_now(conversation, question, user=user, llm=None)
    return message_json(message)


def evaluate(items: list[dict], show: bool) -> dict:
    from django.contrib.auth import get_user_model

    from evaluation import metrics

    user, _ = get_user_model().objects.get_or_create(
        username="cli", defaults={"is_staff": True, "is_active": False}
    )
    documents, versions = gold_keys()
    outcomes: dict[str, Counter] = defaultdict(Counter)
    gold_any: Counter = Counter()
    gold_cited: Counter = Counter()
    gold_first: Counter = Counter()
    pairs: Counter = Counter()
    latencies: list[float] = []
    rows = []
    for item in items:
        started = time.perf_counter()
        payload = ask(item["question"], user)
        latencies.append((time.perf_counter() - started) * 1000)
        group, outcome = item["group"], metrics.outcome_of(payload)
        outcomes[group][outcome] += 1
        cited_docs = [documents.get(s["document_id"], "") for s in payload["sources"]]
        gold = set(item.get("gold_docs") or [])
        row = {"id": item.get("id", ""), "group": group, "outcome": outcome, "ok": True}
        row["answerability"] = payload.get("answerability") or {}
        row["answer"] = payload["answer"]
        row["sources"] = [
            (documents.get(s["document_id"], ""), s["heading"], s["cited"])
            for s in payload["sources"]
        ]
        if group == "answerable":
            hit = bool(gold & set(cited_docs))
            quoted = {documents.get(s["document_id"], "") for s in payload["sources"] if s["cited"]}
            gold_any[hit] += 1
            gold_cited[bool(gold & quoted)] += 1
            gold_first[bool(cited_docs) and cited_docs[0] in gold] += 1
            facts = metrics.key_facts(item.get("notes") or "")
            row["facts"] = len(facts)
            row["facts_shown"] = metrics.facts_shown(payload["answer"], facts)
            row["fact_first"] = metrics.fact_first(payload["answer"], facts)
            row["first_gold"] = bool(cited_docs) and cited_docs[0] in gold
            row["length"] = len(payload["answer"])
            row["gold_any"] = outcome == "answered" and hit
            row["ok"] = outcome == "answered" and bool(gold & quoted)
        elif group == "version":
            used = [versions.get(s["version_id"], "") for s in payload["sources"][1:3]]
            verdict = (
                "none"
                if payload["mode"] != "diff"
                else ("exact" if used == list(item["gold_docs"]) else "other")
            )
            if not item["gold_docs"]:
                # A version that does not exist: right when it is said so (no diff at all, the
                # versions that exist offered as tiles), never a diff of another pair.
                said = payload["mode"] != "diff" and any(
                    t.get("kind") == "ask" for t in payload.get("clarification") or []
                )
                verdict = "missing said" if said else ("other" if verdict == "other" else "none")
            pairs[verdict] += 1
            row["pair"] = verdict
            row["ok"] = verdict in ("exact", "missing said")
        elif group == "trick":
            row["ok"] = outcome in ("refused", "partial", "clarified")
        else:
            row["ok"] = outcome == "refused"
        rows.append(row)
        if show and not row["ok"]:
            first = payload["sources"][0] if payload["sources"] else {}
            print(
                f"  MISS {row['id']} [{outcome}{' ' + row.get('pair', '') if 'pair' in row else ''}]"
                f" {item['question'][:90]}\n       gold {sorted(gold)[:2]}\n"
                f"       got  {cited_docs[:3]} {first.get('heading', '')[:60]!r}\n"
                f"       why  {(payload.get('answerability') or {}).get('reason', '')[:160]}"
            )
    return {
        "outcomes": {g: dict(c) for g, c in outcomes.items()},
        "gold_any": gold_any,
        "gold_cited": gold_cited,
        "gold_first": gold_first,
        "pairs": pairs,
        "latencies": latencies,
        "rows": rows,
    }


def report(result: dict, title: str = "") -> None:
    from evaluation import metrics

    print(f"\n== {title}" if title else "")
    print(f"{'group':<14}{'n':>5}{'answered':>10}{'partial':>9}{'refused':>9}{'clarified':>11}")
    for group in ("answerable", "trick", "out_of_domain", "version"):
        counts = result["outcomes"].get(group)
        if not counts:
            continue
        n = sum(counts.values())
        shares = [counts.get(k, 0) / n for k in ("answered", "partial", "refused", "clarified")]
        print(f"{group:<14}{n:>5}" + "".join(f"{s:>10.1%}" for s in shares))
    n = sum(result["gold_any"].values())
    if n:
        print(
            f"\nanswerable: a gold document among the sources the answer cites "
            f"{result['gold_cited'][True] / n:.1%}, among all its sources "
            f"{result['gold_any'][True] / n:.1%}, as the first source "
            f"{result['gold_first'][True] / n:.1%}"
        )
    n = sum(result["pairs"].values())
    if n:
        right = result["pairs"]["exact"] + result["pairs"]["missing said"]
        print(
            f"version: from exactly the pair asked, or a missing version said so {right / n:.1%}"
            f" (missing said {result['pairs']['missing said']}), "
            f"from another pair {result['pairs']['other'] / n:.1%}, "
            f"neither {result['pairs']['none'] / n:.1%}"
        )
    lat = result["latencies"]
    print(
        f"latency per question: p50 {percentile(lat, 50):.0f} ms, p95 {percentile(lat, 95):.0f} ms"
    )
    if title.startswith("kb_dev_ru"):
        headline("question_p50_ms", percentile(lat, 50), "ms")
    rows = result["rows"]
    answerable = [r for r in rows if r["group"] == "answerable"]
    if answerable:
        right = sum(r["ok"] for r in answerable) / len(answerable)
        old = sum(r["gold_any"] for r in answerable) / len(answerable)
        gaps = sum(r["outcome"] == "partial" for r in answerable) / len(answerable)
        print(
            f"answerable answered fully with a gold document among the cited sources {right:.1%}"
            f" (among all the sources {old:.1%}; false gaps, a partial answer to an answerable "
            f"question: {gaps:.1%})"
        )
        with_facts = [r for r in answerable if r["facts"]]
        if with_facts:
            # Shown in an answer (issue 48): a partial answer or a refusal does not count.
            m = len(with_facts)
            answered = [r for r in with_facts if r["outcome"] == "answered"]
            shown_any = sum(r["facts_shown"] > 0 for r in answered)
            shown_all = sum(r["facts_shown"] == r["facts"] for r in answered)
            first = sum(r["fact_first"] for r in answered)
            print(
                f"key fact shown in an answer (its text holds the verified snippets): at least "
                f"one {shown_any}/{m} = {shown_any / m:.1%}, all {shown_all}/{m} = "
                f"{shown_all / m:.1%}; fact first (a snippet in the first "
                f"{metrics.OPENING_CHARS} characters below the notice) {first}/{m} = {first / m:.1%}"
            )
        lengths = [r["length"] for r in answerable if r["outcome"] == "answered"]
        if lengths:
            print(
                f"answer length (answered answerable questions): median "
                f"{percentile(lengths, 50):.0f} characters, p90 {percentile(lengths, 90):.0f}"
            )
    for group, wanted in (
        ("trick", "refused, partial or asked back"),
        ("out_of_domain", "refused"),
    ):
        chosen = [r for r in rows if r["group"] == group]
        if chosen:
            print(f"{group}: {wanted} {sum(r['ok'] for r in chosen) / len(chosen):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, default=[QUESTIONS])
    parser.add_argument("--reuse", action="store_true", help="keep an earlier run's knowledge base")
    parser.add_argument("--show", action="store_true", help="print every question that missed")
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    args = arguments(parser)
    setup("answers", fresh=not args.reuse)
    try:
        started = time.perf_counter()
        build_knowledge_base()
        print(f"knowledge base ready in {time.perf_counter() - started:.0f} s")
        rows = []
        for path in args.files:
            items = [json.loads(line) for line in path.open() if line.strip()]
            result = evaluate(quick_questions(items), args.show)
            report(result, title=f"{path.parent.name}/{path.name}")
            rows += [{**row, "set": path.parent.name} for row in result["rows"]]
        if args.json:
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    finally:
        teardown()


if __name__ == "__main__":
    main()
