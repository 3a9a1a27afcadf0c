"""The staff analytics page's figures, aggregated in SQL with a fixed number of queries.

Questions (and what is derived from them: outcome shares, citations, content gaps, latency)
are those asked in the date range; ratings are those given in it. The source filter keeps the
answers that used a document of that source (refusals use none, so they drop out); the
profile filter keeps the conversations held with that assistant profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.contrib.postgres.fields import ArrayField
from django.db.models import (
    Aggregate,
    Count,
    Exists,
    FloatField,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Window,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from chat.models import Message, MessageSource
from feedback.models import Rating
from knowledge.models import Document
from portal.params import id_param

OUTCOMES = ["answer", "partial", "refusal", "clarification", "error"]
STAGES = [
    ("rewrite_ms", _("Question rewrite")),
    ("search_ms", _("Search")),
    ("llm_first_token_ms", _("LLM first token")),
    ("llm_ms", _("LLM generation")),
    ("total_ms", _("Total")),
]
PERCENTILES = (0.5, 0.9, 0.95, 0.99)
DEFAULT_DAYS = 30
MAX_DAYS = 366


class Percentiles(Aggregate):
    """PostgreSQL's ``percentile_cont(ARRAY[...]) WITHIN GROUP (ORDER BY expr)``: one array."""

    function = "percentile_cont"
    template = (
        "%(function)s(ARRAY[%(fractions)s]::float8[]) WITHIN GROUP (ORDER BY %(expressions)s)"
    )
    output_field = ArrayField(FloatField())

    def __init__(self, expression, fractions=PERCENTILES, **extra):
        super().__init__(expression, fractions=", ".join(str(float(f)) for f in fractions), **extra)


@dataclass
class ReportFilters:
    start: date
    end: date  # inclusive
    source_id: int | None = None
    profile_id: int | None = None

    @classmethod
    def from_query(cls, query) -> ReportFilters:
        """From the page's GET parameters; anything unreadable falls back to the default."""
        today = timezone.localdate()
        end = _date(query.get("end")) or today
        start = _date(query.get("start")) or end - timedelta(days=DEFAULT_DAYS - 1)
        start = max(min(start, end), end - timedelta(days=MAX_DAYS - 1))
        return cls(start, end, _int(query.get("source")), _int(query.get("profile")))

    @property
    def bounds(self) -> tuple[datetime, datetime]:
        start = timezone.make_aware(datetime.combine(self.start, time.min))
        end = timezone.make_aware(datetime.combine(self.end + timedelta(days=1), time.min))
        return start, end

    @property
    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]


def _date(value) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def _int(value) -> int | None:
    return id_param(value)


def _used_source(source_id: int, message_ref: str) -> Exists:
    return Exists(
        MessageSource.objects.filter(message=OuterRef(message_ref), document__source_id=source_id)
    )


def questions(filters: ReportFilters) -> QuerySet[Message]:
    """Finished messages asked in the range, for the profile and source chosen."""
    start, end = filters.bounds
    rows = Message.objects.filter(
        status=Message.Status.DONE, created_at__gte=start, created_at__lt=end
    )
    if filters.profile_id:
        rows = rows.filter(conversation__profile_id=filters.profile_id)
    if filters.source_id:
        rows = rows.filter(_used_source(filters.source_id, "pk"))
    return rows


def ratings(filters: ReportFilters) -> QuerySet[Rating]:
    """Ratings given in the range, of answers for the profile and source chosen."""
    rows = Rating.objects.given_between(*filters.bounds)
    if filters.profile_id:
        rows = rows.filter(message__conversation__profile_id=filters.profile_id)
    if filters.source_id:
        rows = rows.filter(_used_source(filters.source_id, "message_id"))
    return rows


def daily_outcomes(messages: QuerySet[Message], days: list[date]) -> list[dict]:
    """One row per day of the range: {"day", "total", and a count per outcome}."""
    counts = {outcome: Count("pk", filter=Q(outcome=outcome)) for outcome in OUTCOMES}
    found = {
        row["day"]: row
        for row in messages.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(total=Count("pk"), **counts)
        .order_by("day")
    }
    empty = dict.fromkeys(["total", *OUTCOMES], 0)
    return [found.get(day, {**empty, "day": day}) for day in days]


def daily_ratings(rows: QuerySet[Rating], days: list[date]) -> list[dict]:
    """One row per day of the range: {"day", "up", "down"}."""
    found = {
        row["day"]: row
        for row in rows.annotate(day=TruncDate("updated_at"))
        .values("day")
        .annotate(up=Count("pk", filter=Q(value="up")), down=Count("pk", filter=Q(value="down")))
        .order_by("day")
    }
    return [found.get(day, {"day": day, "up": 0, "down": 0}) for day in days]


def _sources_prefetch() -> Prefetch:
    return Prefetch("sources", queryset=MessageSource.objects.order_by("number"))


