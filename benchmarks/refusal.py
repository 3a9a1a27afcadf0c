"""Honest refusal: answerable questions answered, out-of-domain questions refused.

The knowledge base is XQuAD's 240 Wikipedia passages in Russian and in English, ingested as in
``benchmarks/retrieval.py`` (one passage = one document, sources "XQuAD ru" and "XQuAD en").
Answerable: all 1190 XQuAD questions in each language. Out of domain: the questions below,
written for this benchmark, Russian and English, on things those Wikipedia articles do not
cover (cooking, private life, the company's own VPN, salaries, today's weather ...).

A question is answered when at least one chunk passes the minimum score (the chat then calls
the LLM) and refused when none does (the canonical refusal, no LLM call). Every question goes
through ``knowledge.retrieval.hybrid.search`` exactly as the chat calls it; the best score of
each is kept, so the shares for any minimum score follow without searching again. The current
``KB_SEARCH_MIN_SCORE`` is checked by a second pass through search() with the setting itself.

Run: ``.venv/bin/python benchmarks/refusal.py [MIN_SCORE ...] [--quick]`` (minimum scores to
sweep around; default: the setting +- 0.08; ``--quick``: the passages and questions of
``retrieval.py --quick``).
"""

from __future__ import annotations

import argparse
import time

from _setup import arguments, percentile, setup, teardown
from retrieval import CachedEmbedder, ingest, load

OUT_OF_DOMAIN_RU = [
    "Как испечь шарлотку с яблоками?",
    "Какой пароль от корпоративного VPN?",
    "Какая зарплата у старшего тестировщика в нашей компании?",
    "Какая погода будет завтра в Москве?",
    "Сколько дней отпуска у меня осталось в этом году?",
    "Как записаться к стоматологу через Госуслуги?",
    "Посоветуй хороший сериал на выходные.",
    "Как помириться с девушкой после ссоры?",
    "Сколько минут варить гречку?",
    "Где в офисе получить новый пропуск?",
    "Когда выплатят квартальную премию?",
    "Как поменять масло в двигателе машины?",
    "Чем кормить котёнка в два месяца?",
    "Как подключиться к принтеру на третьем этаже?",
    "Какой сегодня курс доллара?",
    "Как приготовить борщ?",
    "Во сколько сегодня планёрка?",
    "Как оформить больничный в отделе кадров?",
    "Как сбросить пароль от рабочей почты?",
    "Какие цветы посадить на даче весной?",
    "Как выбрать кроссовки для бега?",
    "Кто выиграл вчерашний матч Спартака?",
    "Как избавиться от икоты?",
    "Где заказать пиццу рядом с офисом?",
    "Какой телефон у техподдержки 1С?",
    "Как подать заявку на ипотеку?",
    "Сколько стоит обед в нашей столовой?",
    "Как научить собаку команде «сидеть»?",
    "Какой дресс-код на новогоднем корпоративе?",
    "Как продлить лицензию антивируса на рабочем ноутбуке?",
    "Что подарить маме на день рождения?",
    "Как вывести пятно от кофе с рубашки?",
]

OUT_OF_DOMAIN_EN = [
    "How do I bake a chocolate cake without eggs?",
    "What is the Wi-Fi password in the meeting room?",
    "How much does a junior QA engineer earn at our company?",
    "What's the weather like in Berlin tomorrow?",
    "How many vacation days do I have left this year?",
    "Can you recommend a good sci-fi TV series?",
    "How do I fix a flat bicycle tire?",
    "What should I feed my puppy?",
    "How long should I boil an egg for a runny yolk?",
    "When is the next company all-hands meeting?",
    "How do I reset my laptop's BIOS password?",
    "What time does the office canteen close on Fridays?",
    "How do I ask my manager for a raise?",
    "Which running shoes are best for flat feet?",
    "How do I book a meeting room in Outlook?",
    "What's the best way to learn to play the guitar?",
    "How do I cancel my gym membership?",
    "Who won the football match last night?",
    "How can I get rid of a headache quickly?",
    "Where can I park my car near the office?",
    "How do I make sourdough bread at home?",
    "What is our policy on working from home on Fridays?",
    "How do I install the VPN client on my phone?",
    "How do I expense a taxi ride?",
    "Which houseplants survive in low light?",
    "How do I get over a breakup?",
    "What's the euro exchange rate today?",
    "How do I change the toner in the office printer?",
    "What is a good birthday present for a ten-year-old?",
    "How many calories are in a banana?",
    "How do I remove a red wine stain from a carpet?",
    "When will my annual bonus be paid?",
]


def best_scores(questions: list[str], embedder, gold_chunks: list[int | None] | None = None):
    """The best calibrated score of each question (minimum score off), and the score of the
    gold chunk when it is among the candidates (-1 otherwise)."""
    from knowledge.retrieval.hybrid import SearchOptions, search

    options = SearchOptions(min_score=-1.0)
    best, gold = [], []
    for i, question in enumerate(questions):
        result = search(question, options=options, embedder=embedder)
        best.append(result.candidates[0].score if result.candidates else -1.0)
        if gold_chunks is not None:
            by_id = {c.chunk_id: c.score for c in result.hits}
            gold.append(by_id.get(gold_chunks[i], -1.0))
    return best, gold


