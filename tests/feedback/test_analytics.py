"""The staff analytics page: figures aggregated in SQL, filters, a fixed number of queries."""

from __future__ import annotations

from datetime import date

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chat.models import AssistantProfile
from feedback import analytics
from feedback.analytics import ReportFilters
from knowledge.models import Source
from tests.feedback.conftest import day, make_answer, make_document, rate

PERIOD = {"start": "2025-03-01", "end": "2025-03-10"}


def report_filters(**extra) -> ReportFilters:
    return ReportFilters.from_query({**PERIOD, **extra})


def test_the_page_is_for_staff_only(client, alice, bob):
    url = reverse("feedback")
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    client.force_login(bob)
    assert client.get(url).status_code == 403
    assert client.post(reverse("feedback_export"), {"rating": ["1"]}).status_code == 403
    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 200
    assert '<a href="/feedback/" aria-current="page">Feedback</a>' in response.content.decode()


def test_answers_partial_answers_refusals_and_clarifications_are_counted_separately(bob, wiki):
    doc = make_document(wiki, "Дефекты")
    for outcome, n in [("answer", 3), ("partial", 2), ("refusal", 4), ("clarification", 1)]:
        for i in range(n):
            make_answer(
                bob,
                f"{outcome} {i}",
                outcome=outcome,
                documents=[doc],
                created_at=day("2025-03-02"),
            )
    make_answer(bob, "вне периода", outcome="refusal", created_at=day("2025-02-27"))
    filters = report_filters()
    days = analytics.daily_outcomes(analytics.questions(filters), filters.days)
    totals = analytics.totals(
        days, analytics.daily_ratings(analytics.ratings(filters), filters.days)
    )
    assert totals.questions == 10
    assert {k: totals.outcomes[k] for k in ("answer", "partial", "refusal", "clarification")} == {
        "answer": 3,
        "partial": 2,
        "refusal": 4,
        "clarification": 1,
    }
    assert totals.share("refusal") == 0.4
    assert len(days) == 10 and days[1]["day"] == date(2025, 3, 2) and days[1]["total"] == 10
    assert days[0]["total"] == 0  # every day of the range has a bar, empty or not


def test_worst_rated_lists_thumbs_down_with_their_sources_first(client, alice, bob, wiki):
    old = make_document(wiki, "Старый регламент")
    new = make_document(wiki, "Новый регламент")
    bad = make_answer(
        bob, "Какой срок хранения логов?", documents=[old, new], created_at=day("2025-03-03")
    )
    good = make_answer(bob, "Что такое дефект?", documents=[new], created_at=day("2025-03-03"))
    rate(bad, bob, "down", ["outdated"], "Срок поменяли в прошлом году")
    rate(good, bob, "up")
    client.force_login(alice)
    response = client.get(reverse("feedback"), {"start": "2000-01-01"})
    worst = response.context["worst"]
    assert [m.pk for m in worst] == [bad.pk]
    html = response.content.decode()
    section = html[html.index('id="worst-rated"') : html.index('id="content-gaps"')]
    assert "Какой срок хранения логов?" in section and "Срок поменяли в прошлом году" in section
    for source in bad.sources.all():
        assert f'href="{source.url}"' in section
    assert "Что такое дефект?" in section  # listed among the recently helpful, not the worst
    assert response.context["totals"].up == 1 and response.context["totals"].down == 1


def test_most_least_and_never_used_documents(alice, bob, wiki):
    popular, rare, unused = (make_document(wiki, t) for t in ("Популярный", "Редкий", "Забытый"))
    for i in range(3):
        make_answer(bob, f"q{i}", documents=[popular], created_at=day("2025-03-04"))
    make_answer(bob, "q-rare", documents=[rare, popular], created_at=day("2025-03-04"))
    questions = analytics.questions(report_filters())
    most, least = analytics.document_use(questions, None, alice)
    assert [(r["title"], r["answers"]) for r in most] == [
        ("Популярный", 4),
        ("Редкий", 1),
    ]
    assert least == []  # both already shown among the most used
    most, least = analytics.document_use(questions, None, alice, limit=1)
    assert [r["title"] for r in most] == ["Популярный"]
    assert [r["title"] for r in least] == ["Редкий"]
    never, total = analytics.never_used(questions, None, alice)
    assert [d.title for d in never] == ["Забытый"] and total == 1