def worst_rated(rows: QuerySet[Rating], viewer, limit: int = 20) -> list[Message]:
    """Answers with a thumbs down, most thumbs down first, with their sources and ratings;
    ``hidden`` when ``viewer`` may not read a source of theirs."""
    ranked = list(
        rows.values("message")
        .annotate(
            down=Count("pk", filter=Q(value="down")),
            up=Count("pk", filter=Q(value="up")),
            last=Max("updated_at"),
        )
        .filter(down__gt=0)
        .order_by("-down", "up", "-last", "-message")[:limit]
        .values_list("message", flat=True)
    )
    messages = (
        Message.objects.with_access(viewer)
        .filter(pk__in=ranked)
        .select_related("conversation__profile", "conversation__user")
    )
    messages = messages.prefetch_related(
        _sources_prefetch(),
        Prefetch("ratings", queryset=rows.filter(value="down").order_by("-updated_at")),
    )
    by_pk = {m.pk: m for m in messages}
    return [by_pk[pk] for pk in ranked if pk in by_pk]


def recent_helpful(rows: QuerySet[Rating], viewer, limit: int = 10) -> list[Rating]:
    """The latest thumbs up: answers worth keeping as regression cases too (``hidden`` when
    ``viewer`` may not read a source of theirs)."""
    return list(
        rows.with_access(viewer)
        .filter(value="up")
        .select_related("message")
        .order_by("-updated_at", "-pk")[:limit]
    )


def document_use(messages: QuerySet[Message], source_id: int | None, viewer, limit: int = 10):
    """(most used, least used) documents ``viewer`` may read among the sources of the answers.

    Grouped by document id alone (no joins while counting), every used document in one row;
    then the titles of the few shown, in a second query.
    """
    used = MessageSource.objects.filter(
        message__in=messages, document__in=Document.objects.visible_to(viewer).values("pk")
    )
    if source_id:
        used = used.filter(document__source_id=source_id)
    counts = list(
        used.values("document")
        .annotate(answers=Count("message", distinct=True), cited=Count("pk", filter=Q(cited=True)))
        .order_by()
    )
    counts.sort(key=lambda row: (-row["answers"], -row["cited"], row["document"]))
    most = counts[:limit]
    least = [row for row in counts[::-1][:limit] if row not in most]
    documents = Document.objects.select_related("source").in_bulk(
        [row["document"] for row in most + least]
    )
    for row in most + least:
        row["title"] = documents[row["document"]].title
        row["source"] = documents[row["document"]].source.name
    return most, least


def never_used(messages: QuerySet[Message], source_id: int | None, viewer, limit: int = 30):
    """Indexed documents ``viewer`` may read that no answer in the range used, and how many
    there are in all."""
    documents = Document.objects.visible_to(viewer).live().filter(current_version__isnull=False)
    if source_id:
        documents = documents.filter(source_id=source_id)
    rows = list(
        documents.filter(
            ~Exists(MessageSource.objects.filter(document=OuterRef("pk"), message__in=messages))
        )
        # The total rides along on every row (a window over the whole result, computed before
        # LIMIT), so the count costs no second query.
        .annotate(total=Window(Count("pk")))
        .select_related("source")
        .order_by("source__priority", "title")[:limit]
    )
    return rows, (rows[0].total if rows else 0)


def latency(messages: QuerySet[Message]) -> list[dict]:
    """Percentiles (ms) of each pipeline stage over the messages that recorded it."""
    aggregates = {}
    for key, _label in STAGES:
        value = Cast(KT(f"timings__{key}"), FloatField())
        aggregates[f"{key}__p"] = Percentiles(value)
        aggregates[f"{key}__n"] = Count(KT(f"timings__{key}"))
    found = messages.aggregate(**aggregates)
    rows = []
    for key, label in STAGES:
        values = found[f"{key}__p"] or [None] * len(PERCENTILES)
        rows.append(
            {
                "key": key,
                "label": str(label),
                "count": found[f"{key}__n"],
                "values": values,
                "p50": values[0],
                "p95": values[2],
            }
        )
    return rows


@dataclass
class Totals:
    questions: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    up: int = 0
    down: int = 0

    def share(self, outcome: str) -> float:
        return self.outcomes.get(outcome, 0) / self.questions if self.questions else 0.0

    @property
    def down_share(self) -> float:
        return self.down / (self.up + self.down) if self.up + self.down else 0.0


def totals(days: list[dict], rating_days: list[dict]) -> Totals:
    """Sums over the daily rows (no extra query)."""
    return Totals(
        questions=sum(d["total"] for d in days),
        outcomes={o: sum(d[o] for d in days) for o in OUTCOMES},
        up=sum(d["up"] for d in rating_days),
        down=sum(d["down"] for d in rating_days),
    )
