"""Where one question's time goes: a per-stage profile of an ask and a search, warm, in-process.

The demo knowledge base of ``benchmarks/answers.py`` (``var/bench-answers``, built there and
reused here; its second vectors made), a signed-in non-staff user as ``load.py``'s users are.
Every question of ``../shared/eval/kb_dev_ru`` (``--limit N``: the first N) is asked through
``chat.pipeline.answer_now`` (what ``POST /api/v1/ask`` runs) and searched through
``knowledge.retrieval.hybrid.search`` with the API's options (what ``GET /api/v1/search`` runs),
after a warm-up of ``--warm`` questions that are not counted.

Printed, for asks and for searches:

- wall p50 / p95 / mean per request, the process's CPU (``time.process_time``: every thread of
  the web process) and the PostgreSQL backend's CPU (``psutil`` on the connection's backend),
  SQL statements and their time per request (a Django execute wrapper);
- the stages, as cProfile's cumulative CPU time of this process per request (mean ms) of the
  functions that make them (the reading, moderation, the version step, the route, the lexical and dense lists, the
  question's vectors, the second vectors read for the candidates, the sources, the answer
  check, the quote picker, storing), and the 25 functions of the project with the most time of
  their own. cProfile slows Python down (about 1.3-2x here): its stage figures are shares, the
  wall times above come from a run without it.

Run: ``.venv/bin/python benchmarks/stages.py [--limit N] [--warm N] [--json FILE]``. ``--quick``:
the quick demo corpus, 6 questions. Compare two commits on the same knowledge base by running
each checkout's copy with ``KB_BENCH_DATA_DIR`` pointing at one ``var/bench-answers``.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import statistics
import time
from pathlib import Path

from _setup import EVAL, arguments, headline, percentile, setup, teardown

QUESTIONS = EVAL / "kb_dev_ru" / "questions.jsonl"

# The stages of a turn and of a search, each as the functions (module suffix, name) whose
# cumulative time is the stage's. Nested stages overlap their parents (search holds the lists).
STAGES: list[tuple[str, str, str]] = [
    ("ask: whole turn", "chat/pipeline/__init__.py", "answer_now"),
    ("  moderation", "chat/moderation/rules.py", "check"),
    ("  reading of the question (cache misses)", "knowledge/question/reading.py", "read"),
    ("  version step (detect)", "chat/pipeline/versions.py", "detect"),
    ("  search()", "knowledge/retrieval/hybrid.py", "search"),
    ("    route + document filter", "knowledge/retrieval/hybrid.py", "_route"),
    ("    synonyms", "knowledge/synonyms.py", "expansions"),
    ("    question vectors (both embedders)", "knowledge/embedding.py", "embed_query"),
    ("    question vector in e5", "knowledge/retrieval/hybrid.py", "_meaning_vector"),
    ("    rank_candidates", "knowledge/retrieval/ranking.py", "rank_candidates"),
    ("      dense list", "knowledge/retrieval/ranking.py", "_dense"),
    ("      lexical list", "knowledge/retrieval/ranking.py", "_lexical"),
    ("      both scores (complete)", "knowledge/retrieval/ranking.py", "_complete"),
    ("      row labels", "knowledge/retrieval/ranking.py", "_add_labelled_rows"),
    ("      document evidence", "knowledge/retrieval/ranking.py", "_document_evidence"),
    ("      second vectors read (ranking)", "knowledge/retrieval/ranking.py", "_meaning"),
    ("    units collapsed", "knowledge/retrieval/sql.py", "unit_parents"),
    ("  sources (build_sources)", "chat/answer/prompting.py", "build_sources"),
    ("    sections expanded", "knowledge/retrieval/expansion.py", "expand"),
    ("    checklist items", "chat/answer/prompting.py", "_items"),
    ("    second vectors read (sources)", "chat/answer/prompting.py", "unit_cosines"),
    ("    quotes under the answer", "chat/answer/extractive.py", "best_quote"),
    ("  answer check (assess)", "chat/assess/evidence.py", "assess"),
    ("    vocabulary of the key words", "knowledge/retrieval/vocabulary.py", "chunk_frequencies"),
    ("    common names", "knowledge/retrieval/vocabulary.py", "common_names"),
    ("    check()", "chat/assess/answerability.py", "check"),
    ("  clarification tiles", "chat/assess/policy.py", "clarification_tiles"),
    ("  extractive answer (quote picker)", "chat/answer/extractive.py", "extractive_answer"),
    ("    units of a text", "knowledge/units.py", "units"),
    ("  storing (sources, message)", "chat/pipeline/storing.py", "store_sources"),
    ("  finish", "chat/pipeline/storing.py", "finish"),
    ("  message JSON", "chat/present/serialize.py", "message_json"),
]


class SqlClock:
    """Django execute wrapper: SQL statements and their wall time."""

    def __init__(self) -> None:
        self.count, self.seconds = 0, 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1


def backend_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend so far."""
    import psutil
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def forget_questions() -> None:
    """What a process keeps of the questions it was asked (their reading, their vectors,
    PostgreSQL's reading of their words): each pass meets its questions as new ones, as a
    colleague's new question finds them. What it keeps of the documents stays (the units of a
    passage, the sections of a version): it serves every question."""
    from knowledge import embedding
    from knowledge.question.reading import read
    from knowledge.retrieval import sql

    read.cache_clear()
    # Older checkouts (measured against) kept them otherwise, or not at all.
    getattr(embedding, "_query_vectors", {}).clear()
    getattr(sql, "_PARSED", {}).clear()
    if hasattr(sql._parse, "cache_clear"):
        sql._parse.cache_clear()