def test_latency_percentiles_per_stage(bob):
    for ms in range(1, 101):
        make_answer(
            bob,
            f"q{ms}",
            timings={"search_ms": float(ms), "total_ms": float(ms * 10), "llm_ms": 5.0},
            created_at=day("2025-03-05"),
        )
    make_answer(bob, "no timings", timings={"rewrite_ms": 0.0}, created_at=day("2025-03-05"))
    stages = {s["key"]: s for s in analytics.latency(analytics.questions(report_filters()))}
    assert stages["search_ms"]["count"] == 100
    assert stages["search_ms"]["p50"] == 50.5  # percentile_cont interpolates
    assert round(stages["search_ms"]["p95"], 2) == 95.05
    assert stages["total_ms"]["values"][3] == 990.1
    assert (
        stages["llm_first_token_ms"]["count"] == 0 and stages["llm_first_token_ms"]["p50"] is None
    )


def test_filters_by_date_source_and_profile(alice, bob, wiki):
    specs = Source.objects.create(name="Specs")
    wiki_doc, spec_doc = make_document(wiki, "Вики"), make_document(specs, "ТЗ")
    tester = AssistantProfile.objects.create(name="Tester", system_instruction="-")
    make_answer(bob, "wiki", documents=[wiki_doc], created_at=day("2025-03-06"))
    make_answer(bob, "spec", documents=[spec_doc], profile=tester, created_at=day("2025-03-06"))
    make_answer(bob, "late", documents=[spec_doc], created_at=day("2025-03-11"))

    def asked(**extra) -> list[str]:
        return sorted(
            analytics.questions(report_filters(**extra)).values_list("question", flat=True)
        )

    assert asked() == ["spec", "wiki"]
    assert asked(source=str(specs.pk)) == ["spec"]
    assert asked(profile=str(tester.pk)) == ["spec"]
    assert asked(end="2025-03-11", source=str(specs.pk)) == ["late", "spec"]
    never, _ = analytics.never_used(
        analytics.questions(report_filters(source=str(wiki.pk))), wiki.pk, alice
    )
    assert never == []


def test_filters_fall_back_to_the_last_thirty_days():
    filters = ReportFilters.from_query({"start": "not a date", "source": "x"})
    assert (filters.end - filters.start).days == 29 and filters.source_id is None
    swapped = ReportFilters.from_query({"start": "2025-05-10", "end": "2025-05-01"})
    assert swapped.start == swapped.end == date(2025, 5, 1)


def test_the_charts_are_inline_svg_and_nothing_loads_from_outside(client, alice, bob, wiki):
    doc = make_document(wiki, "Док")
    rate(make_answer(bob, documents=[doc]), bob, "down", ["wrong"])
    client.force_login(alice)
    html = client.get(reverse("feedback")).content.decode()
    assert html.count('<svg class="chart"') == 5  # questions, outcomes, ratings, latency, topics
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html


def test_an_htmx_filter_request_gets_only_the_report(client, alice):
    client.force_login(alice)
    response = client.get(reverse("feedback"), PERIOD, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="report"') and "<html" not in html
    assert "HX-Request" in response["Vary"]


def page_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("feedback"), {"start": "2000-01-01"})
    assert response.status_code == 200
    return len(queries)


def add_journal(bob, docs, n: int, offset: int) -> None:
    for i in range(offset, offset + n):
        outcome = ["answer", "partial", "refusal", "clarification"][i % 4]
        message = make_answer(
            bob, f"Вопрос номер {i % 3}", outcome=outcome, documents=docs[: 1 + i % len(docs)]
        )
        rate(message, bob, "down" if i % 2 else "up", ["wrong"] if i % 2 else [])


def test_the_number_of_queries_does_not_grow_with_the_journal(client, alice, bob, wiki):
    docs = [make_document(wiki, f"Документ {i}") for i in range(4)]
    client.force_login(alice)
    add_journal(bob, docs, 4, 0)
    page_queries(client)  # first view: stores the refused questions' vectors
    small = page_queries(client)
    add_journal(bob, docs, 40, 4)
    page_queries(client)
    assert page_queries(client) == small