def share(values: list[float], threshold: float, above: bool) -> float:
    return sum((v >= threshold) == above for v in values) / len(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", nargs="*", type=float, help="minimum scores to sweep")
    args = arguments(parser)
    setup("refusal")
    from knowledge.embedding import get_embedder
    from knowledge.models import Chunk
    from knowledge.retrieval.weights import weights

    embedder = CachedEmbedder(get_embedder())
    answerable: list[str] = []
    gold: list[int | None] = []
    for lang in ("ru", "en"):
        passages, questions = load(lang)
        started = time.perf_counter()
        source_id = ingest(lang, passages)
        chunk_of = {
            c.version.filename.removesuffix(".txt"): c.pk
            for c in Chunk.objects.filter(source_id=source_id).select_related("version")
        }
        print(
            f"XQuAD {lang}: {len(passages)} passages ingested in {time.perf_counter() - started:.0f} s"
        )
        answerable += [q["question"] for q in questions]
        gold += [chunk_of.get(q["gold_pid"]) for q in questions]
    outside = OUT_OF_DOMAIN_RU + OUT_OF_DOMAIN_EN
    print(
        f"{len(answerable)} answerable questions (XQuAD ru + en), {len(outside)} out of domain "
        f"({len(OUT_OF_DOMAIN_RU)} ru, {len(OUT_OF_DOMAIN_EN)} en); model {embedder.model_id}"
    )
    started = time.perf_counter()
    in_best, in_gold = best_scores(answerable, embedder, gold)
    out_best, _ = best_scores(outside, embedder)
    print(f"searched in {time.perf_counter() - started:.0f} s\n")
    print_distribution("answerable", in_best)
    print_distribution("out of domain", out_best)

    configured = weights()
    current = configured.gate.min_score
    sweep = args.sweep or [round(current + step / 100, 3) for step in range(-8, 9, 2)]
    print(
        f"\nKB_SEARCH_MIN_SCORE = {current}  (fusion {configured.fusion.method}, dense weight "
        f"{configured.fusion.dense_weight})"
    )
    print(f"{'min score':>10} {'answered':>9} {'refused':>8} {'gold in hits':>13}   both >= 95 %")
    for threshold in sorted({*sweep, current}):
        answered = share(in_best, threshold, True)
        refused = share(out_best, threshold, False)
        gold_found = share(in_gold, threshold, True)
        mark = "yes" if answered >= 0.95 and refused >= 0.95 else ""
        star = " <- setting" if threshold == current else ""
        print(
            f"{threshold:>10.3f} {answered:>9.1%} {refused:>8.1%} {gold_found:>13.1%}   {mark}{star}"
        )
    best = max(
        sorted({round(x / 1000, 3) for x in range(0, 1001, 5)}),
        key=lambda t: (min(share(in_best, t, True), share(out_best, t, False)), -abs(t - current)),
    )
    print(
        f"\nbest single minimum score on this data: {best:.3f} (answered "
        f"{share(in_best, best, True):.1%}, refused {share(out_best, best, False):.1%})"
    )
    verify(answerable, outside, embedder, in_best, out_best, current)
    print("\nout-of-domain questions answered at the setting (best score):")
    for question, score in sorted(zip(outside, out_best, strict=True), key=lambda x: -x[1]):
        if score >= current:
            print(f"  {score:.3f}  {question}")
    teardown()


def print_distribution(name: str, values: list[float]) -> None:
    points = " ".join(f"p{p} {percentile(values, p):.3f}" for p in (1, 5, 10, 25, 50, 75, 95))
    print(f"best score, {name:<14} {points}")


def verify(answerable, outside, embedder, in_best, out_best, current) -> None:
    """The real thing: search() with the setting's minimum score, as the chat calls it."""
    from knowledge.retrieval.hybrid import search

    found_in = sum(search(q, embedder=embedder).found for q in answerable)
    found_out = sum(search(q, embedder=embedder).found for q in outside)
    expected_in = sum(s >= current for s in in_best)
    expected_out = sum(s >= current for s in out_best)
    print(
        f"\nthrough search() with the settings: answered {found_in}/{len(answerable)} "
        f"({found_in / len(answerable):.1%}), refused {len(outside) - found_out}/{len(outside)} "
        f"({1 - found_out / len(outside):.1%})"
        + (
            ""
            if (found_in, found_out) == (expected_in, expected_out)
            else "  (the sweep is of the minimum score alone; search() also lets a question whose"
            " words the knowledge base uses pass at KB_SEARCH_MIN_SCORE_KNOWN)"
        )
    )


if __name__ == "__main__":
    main()
