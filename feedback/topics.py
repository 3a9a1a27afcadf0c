"""Topics over time on the feedback page: the questions of each day by topic (``feedback.tagging``).

Each question is counted once, under its first topic (the topic of the document it cites
first). The most asked topics of the period get a bar colour each; the rest are "other
topics". Refused questions (grouped as content gaps), empty or nonsense questions and
prohibited requests are buckets of their own, so noise never reads as a content gap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date
from urllib.parse import urlencode

from django.db.models import Count, F, QuerySet
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from chat.models import Message
from feedback import charts

TOP_TOPICS = 6
PALETTE = ["#2456c7", "#2f8f4e", "#d79a1e", "#0e7c86", "#8a4fbf", "#b5527a"]
BUCKET_COLOURS = {
    "other": "#7d8aa0",
    "gap": "#c2413a",
    "noise": "#c9ced6",
    "moderated": "#3d3d3d",
    "none": "#e6e9ee",
}


def _bucket_labels() -> dict[str, str]:
    return {
        "other": _("Other topics"),
        "gap": _("Refused: content gaps"),
        "noise": _("Noise: empty or nonsense"),
        "moderated": _("Prohibited requests"),
        "none": _("No topic"),
    }


def daily_topic_counts(messages: QuerySet[Message]) -> list[dict]:
    """(day, topic kind, first topic, questions) rows: one query."""
    return list(
        messages.annotate(day=TruncDate("created_at"), first=F("topics__0"))
        .values("day", "topic_kind", "first")
        .annotate(n=Count("pk"))
        .order_by()
    )


def _key(row: dict) -> str:
    kind = row["topic_kind"]
    if kind == Message.TopicKind.DOCUMENTS and row["first"]:
        return "topic:" + row["first"]
    return {
        Message.TopicKind.GAP: "gap",
        Message.TopicKind.NOISE: "noise",
        Message.TopicKind.MODERATED: "moderated",
    }.get(kind, "none")


def _journal_link(key: str, start: date, end: date) -> str:
    query = {"since": start.isoformat(), "until": end.isoformat()}
    if key.startswith("topic:"):
        query["topic"] = key[len("topic:") :]
    elif key in ("gap", "noise", "moderated"):
        query["topic_kind"] = key
    else:
        return ""
    return reverse("journal") + "?" + urlencode(query)


def topics_report(messages: QuerySet[Message], days: list[date]) -> dict:
    """The "topics over time" chart (SVG) and its table for the analytics page."""
    rows = daily_topic_counts(messages)
    totals: Counter[str] = Counter()
    for row in rows:
        totals[_key(row)] += row["n"]
    named = sorted((k for k in totals if k.startswith("topic:")), key=lambda k: (-totals[k], k))
    top = named[:TOP_TOPICS]
    labels = _bucket_labels()
    series = [charts.Series(f"t{i}", key[len("topic:") :], PALETTE[i]) for i, key in enumerate(top)]
    key_of = {key: f"t{i}" for i, key in enumerate(top)}
    for bucket in ("other", "gap", "noise", "moderated", "none"):
        series.append(charts.Series(bucket, labels[bucket], BUCKET_COLOURS[bucket]))
    per_day: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        key = _key(row)
        series_key = key_of.get(key, "other" if key.startswith("topic:") else key)
        per_day[row["day"]][series_key] += row["n"]
    counts: Counter[str] = Counter()
    for values in per_day.values():
        counts.update(values)
    total = sum(totals.values())
    start, end = days[0], days[-1]
    topic_of_series = {series_key: key for key, series_key in key_of.items()}
    table = [
        {
            "label": s.label,
            "colour": s.colour,
            "count": counts[s.key],
            "percent": round(counts[s.key] / total * 100) if total else 0,
            "link": _journal_link(topic_of_series.get(s.key, s.key), start, end),
        }
        for s in series
        if counts[s.key]
    ]
    other_topics = [
        {
            "label": key[len("topic:") :],
            "count": totals[key],
            "link": _journal_link(key, start, end),
        }
        for key in named[TOP_TOPICS : TOP_TOPICS + 20]
    ]
    chart = charts.stacked_days(
        days,
        [dict(per_day.get(day, {})) for day in days],
        series,
        _("Questions per day by topic"),
    )
    return {
        "topics_chart": mark_safe(chart),
        "topic_rows": table,
        "other_topic_rows": other_topics,
        "topic_questions": total,
    }
