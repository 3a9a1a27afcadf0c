"""What the question's reading costs: load time and memory of the language tools, and the time
of one reading (``knowledge.question.read``), on the questions of kb_dev and kb_dev2.

Printed: the models' load time and the process's resident memory before and after (what a web
process gains), then p50 / p95 of one reading, Russian and English apart, each question read
once with the cache cleared (a turn reads its question once; the cache only spares the second
look of the same turn).

Run: ``.venv/bin/python benchmarks/reading.py [--quick]`` (``--quick``: the first 20 questions).
Needs no database.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time

import psutil
from _setup import EVAL, ROOT, arguments, headline

sys.path.insert(0, str(ROOT))


def rss_mb() -> float:
    gc.collect()
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


def main() -> None:
    quick = arguments().quick
    questions = [
        json.loads(line)["question"]
        for name in ("kb_dev_ru", "kb_dev2_ru")
        for line in (EVAL / name / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ][: 20 if quick else None]
    import numpy  # noqa: F401 - a web process has it already (the embedder): not counted here

    before = rss_mb()
    started = time.perf_counter()
    from knowledge.question import read
    from knowledge.text import nlp

    nlp.warm_up()
    read("Прогрев: как читается вопрос?")
    loaded = time.perf_counter() - started
    after = rss_mb()
    times: dict[str, list[float]] = {"ru": [], "en": []}
    for question in questions:
        read.cache_clear()
        tick = time.perf_counter()
        reading = read(question)
        times[reading.language].append((time.perf_counter() - tick) * 1000)
    print(f"language tools loaded in {loaded:.1f} s; resident memory {before:.0f} -> {after:.0f} MB "
          f"(+{after - before:.0f} MB), after {len(questions)} readings {rss_mb():.0f} MB")  # fmt: skip
    for language, values in times.items():
        if values:
            print(
                f"one reading, {language}: p50 {percentile(values, 50):.1f} ms, "
                f"p95 {percentile(values, 95):.1f} ms over {len(values)} questions"
            )
            headline(f"{language}_p50_ms", percentile(values, 50), "ms")


if __name__ == "__main__":
    main()
