"""The staff analytics page (/feedback/) on a large journal: render time and SQL queries.

Builds a journal in bulk on the benchmark's own embedded database — messages of every
outcome spread over the last 30 days, with per-stage timings, three sources per answer over
300 documents (some never used), ratings with reasons, ~150 distinct refused questions — and
renders the page through the Django test client as a staff user, at 1,000 and 10,000 rows.
The documents sit in ten folders (ten topics), and the journal's turns get their topics as
``manage.py topics`` gives them to turns stored without any (its time is printed too).

For each size: the first render ("cold": embeds the refused questions not seen before and
stores their vectors) and the median of the next renders ("warm"), each with its number of
SQL queries (django.test.utils.CaptureQueriesContext). The query count must not grow with
the rows; the goal is under 1 s warm at 10,000 rows.

Run: ``.venv/bin/python benchmarks/analytics.py [--sizes 1000,10000] [--repeat 5] [--quick]``
(``--quick``: 100 and 1,000 rows, two warm renders).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _setup import arguments, setup, teardown

TOPICS = [
    "отчёт о дефекте",
    "регрессионное тестирование",
    "тест-план",
    "смоук-тест",
    "нагрузочное тестирование",
    "API",
    "мобильное приложение",
    "чек-лист",
    "баг-трекер",
]
ANSWERED = [
    "Как составить {t}?",
    "Что такое {t}?",
    "Кто отвечает за {t}?",
    "Где найти шаблон: {t}?",
    "Чем {t} отличается от остального?",
]
REFUSED = {
    "отпуск": [
        "Как оформить отпуск?",
        "Сколько дней отпуска положено?",
        "Как перенести отпуск?",
        "Кто согласует отпуск?",
        "Можно ли взять отпуск за свой счёт?",
    ],
    "vpn": [
        "Как подключиться к VPN?",
        "Не работает VPN из дома",
        "Где взять доступ к VPN?",
        "VPN отключается каждые 5 минут",
        "Какой VPN-клиент ставить на Mac?",
    ],
    "зарплата": [
        "Когда выплачивают зарплату?",
        "Как получить расчётный листок?",
        "Почему задержали зарплату?",
        "Где посмотреть премию?",
    ],
    "столовая": [
        "Во сколько открывается столовая?",
        "Есть ли в столовой вегетарианское меню?",
        "Сколько стоит обед в столовой?",
    ],
    "пропуск": [
        "Как восстановить пропуск?",
        "Что делать, если забыл пропуск?",
        "Как заказать гостевой пропуск?",
    ],
    "ноутбук": [
        "Как заменить рабочий ноутбук?",
        "Ноутбук не включается, куда писать?",
        "Можно ли поставить Linux на рабочий ноутбук?",
    ],
}
OUTCOMES = (
    ["answer"] * 60 + ["partial"] * 10 + ["refusal"] * 20 + ["clarification"] * 8 + ["error"] * 2
)
REASONS = ["wrong", "incomplete", "wrong_source", "outdated", "other"]


def make_base(rng: random.Random):
    """Sources, 300 documents with a ready version each (a fifth never used), users."""
    from django.contrib.auth import get_user_model

    from chat.models import AssistantProfile
    from knowledge.models import Document, DocumentVersion, Source

    sources = [Source.objects.create(name=n) for n in ("Wiki", "Specs", "Checklists")]
    documents = Document.objects.bulk_create(
        Document(
            source=sources[i % 3], path=f"section-{i % 10}/doc-{i}.md", title=f"Документ {i:03d}"
        )
        for i in range(300)
    )
    versions = DocumentVersion.objects.bulk_create(
        DocumentVersion(
            document=d,
            number=1,
            label="v1",
            sha256=f"{d.pk:064x}",
            file="x",
            filename="x",
            status="ready",
        )
        for d in documents
    )
    for document, version in zip(documents, versions, strict=True):
        document.current_version = version
    Document.objects.bulk_update(documents, ["current_version"])
    User = get_user_model()
    users = User.objects.bulk_create(User(username=f"user{i}") for i in range(50))
    staff = User.objects.create_superuser("bench-staff", "staff@example.com", "x")
    profiles = list(AssistantProfile.objects.all()) or [None]
    return documents[:240], versions, users, staff, profiles


def add_journal(n: int, base, rng: random.Random) -> None:
    """``n`` more messages (with sources, timings and ratings), in bulk."""
    from django.db import connection

    from chat.models import Conversation, Message, MessageSource
    from feedback.models import Rating

    documents, versions, users, _staff, profiles = base
    version_of = {v.document_id: v for v in versions}
    conversations = Conversation.objects.bulk_create(
        Conversation(user=rng.choice(users), profile=rng.choice(profiles), title="bench")
        for _ in range(max(n // 5, 1))
    )
    messages = []
    for _ in range(n):
        outcome = rng.choice(OUTCOMES)
        if outcome == "refusal":
            question = rng.choice(rng.choice(list(REFUSED.values())))
            if rng.random() < 0.5:  # a few spellings of the same question
                question = (
                    f"{question} {rng.choice(['', 'Подскажите.', 'Срочно', '(для новичка)'])}"
                )
        else:
            question = rng.choice(ANSWERED).format(t=rng.choice(TOPICS))
        llm = rng.random() < 0.7
        timings = {
            "rewrite_ms": round(rng.uniform(0, 30), 1),
            "search_ms": round(rng.lognormvariate(4.5, 0.4), 1),
        }
        if llm and outcome in ("answer", "partial"):
            timings["llm_first_token_ms"] = round(rng.lognormvariate(6, 0.5), 1)
            timings["llm_ms"] = round(
                timings["llm_first_token_ms"] + rng.lognormvariate(7.5, 0.4), 1
            )
        timings["total_ms"] = round(sum(timings.values()) + rng.uniform(5, 20), 1)
        messages.append(
            Message(
                conversation=rng.choice(conversations),
                question=question,
                outcome=outcome,
                answer="…",
                mode="llm" if llm else "extractive",
                status="done",
                timings=timings,
            )
        )
    messages = Message.objects.bulk_create(messages, batch_size=2000)
    ids = [m.pk for m in messages]
    with connection.cursor() as cursor:  # auto_now_add ignores given dates: spread them here
        cursor.execute(
            "UPDATE chat_message SET created_at = now() - (id * 7919 %% 43000) * interval '1 minute'"
            " WHERE id BETWEEN %s AND %s",
            [min(ids), max(ids)],
        )
    sources, ratings = [], []
    for message in messages:
        if message.outcome in ("answer", "partial"):
            chosen = {documents[min(int(rng.paretovariate(1.2)) - 1, 239)] for _ in range(3)}
            for number, document in enumerate(sorted(chosen, key=lambda d: d.pk), start=1):
                version = version_of[document.pk]
                sources.append(
                    MessageSource(
                        message=message,
                        number=number,
                        document=document,
                        version=version,
                        title=document.title,
                        version_label="v1",
                        section=f"{number}.2",
                        url=f"/documents/{document.pk}/?chunk=1",
                        score=rng.random(),
                        cited=number == 1,
                    )
                )
        if message.outcome != "error" and rng.random() < 0.3:
            down = rng.random() < 0.4
            ratings.append(
                Rating(
                    message=message,
                    user=message.conversation.user,
                    value="down" if down else "up",
                    reasons=rng.sample(REASONS, rng.randint(1, 2)) if down else [],
                    comment="Не то" if down and rng.random() < 0.3 else "",
                )
            )
    MessageSource.objects.bulk_create(sources, batch_size=5000)
    Rating.objects.bulk_create(ratings, batch_size=5000)
    with connection.cursor() as cursor:
        # Planner statistics, as autovacuum would gather them on a live journal; without them
        # the planner takes the freshly bulk-loaded tables for empty.
        cursor.execute(
            "ANALYZE chat_message, chat_messagesource, feedback_rating, knowledge_document"
        )


def render(client) -> tuple[float, int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = client.get("/feedback/")
        elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.status_code
    return elapsed, len(queries), len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=5)
    args = arguments(parser)
    if args.quick:
        args.sizes, args.repeat = "100,1000", 2
    sizes = [int(s) for s in args.sizes.split(",")]
    setup("analytics")
    try:
        from django.test import Client

        from feedback.tagging import tag_untagged
        from knowledge.embedding import get_embedder

        get_embedder().embed_query("прогрев")  # load the model outside the measurements
        rng = random.Random(8)
        base = make_base(rng)
        client = Client(HTTP_HOST="localhost")  # an allowed host; the test client says testserver
        client.force_login(base[3])
        print(
            f"{'rows':>7} {'cold s':>8} {'queries':>8} {'warm s (median)':>16} "
            f"{'warm max':>9} {'queries':>8} {'page KB':>8}"
        )
        rows, results, tagging = 0, [], []
        for size in sizes:
            add_journal(size - rows, base, rng)
            rows = size
            started = time.perf_counter()
            tag_untagged()  # what manage.py topics does after an upgrade
            tagging.append((size, time.perf_counter() - started))
            cold, cold_queries, _ = render(client)
            warm = [render(client) for _ in range(args.repeat)]
            times = [w[0] for w in warm]
            queries = {w[1] for w in warm}
            results.append((size, statistics.median(times), queries))
            print(
                f"{size:>7} {cold:>8.3f} {cold_queries:>8} {statistics.median(times):>16.3f} "
                f"{max(times):>9.3f} {'/'.join(map(str, sorted(queries))):>8} {warm[0][2] / 1024:>8.0f}"
            )
        (small, t_small, q_small), (big, t_big, q_big) = results[0], results[-1]
        print(
            f"\n{big // small}x the rows: {t_big / t_small:.2f}x the warm render time; "
            f"queries {sorted(q_small)} -> {sorted(q_big)} "
            f"({'constant' if q_small == q_big else 'GROWING'})"
        )
        print(f"goal under 1 s at {big} rows: {'met' if t_big < 1 else 'NOT met'} ({t_big:.3f} s)")
        for size, seconds in tagging:
            print(
                f"topics for the turns added up to {size} rows (manage.py topics): {seconds:.2f} s"
            )
    finally:
        teardown()


if __name__ == "__main__":
    main()
