"""Charts as inline SVG, drawn on the server: no JavaScript, no CDN, readable without colour
(every bar has a tooltip title and the numbers are in a table next to it). No Django here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from html import escape

from django.utils.translation import gettext as _

WIDTH, HEIGHT = 600, 190
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 12, 24


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    colour: str


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^k at or above ``value`` (at least 1)."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power  # pragma: no cover - the loop always returns


def _number(value: float) -> str:
    return f"{value:g}" if value < 10_000 else f"{value / 1000:g}k"


def _svg(body: list[str], label: str, height: int = HEIGHT) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        + "".join(body)
        + "</svg>"
    )


def _day_labels(days: Sequence[date], x_of, baseline: float) -> list[str]:
    if not days:
        return []
    picks = sorted({0, len(days) // 2, len(days) - 1})
    anchors = {0: "start", len(days) - 1: "end"}
    return [
        f'<text x="{x_of(i):.1f}" y="{baseline:.1f}" class="axis" '
        f'text-anchor="{anchors.get(i, "middle")}">{days[i].strftime("%d.%m")}</text>'
        for i in picks
    ]


def stacked_days(
    days: Sequence[date], rows: Sequence[dict[str, int]], series: Sequence[Series], label: str
) -> str:
    """Bars per day, stacked by series (e.g. questions per day by outcome)."""
    top = nice_ceiling(max((sum(r.get(s.key, 0) for s in series) for r in rows), default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(len(days), 1)
    bar = max(step * 0.8, 1)
    body = _grid(top, plot_h)
    for i, (day, row) in enumerate(zip(days, rows, strict=True)):
        y = TOP + plot_h
        tip = ", ".join(f"{s.label}: {row.get(s.key, 0)}" for s in series)
        parts = []
        for s in series:
            height = row.get(s.key, 0) / top * plot_h
            if height <= 0:
                continue
            y -= height
            parts.append(
                f'<rect x="{LEFT + i * step + (step - bar) / 2:.1f}" y="{y:.1f}" '
                f'width="{bar:.1f}" height="{height:.1f}" fill="{s.colour}"/>'
            )
        body.append(
            f"<g><title>{escape(day.isoformat())}: {escape(tip)}</title>{''.join(parts)}</g>"
        )
    body += _day_labels(days, lambda i: LEFT + i * step + step / 2, HEIGHT - 6)
    return _svg(body, label)


def diverging_days(
    days: Sequence[date], ups: Sequence[int], downs: Sequence[int], label: str
) -> str:
    """Thumbs up above the axis, thumbs down below it, per day."""
    top = nice_ceiling(max([*ups, *downs, 0]))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    half = plot_h / 2
    axis = TOP + half
    step = plot_w / max(len(days), 1)
    bar = max(step * 0.8, 1)
    body = [
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{axis:.1f}" y2="{axis:.1f}" class="axis-line"/>',
        f'<text x="{LEFT - 6}" y="{TOP + 4}" class="axis" text-anchor="end">{_number(top)}</text>',
        f'<text x="{LEFT - 6}" y="{axis + 4:.1f}" class="axis" text-anchor="end">0</text>',
        f'<text x="{LEFT - 6}" y="{TOP + plot_h + 4:.1f}" class="axis" text-anchor="end">'
        f"{_number(top)}</text>",
    ]
    for i, day in enumerate(days):
        x = LEFT + i * step + (step - bar) / 2
        up_h, down_h = ups[i] / top * half, downs[i] / top * half
        body.append(
            "<g><title>"
            + escape(
                _("%(day)s: helpful %(up)d, not helpful %(down)d")
                % {"day": day.isoformat(), "up": ups[i], "down": downs[i]}
            )
            + "</title>"
            f'<rect x="{x:.1f}" y="{axis - up_h:.1f}" width="{bar:.1f}" height="{up_h:.1f}" '
            f'class="up"/><rect x="{x:.1f}" y="{axis:.1f}" width="{bar:.1f}" '
            f'height="{down_h:.1f}" class="down"/></g>'
        )
    body += _day_labels(days, lambda i: LEFT + i * step + step / 2, HEIGHT - 6)
    return _svg(body, label)


def _grid(top: float, plot_h: float) -> list[str]:
    lines = []
    for fraction in (0, 0.5, 1):
        y = TOP + plot_h - fraction * plot_h
        lines.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="axis" text-anchor="end">'
            f"{_number(top * fraction)}</text>"
        )
    return lines


def share_bar(parts: Sequence[tuple[str, int, str]], label: str) -> str:
    """One 100 % bar split by share: (label, count, colour) each."""
    total = sum(count for _, count, _ in parts)
    height = 28
    body, x = [], 0.0
    for name, count, colour in parts:
        if not total or not count:
            continue
        width = count / total * WIDTH
        body.append(
            f"<g><title>{escape(name)}: {count} ({count / total:.0%})</title>"
            f'<rect x="{x:.1f}" y="0" width="{width:.1f}" height="{height}" fill="{colour}"/></g>'
        )
        x += width
    if not body:
        body.append(f'<rect x="0" y="0" width="{WIDTH}" height="{height}" class="empty"/>')
    return _svg(body, label, height=height)


def latency_bars(rows: Sequence[tuple[str, float | None, float | None]], label: str) -> str:
    """Per stage: a light bar to the 95th percentile with the median drawn over it."""
    row_h, label_w = 26, 200  # room for the stage names in Russian too
    no_data, ms = escape(_("no data")), escape(_("ms"))
    height = row_h * max(len(rows), 1) + 18
    top = nice_ceiling(max((p95 or 0 for _, _, p95 in rows), default=0))
    plot_w = WIDTH - label_w - RIGHT - 60
    body = []
    for i, (name, p50, p95) in enumerate(rows):
        y = i * row_h + 4
        body.append(
            f'<text x="{label_w - 8}" y="{y + 14}" class="axis" text-anchor="end">'
            f"{escape(name)}</text>"
        )
        if p95 is None:
            body.append(f'<text x="{label_w}" y="{y + 14}" class="axis">{no_data}</text>')
            continue
        w95 = (p95 or 0) / top * plot_w
        w50 = (p50 or 0) / top * plot_w
        body.append(
            "<g><title>"
            + escape(
                _("%(stage)s: median %(p50).0f ms, 95th percentile %(p95).0f ms")
                % {"stage": name, "p50": p50, "p95": p95}
            )
            + "</title>"
            f'<rect x="{label_w}" y="{y}" width="{w95:.1f}" height="18" class="p95"/>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w50:.1f}" height="10" class="p50"/></g>'
            f'<text x="{label_w + w95 + 6:.1f}" y="{y + 14}" class="axis">{p95:.0f} {ms}</text>'
        )
    body.append(
        f'<text x="{label_w}" y="{height - 2}" class="axis">0</text>'
        f'<text x="{label_w + plot_w:.1f}" y="{height - 2}" class="axis" text-anchor="end">'
        f"{_number(top)} {ms}</text>"
    )
    return _svg(body, label, height=height)


def paired_bars(rows: Sequence[tuple[str, float | None, float | None]], label: str) -> str:
    """Shares (0..1) of two runs side by side, one pair of bars per figure: A light, B dark."""
    row_h, label_w = 30, 240
    height = row_h * max(len(rows), 1) + 18
    plot_w = WIDTH - label_w - RIGHT - 50
    body = []
    for i, (name, a, b) in enumerate(rows):
        y = i * row_h + 4
        body.append(
            f'<text x="{label_w - 8}" y="{y + 15}" class="axis" text-anchor="end">'
            f"{escape(name)}</text>"
        )
        for offset, value, css, who in ((0, a, "p95", "A"), (11, b, "p50", "B")):
            if value is None:
                continue
            width = max(0.0, min(1.0, value)) * plot_w
            body.append(
                f"<g><title>{escape(name)}, run {who}: {value:.1%}</title>"
                f'<rect x="{label_w}" y="{y + offset}" width="{width:.1f}" height="10" '
                f'class="{css}"/></g>'
                f'<text x="{label_w + width + 4:.1f}" y="{y + offset + 9}" class="axis">'
                f"{value:.0%}</text>"
            )
    body.append(
        f'<text x="{label_w}" y="{height - 2}" class="axis">0</text>'
        f'<text x="{label_w + plot_w:.1f}" y="{height - 2}" class="axis" text-anchor="end">'
        "100 %</text>"
    )
    return _svg(body, label, height=height)