def ask_once(question: str, user) -> None:
    from chat.models import Conversation
    from chat.pipeline import answer_now
    from chat.present.serialize import message_json

    conversation = Conversation.objects.create(user=user)
    message = answer_now(conversation, question, user=user, llm=None)
    message_json(message)


def search_once(question: str, user) -> None:
    from knowledge.retrieval.hits import describe, result_summary
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.weights import Hits, weights

    result = search(question, user=user, options=SearchOptions(hits=Hits(k=weights().hits.k)))
    [hit.as_dict() for hit in describe(result.hits)]
    result_summary(result)


def measure(kind: str, run, questions: list[str], user) -> dict:
    """Wall, CPU and SQL per request, without the profiler."""
    from django.db import connection

    walls, cpus, backends, sql_counts, sql_ms = [], [], [], [], []
    clock = SqlClock()
    with connection.execute_wrapper(clock):
        for question in questions:
            before_backend = backend_cpu()
            count, seconds = clock.count, clock.seconds
            cpu, started = time.process_time(), time.perf_counter()
            run(question, user)
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
            sql_counts.append(clock.count - count - 1)  # the backend's pid query aside
            sql_ms.append((clock.seconds - seconds) * 1000)
            backends.append((backend_cpu() - before_backend) * 1000)
    return {
        "kind": kind,
        "n": len(questions),
        "wall_p50": percentile(walls, 50),
        "wall_p95": percentile(walls, 95),
        "wall_mean": statistics.fmean(walls),
        "cpu_mean": statistics.fmean(cpus),
        "backend_cpu_mean": statistics.fmean(backends),
        "sql_statements": statistics.fmean(sql_counts),
        "sql_ms_mean": statistics.fmean(sql_ms),
    }


def profile(run, questions: list[str], user) -> dict:
    # CPU time of this process, not the wall: waiting for PostgreSQL and for a core on a busy
    # machine are left out (PostgreSQL's own CPU is measured apart, ``backend_cpu``).
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for question in questions:
        run(question, user)
    profiler.disable()
    stats = pstats.Stats(profiler)
    n = len(questions)
    stages = {}
    for label, path, name in STAGES:
        total = 0.0
        for (filename, _, function), row in stats.stats.items():
            if function == name and filename.endswith(path):
                total += row[3]  # cumulative seconds (recursive calls counted once)
        stages[label] = total * 1000 / n
    root = str(Path(__file__).resolve().parent.parent)
    own = sorted(
        (
            (row[2] * 1000 / n, f"{filename.removeprefix(root + '/')}:{function}")
            for (filename, _, function), row in stats.stats.items()
            if filename.startswith(root) and "/.venv/" not in filename
        ),
        reverse=True,
    )[:25]
    return {"stages": stages, "own": own}


def report(figures: dict, stages: dict | None, own: list) -> None:
    f = figures
    print(
        f"\n{f['kind']}: {f['n']} requests, wall p50 {f['wall_p50']:.0f} ms, p95 "
        f"{f['wall_p95']:.0f} ms, mean {f['wall_mean']:.0f} ms; CPU a request: this process "
        f"{f['cpu_mean']:.0f} ms, PostgreSQL {f['backend_cpu_mean']:.0f} ms; "
        f"SQL {f['sql_statements']:.1f} statements, {f['sql_ms_mean']:.0f} ms"
    )
    if stages:
        print("  stage (cProfile, cumulative CPU ms a request)")
        for label, ms in stages.items():
            if ms > 0:
                print(f"    {label:<48}{ms:>8.1f}")
    if own:
        print("  the project's functions with the most CPU time of their own (ms a request)")
        for ms, name in own[:15]:
            print(f"    {ms:>7.2f}  {name}")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="the first N questions (0: all)")
    parser.add_argument("--warm", type=int, default=10, help="questions asked first, not counted")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = arguments(parser)
    setup("answers", fresh=False)
    try:
        from answers import build_knowledge_base

        build_knowledge_base()
        from django.contrib.auth import get_user_model

        user, _ = get_user_model().objects.get_or_create(username="profile-user")
        items = [json.loads(line) for line in QUESTIONS.open() if line.strip()]
        questions = [item["question"] for item in items]
        if args.quick:
            args.limit, args.warm = 6, 2
        warm, questions = questions[: args.warm], questions[args.warm :]
        if args.limit:
            questions = questions[: args.limit]
        for question in warm:
            ask_once(question, user)
            search_once(question, user)
        results = {}
        for kind, run in (("ask", ask_once), ("search", search_once)):
            forget_questions()
            figures = measure(kind, run, questions, user)
            forget_questions()
            profiled = profile(run, questions, user)
            report(figures, profiled["stages"], profiled["own"])
            headline(f"{kind}_cpu_ms", figures["cpu_mean"] + figures["backend_cpu_mean"], "ms")
            results[kind] = {**figures, **profiled}
        print(
            f"\nthreads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')!r}, "
            f"cores {os.cpu_count()}"
        )
        if args.json:
            args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1))
    finally:
        teardown()


if __name__ == "__main__":
    main()
