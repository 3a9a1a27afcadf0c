"""The analytics page's context: the figures of ``feedback.analytics`` and their SVG charts."""

from __future__ import annotations

from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from feedback import analytics, charts
from feedback.gaps import content_gaps
from feedback.topics import topics_report

OUTCOME_SERIES = [
    charts.Series("answer", gettext_lazy("Answers"), "#2f8f4e"),
    charts.Series("partial", gettext_lazy("Partial answers"), "#d79a1e"),
    charts.Series("clarification", gettext_lazy("Clarifications"), "#2456c7"),
    charts.Series("refusal", gettext_lazy("Refusals"), "#c2413a"),
    charts.Series("error", gettext_lazy("Errors"), "#98a2b3"),
]


def analytics_report(filters: analytics.ReportFilters, *, viewer, embedder=None) -> dict:
    """Everything the analytics page shows ``viewer`` for ``filters``, in a fixed number of
    queries. Counts take every question; what shows text (answers, documents, topics) takes
    what ``viewer`` may read, and an answer about another source says so without its text."""
    questions = analytics.questions(filters)
    ratings = analytics.ratings(filters)
    days = filters.days
    per_day = analytics.daily_outcomes(questions, days)
    rating_days = analytics.daily_ratings(ratings, days)
    totals = analytics.totals(per_day, rating_days)
    most_used, least_used = analytics.document_use(questions, filters.source_id, viewer)
    never, never_total = analytics.never_used(questions, filters.source_id, viewer)
    stages = analytics.latency(questions)
    return {
        "totals": totals,
        "down_percent": round(totals.down_share * 100),
        "shares": [
            {
                "key": s.key,
                "label": str(s.label),
                "colour": s.colour,
                "count": totals.outcomes.get(s.key, 0),
                "percent": round(totals.share(s.key) * 100),
            }
            for s in OUTCOME_SERIES
        ],
        "questions_chart": mark_safe(
            charts.stacked_days(days, per_day, OUTCOME_SERIES, _("Questions per day by outcome"))
        ),
        "shares_chart": mark_safe(
            charts.share_bar(
                [(s.label, totals.outcomes.get(s.key, 0), s.colour) for s in OUTCOME_SERIES],
                _("Shares of outcomes"),
            )
        ),
        "ratings_chart": mark_safe(
            charts.diverging_days(
                days,
                [d["up"] for d in rating_days],
                [d["down"] for d in rating_days],
                _("Ratings per day: helpful above the line, not helpful below"),
            )
        ),
        "worst": analytics.worst_rated(ratings, viewer),
        "helpful": analytics.recent_helpful(ratings, viewer),
        "most_used": most_used,
        "least_used": least_used,
        "never_used": never,
        "never_used_total": never_total,
        "gaps": content_gaps(questions.readable_by(viewer), embedder),
        **topics_report(questions.readable_by(viewer), days),
        "stages": stages,
        "latency_chart": mark_safe(
            charts.latency_bars(
                [(s["label"], s["p50"], s["p95"]) for s in stages],
                _("Latency per pipeline stage: median and 95th percentile"),
            )
        ),
        "percentiles": [int(p * 100) for p in analytics.PERCENTILES],
    }
