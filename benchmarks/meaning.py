"""Where e5's cosines are read: the meaning scale and the answer check's refusal, set on XQuAD.

The second vectors (``knowledge.ingest.second``) are e5's vectors of each unit (sentence, list
item, table row) of a chunk. This benchmark puts the XQuAD passages through the same cutting
(``knowledge.units``) and the same model, and prints, per language:

- for each question, the cosine of the best unit of its own passage (a question the text
  answers), and of the best unit of any passage of *another* article (the nearest text that
  does not answer it): their quantiles;
- for a sweep of refusal thresholds, the share of questions that would keep their own passage
  (answered) and the share whose best unit elsewhere falls below it (refused, as an
  out-of-domain question would be).

``KB_MEANING_FLOOR`` is set at the other-article median (a sentence unrelated to the question),
``KB_MEANING_CEILING`` at the own-passage median (one that answers it), and
``KB_MEANING_REFUSE_BELOW`` at the equal error point (as many own passages fall below it as
other articles' best units rise above it).
The same is measured across languages (English questions on the Russian passages, Russian
questions on the English ones: XQuAD is parallel): e5's cosines run lower there, so the one
gate refuses most questions asked in another language than their page (a known limit: a gate
of their own, at their equal error point, let through unanswerable questions of the demo
knowledge base that the one gate refuses; RESULTS.md 12-05).

``--kb`` then asks, on the demo knowledge base (benchmarks/answers.py's, built if missing),
kb_dev's answerable and trick questions (the tuning set) and questions that knowledge base
cannot answer: refusal.py's out-of-domain questions and 150 XQuAD questions per language. For
each that passes the search's minimum score it prints the best unit of the sources the answer
check reads, and for a sweep of thresholds the share of kb_dev's answerable questions kept and
of the others refused: the answer check's threshold is the highest that keeps every answerable
one there. kb_dev2 is never used (it is reported, not tuned on).

Run: ``.venv/bin/python benchmarks/meaning.py [--quick] [--kb]``. The vectors are kept in
``var/bench-meaning`` (keyed by the texts), so a second run takes seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _setup import EVAL, ROOT, arguments, percentile, setup, teardown

CACHE = Path(os.environ.get("KB_BENCH_DATA_DIR", ROOT / "var" / "bench-meaning"))


def _embed(model, texts: list[str], kind: str) -> np.ndarray:
    """Vectors of ``texts``, read from the cache when the same texts were embedded before."""
    key = hashlib.sha1(("\0".join(texts) + kind).encode()).hexdigest()[:16]
    path = CACHE / f"{kind}-{key}.npy"
    if path.exists():
        return np.load(path)
    started = time.perf_counter()
    if kind == "query":
        vectors = np.vstack([model.embed_query(t).dense for t in texts])
    else:
        vectors = np.vstack(
            [model.embed_documents(texts[i : i + 32]).dense for i in range(0, len(texts), 32)]
        )
    print(
        f"  embedded {len(texts)} {kind} texts in {time.perf_counter() - started:.0f} s", flush=True
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def measure(language: str, quick: bool, model, passages_in: str = "") -> dict[str, np.ndarray]:
    """Each question's best unit in its own passage and in another article's; ``passages_in``:
    the passages' language when it is not the questions' (XQuAD's are parallel, same ids)."""
    from knowledge.units import units

    passages = [
        json.loads(x)
        for x in (EVAL / "xquad" / f"xquad_{passages_in or language}_passages.jsonl").open()
    ]
    questions = [
        json.loads(x) for x in (EVAL / "xquad" / f"xquad_{language}_questions.jsonl").open()
    ]
    if quick:
        passages = passages[:30]
        kept = {p["pid"] for p in passages}
        questions = [q for q in questions if q["gold_pid"] in kept][:60]
    cut = [[u.embed_text for u in units(p["text"])] or [p["text"]] for p in passages]
    owner = np.repeat(np.arange(len(passages)), [len(c) for c in cut])
    article = np.array([p["pid"].split("_")[0] for p in passages])[owner]
    vectors = _embed(model, [t for c in cut for t in c], "passage")
    asked = _embed(model, [q["question"] for q in questions], "query")
    index = {p["pid"]: i for i, p in enumerate(passages)}
    own, other = [], []
    for q, vector in zip(questions, asked, strict=True):
        cosines = vectors @ vector
        gold = index[q["gold_pid"]]
        own.append(cosines[owner == gold].max())
        other.append(cosines[article != q["gold_pid"].split("_")[0]].max())
    return {"own": np.array(own), "other": np.array(other)}


def report(language: str, found: dict[str, np.ndarray]) -> None:
    own, other = found["own"], found["other"]
    print(f"\n{language}: {len(own)} questions")
    for name, values in (("own passage's best unit", own), ("another article's best", other)):
        q = [percentile(list(values), p) for p in (1, 5, 25, 50, 75, 95)]
        print(f"  {name:<26} p1 {q[0]:.3f} p5 {q[1]:.3f} p25 {q[2]:.3f} p50 {q[3]:.3f} "
              f"p75 {q[4]:.3f} p95 {q[5]:.3f}")  # fmt: skip
    print(f"  {'refuse below':<14}{'own kept':>10}{'other refused':>15}")
    for threshold in (0.78, 0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86):
        kept = float(np.mean(own >= threshold))
        refused = float(np.mean(other < threshold))
        print(f"  {threshold:<14.2f}{kept:>10.1%}{refused:>15.1%}")


def measure_kb(quick: bool) -> None:
    """The answer check's threshold on the demo knowledge base (see the module docstring)."""
    import random

    from answers import build_knowledge_base
    from refusal import OUT_OF_DOMAIN_EN, OUT_OF_DOMAIN_RU

    from chat.answer.prompting import build_sources
    from chat.assess.evidence import MEANING_SOURCES, closest
    from knowledge.question import read
    from knowledge.retrieval.hybrid import search
    from knowledge.retrieval.types import SearchOptions

    build_knowledge_base()
    asked: list[tuple[str, str]] = [
        (item["group"], item["question"])
        for item in map(json.loads, (EVAL / "kb_dev_ru" / "questions.jsonl").open())
        if item["group"] in ("answerable", "trick")
    ]
    asked += [("unanswerable", q) for q in OUT_OF_DOMAIN_RU + OUT_OF_DOMAIN_EN]
    rng = random.Random(7)
    for language in ("ru", "en"):
        path = EVAL / "xquad" / f"xquad_{language}_questions.jsonl"
        questions = [json.loads(x)["question"] for x in path.open()]
        asked += [("unanswerable", q) for q in rng.sample(questions, 20 if quick else 150)]
    if quick:
        asked = asked[:20] + asked[-40:]
    found: dict[str, list[float]] = {}
    refused_by_search: dict[str, int] = {}
    for group, question in asked:
        reading = read(question)
        result = search(question, reading=reading, options=SearchOptions(answer=True))
        if not result.hits:
            refused_by_search[group] = refused_by_search.get(group, 0) + 1
            continue
        best = closest(build_sources(result, reading=reading)[:MEANING_SOURCES])
        if best is not None:
            found.setdefault(group, []).append(best)
    print("\ndemo knowledge base: the best unit of the sources the answer check reads")
    for group, values in found.items():
        q = [percentile(values, p) for p in (0, 5, 50, 95)]
        print(f"  {group:<13} {len(values):>4} passed the search ({refused_by_search.get(group, 0)} "
              f"refused by it): min {q[0]:.3f} p5 {q[1]:.3f} p50 {q[2]:.3f} p95 {q[3]:.3f}")  # fmt: skip
    answerable = np.array(found.get("answerable", [0.0]))
    others = np.array(found.get("unanswerable", [0.0]))
    print(f"  {'refuse below':<14}{'answerable kept':>17}{'unanswerable refused':>22}")
    for threshold in np.arange(0.83, 0.871, 0.005):
        print(f"  {threshold:<14.3f}{np.mean(answerable >= threshold):>17.1%}"
              f"{np.mean(others < threshold):>22.1%}")  # fmt: skip
    keep_all = np.floor(answerable.min() * 200) / 200
    print(f"  the highest threshold (0.005 steps) keeping every answerable one: {keep_all:.3f}")


def _equal_error(own: np.ndarray, other: np.ndarray) -> float:
    """The threshold where as many own passages fall below it as other articles' best units
    rise above it (0.0025 steps)."""
    grid = np.arange(0.70, 0.90, 0.0025)
    gaps = [abs(np.mean(own >= t) - np.mean(other < t)) for t in grid]
    return float(grid[int(np.argmin(gaps))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kb", action="store_true", help="the threshold on the demo knowledge base"
    )
    args = arguments(parser)  # --quick: 30 passages, 60 questions; its own knowledge base
    if args.kb:
        setup("answers", fresh=False)  # the demo knowledge base's settings, before Django's
    else:
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
        import django

        django.setup()
    from knowledge.embedding import E5Embedder
    from knowledge.retrieval.weights import weights

    model = E5Embedder(threads=os.cpu_count())
    pooled: dict[str, list] = {"own": [], "other": []}
    for language in ("ru", "en"):
        found = measure(language, args.quick, model)
        report(language, found)
        for key in pooled:
            pooled[key].extend(found[key])
    own, other = np.array(pooled["own"]), np.array(pooled["other"])
    equal = _equal_error(own, other)
    print(
        f"\nboth: equal error at {equal:.4f}: own kept {np.mean(own >= equal):.1%}, other "
        f"refused {np.mean(other < equal):.1%}"
    )
    # Across languages: English questions on the Russian passages and Russian questions on
    # the English ones (how much of them the one gate keeps).
    across: dict[str, list] = {"own": [], "other": []}
    for language, passages_in in (("en", "ru"), ("ru", "en")):
        found = measure(language, args.quick, model, passages_in=passages_in)
        report(f"{language} questions on {passages_in} passages", found)
        for key in across:
            across[key].extend(found[key])
    own_x, other_x = np.array(across["own"]), np.array(across["other"])
    equal_x = _equal_error(own_x, other_x)
    gate = weights().meaning.refuse_below
    print(
        f"\nacross languages: own passage's best p50 {np.median(own_x):.3f} (within one language "
        f"{np.median(own):.3f}); equal error at {equal_x:.4f}: own kept "
        f"{np.mean(own_x >= equal_x):.1%}, other refused {np.mean(other_x < equal_x):.1%}; "
        f"the answer check's gate ({gate}) keeps {np.mean(own_x >= gate):.1%} (within one "
        f"language {np.mean(own >= gate):.1%})"
    )
    print(
        f"\nboth: floor (another article's median) {np.median(other):.3f}, ceiling (own "
        f"passage's median) {np.median(own):.3f}, refusal keeping 99 % of own passages "
        f"{np.quantile(own, 0.01):.3f} (refuses {np.mean(other < np.quantile(own, 0.01)):.1%} "
        "of the other articles' best)"
    )
    if args.kb:
        try:
            measure_kb(args.quick)
        finally:
            teardown()


if __name__ == "__main__":
    main()
