"""Extractive answers: the best passages quoted with their links, when no LLM is configured
or the LLM is down. Clearly labelled: nothing here is generated.

The answer leads with the asked fact: every sentence, list item and table row of the best
passages (``chat.answer.units``) is scored against the question's reading - its words (the
focus counts twice), the things it names, and whether it states a value of the kind of fact
asked (a duration for "сколько длится", a person for "кто"; ``knowledge.question.values``) -
and the best one, from whichever passage holds it, opens the answer on a line of its own with
its link (a row under its header row). The passages follow in their order, each quoted by its
best units within a share of the length (the passage holding the fact gets the largest, the
opening unit not said twice); a quote never ends on a label ("Источники:"). A sentence the document asks itself ("Кто
пишет критерии приемки?") passes its score to the one after it, which answers it; a unit under
a sub-heading of the passage is quoted with that heading ("**Common Coupling:** …"); one that
leans on the sentences before it ("… с этими тремя фильтрами") is quoted with them. A question
word weighs by its rarity among the units read, and a table row labelled with the name its
table's caption already says (a class's constructor) is not taken for the row asked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chat.answer import wording
from knowledge.question import Question, read
from knowledge.question.values import checkable, holds_value
from knowledge.retrieval import meaning_score
from knowledge.tables import markdown_cells
from knowledge.text.named import PLACEHOLDER
from knowledge.units import Unit, is_link_only, quotable, units

QUOTED = 3  # passages quoted
LENGTH = 1100  # characters of quotes in all (the labels and links come on top; 1,150 before the
# opening line: quotes.py, key facts unchanged at 1,150 / 1,120 / 1,100, median 1,324 -> 1,300 on kb_dev)
LEAD_SHARE = 0.55  # of LENGTH, for the passage holding the asked fact
PASSAGES_READ = 8  # the best passages whose units may lead the answer or be quoted
KEEP = 0.6  # of the first unit's relevance, what another unit of the passage needs to be quoted
UNITS = 6  # units quoted of one passage at most
BACK = 2  # sentences before the first quoted, at most, when each leans on the one before it
# How much a question word's rarity among the units read weighs (BM25's idf to this power,
# over its mean for the question's words): answers.py offline on kb_dev, key fact shown
# any / all: 0 -> 35 / 31, 0.5 -> 36 / 32, 1 -> 36 / 31, 2 -> 37 / 31 of 70.
RARITY = 0.5
# Swept offline on kb_dev and kb_dev2 together (benchmarks/experiments/quotes.py, RESULTS.md
# 12-07; key fact in the opening, kb_dev / kb_dev2): VALUE_LEAD 0.3 / 0.5 / 0.7 changed no
# answer; ORDER_PRIOR 0 30.0 / 32.2 %, 0.06 31.4 / 35.6 %, 0.12 34.3 / 36.7 %, 0.2 32.9 / 36.7
# %, 0.3 34.3 / 35.6 %; NEAR 0.7 31.4 / 33.3 %, 1.0 32.9 / 34.4 %, 1.5 32.9 / 33.3 %, 2.0 30.0
# / 34.4 % (before the lead line). KEEP 0.4 / 0.6 / 0.8 and UNITS 4 / 6 / 8 (key fact any / all,
# kb_dev2; kb_dev changed only at UNITS 4, 51.4 / 47.1 against 52.9 / 48.6 %): KEEP 57.8 / 40.0,
# 56.7 / 37.8, 55.6 / 35.6 % at a median of 1,330 / 1,293 / 1,211 characters; UNITS 56.7 / 35.6,
# 56.7 / 37.8, 57.8 / 38.9 % at 1,222 / 1,293 / 1,302: the gains of the longer quotes are one or
# two questions of 90 past the 1,300 characters asked for.
VALUE_LEAD = 0.5  # of the best unit's relevance, what one stating the asked value needs to lead
ORDER_PRIOR = 0.12  # what a passage's place in the search's order adds to its units' score
NEAR = 1.0  # the weight of a unit's closeness to the question in e5's space (its meaning score)


@dataclass
class Passage:
    number: int
    title: str
    heading: str
    text: str
    is_table: bool = False
    meaning: tuple[float, ...] = ()  # each unit's cosine to the question in e5 (if known)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|https?://\S+|www\.\S+")
_LINK_HEADINGS = re.compile(
    r"^(?:источники|доп\.? ?материал\w*|дополнительн\w* материал\w*|полезные ссылки|ссылки|"
    r"литература|видео|sources|references|further reading|links|see also)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Asked:
    """What a unit is scored against: the question's words by weight, its named things and
    the kinds of fact it asks whose values a pattern can find."""

    weights: dict[str, float]
    named: tuple[str, ...]
    kinds: tuple[str, ...]
    text: str

    @classmethod
    def of(cls, question: Question) -> Asked:
        weights: dict[str, float] = {}
        for term in question.terms:
            weights[term.lemma] = max(weights.get(term.lemma, 0.0), 2.0 if term.focus else 1.0)
        named = tuple(
            n.casefold() for n in question.named if not PLACEHOLDER.fullmatch(n) and len(n) > 1
        )
        # A name made of names already here ("Azure DevOps": "Azure", "DevOps") counts once.
        named = tuple(n for n in named if not (" " in n and set(n.split()) <= set(named)))
        kinds = tuple(k for k in question.kinds if checkable(k))
        return cls(weights, named, kinds, question.text)

    def weighed_among(self, found: Sequence[Sequence[Unit]]) -> Asked:
        """The question's words weighed by their rarity among the units read (BM25's idf over
        those units, to the power ``RARITY``, over its mean): a word every unit holds says
        little about which one answers; a word one unit holds, much."""
        every = [unit.lemmas() for own in found for unit in own]
        if not every or not self.weights:
            return self
        n = len(every)
        idf = {
            term: math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for term in self.weights
            for df in [sum(term in lemmas for lemmas in every)]
        }
        mean = sum(idf.values()) / len(idf)
        if mean <= 0:
            return self
        weights = {t: w * (idf[t] / mean) ** RARITY for t, w in self.weights.items()}
        return replace(self, weights=weights)

    def coverage(self, lemmas: frozenset[str]) -> float:
        total = sum(self.weights.values())
        return sum(w for t, w in self.weights.items() if t in lemmas) / total if total else 0.0


@dataclass(frozen=True)
class Scored:
    passage: int  # index among the passages
    unit: Unit
    score: float
    words: float  # the share of the question's word weight it holds
    value: bool  # states a value of a kind asked
    relevance: float = 0.0  # the score without the search's order (what the unit itself holds)
    labelled: bool = False  # a table row labelled with what the question names


def _score_units(
    asked: Asked, passage_index: int, found: list[Unit], meaning: tuple[float, ...] = ()
) -> list[Scored]:
    """Each unit's score (see the module docstring); a question the document asks passes its
    score on to the unit after it. ``meaning``: each unit's cosine to the question in e5's
    space, when the chunk has its second vectors (the same units, in order)."""
    prior = max(0.0, ORDER_PRIOR * (3 - passage_index))  # the search's order, gently
    close = meaning if len(meaning) == len(found) else ()
    scored = []
    for index, unit in enumerate(found):
        lemmas = unit.lemmas()
        words = asked.coverage(lemmas)
        low = unit.text.casefold()
        # A named thing the words did not already count ("Item.cs", "Windows 10", «События»).
        names = [n for n in asked.named if n not in asked.weights]
        named = sum(1 for n in names if n in low) / len(names) if names else 0.0
        heading = asked.coverage(Unit(0, unit.heading, "").lemmas()) if unit.heading else 0.0
        value = (
            bool(asked.kinds)
            and words > 0
            and any(holds_value(unit.text, k, asked=asked.text) for k in asked.kinds)
        )
        label = _label_named(unit, asked) if unit.table else 0.0
        near = NEAR * meaning_score(close[index]) if close else 0.0
        relevance = words + near + 0.35 * named + 0.25 * heading + 0.35 * value + label
        if not quotable(unit) or unit.captions:
            relevance *= 0.5  # a label, a list of links; a caption comes with its table's rows
        scored.append(
            Scored(passage_index, unit, relevance + prior, words, value, relevance, label > 0)
        )
    for i, item in enumerate(scored[:-1]):
        after = scored[i + 1]
        if item.unit.asks and not after.unit.asks and after.score < item.score:
            scored[i + 1] = replace(after, score=item.score, relevance=item.relevance)
            scored[i] = replace(item, score=item.score * 0.5, relevance=item.relevance * 0.5)
    return scored


def _label_named(unit: Unit, asked: Asked) -> float:
    """A table row labelled with what the question names ("поле Link": the row "| Link |
    …"): such a row is what is asked about, more than rows sharing its words."""
    label = next((c for c in markdown_cells(unit.row) if c), "").casefold()
    around = " ".join([unit.caption, unit.heading]).casefold()
    return (
        0.25
        if label
        and any((n == label or n in label.split()) and n not in around for n in asked.named)
        else 0.0
    )


def _links_section(passage: Passage) -> bool:
    last_heading = passage.heading.split(" › ")[-1].strip() if passage.heading else ""
    return bool(_LINK_HEADINGS.match(last_heading)) or is_link_only(passage.text)


def section_within(title: str, heading: str) -> str:
    """The heading path below the document's own title: a Markdown page's first heading is its
    title, and "**Кэш (Cache)** — Кэш (Cache)" says the title twice."""
    parts = [p.strip() for p in heading.split(" › ")] if heading else []
    if parts and parts[0] == title.strip():
        parts = parts[1:]
    return " › ".join(p for p in parts if p)


def best_quote(question: Question, text: str, limit: int = 450) -> str:
    """The units of ``text`` that answer the question best, in their order, within about
    ``limit`` characters (a source's quote under the answer)."""
    found = units(text)
    if not found:
        return text[:limit]
    asked = Asked.of(question).weighed_among([found])
    scored = _score_units(asked, 0, found)
    rows = [s for s in scored if s.unit.table]
    if rows and len(rows) * 2 >= len(scored):
        return _render(_table_rows(asked, rows, limit), heading="")
    return _render(_choose(scored, limit, lead=None), heading="")


def _table_rows(asked: Asked, rows: list[Scored], limit: int) -> list[Scored]:
    """A table's quote: its rows within twice ``limit`` characters (rows are short and the
    header and caption say what they are), in the table's order. Only the rows labelled with
    the thing the question names when some are; else, when a row holds more of the question's
    words than the caption and header do, the rows holding at least ``KEEP`` of the best one's
    relevance; a question the caption and header answer ("which parameters does it take") is
    about the whole table, its first rows."""
    ranked = sorted(rows, key=lambda s: (-s.score, s.unit.order))
    labelled = [s for s in ranked if s.labelled]
    first = rows[0].unit
    given = asked.coverage(Unit(0, " ".join([first.caption, *first.head]), "").lemmas())
    if labelled:
        ranked = labelled
    elif ranked[0].words > given:
        floor = KEEP * ranked[0].relevance
        ranked = [s for s in ranked if s.relevance >= floor]
    else:
        ranked = sorted(rows, key=lambda s: s.unit.order)
    kept: list[Scored] = []
    used = 0
    for item in ranked:
        if kept and used + len(item.unit.row) > 2 * limit:
            break
        kept.append(item)
        used += len(item.unit.row)
    return sorted(kept, key=lambda s: s.unit.order)


def extractive_answer(
    question: Question, passages: list[Passage], *, language: str, notice: str = ""
) -> str:
    """Markdown: a label in the question's language, then the passage holding the asked fact
    with that fact first, then the other best passages, each quote with its citation."""
    label = wording.say("extractive", language)
    parts = [f"*{label}*"]
    if notice:
        parts.insert(0, f"**{notice}**")
    # Lists of links ("Источники", "Доп. материал") stay searchable but are not an answer.
    shown = [p for p in passages if not _links_section(p)] or passages
    found = [units(p.text) for p in shown[:PASSAGES_READ]]
    asked = Asked.of(question).weighed_among(found)
    scored = [
        _score_units(asked, i, own, p.meaning)
        for i, (own, p) in enumerate(zip(found, shown, strict=False))
    ]
    lead = _lead([s for own in scored for s in own])
    order = _passages(scored, lead)
    opening: list[Scored] = []
    if lead is not None:
        # The first thing read: the sentence or row holding the asked fact (with the sentences
        # it leans on: "… такой прогон …"), with its link.
        opening = [*_leaned_on(lead, {s.unit.order: s for s in scored[lead.passage]}), lead]
        parts.append(_lead_block([s.unit for s in opening], shown[lead.passage]))
    # A table row's opening is followed by its passage's label, then the rest of its quote.
    lead_row = opening[-1].unit if opening and opening[-1].unit.table else None
    for i in order:
        passage = shown[i]
        holds_lead = lead is not None and lead.passage == i
        share = LEAD_SHARE if holds_lead else (1 - LEAD_SHARE) / max(1, len(order) - 1)
        if len(order) == 1:
            share = 1.0
        chosen = _choose(scored[i], int(LENGTH * share), lead=lead if holds_lead else None)
        said: tuple[str, ...] = ()
        if holds_lead:
            chosen = [s for s in chosen if s not in opening]  # said in the first line
            if lead_row is not None:
                said = (lead_row.caption,)
                if not chosen:
                    parts.append(_where(passage))
            if not chosen:
                continue
        quote = _render(chosen, heading=_last(passage.heading), said=said) or passage.text[:300]
        parts.append(f"{_where(passage)}\n\n{quote}")
    return "\n\n".join(parts)


def _where(passage: Passage) -> str:
    """A quote's label: the document, the section within it and the citation."""
    section = section_within(passage.title, passage.heading)
    where = f"**{passage.title}** — {section}" if section else f"**{passage.title}**"
    return f"{where} [{passage.number}]"


def _lead_block(found: list[Unit], passage: Passage) -> str:
    """The answer's opening, with its citation: sentences (under their sub-heading, if any) as
    one quoted line; a table row under its table's caption and header row (its source's label
    and link follow it, with the rest of its passage's quote: a row alone does not say whose
    table, sheet or class it is, and the label after the row keeps the fact in the first lines)."""
    last = found[-1]
    if last.table:
        head = [h for h in last.head if h.strip()]
        table = "\n".join([*head, last.row])
        caption = f"{last.caption}\n" if last.caption else ""
        return f"{caption}{table}"
    text = " ".join(" ".join(u.text.split()) for u in found)
    text = f"**{last.heading}:** {text}" if last.heading else text
    return f"> {text} [{passage.number}]"


def _passages(scored: list[list[Scored]], lead: Scored | None) -> list[int]:
    """The passages quoted, by index: the one holding the lead first, then those whose best
    unit scores highest (the search's order counts in that score), ``QUOTED`` in all."""
    return _ranked(scored, lead)[:QUOTED]


def _ranked(scored: list[list[Scored]], lead: Scored | None) -> list[int]:
    """Every passage by index, the one holding the lead first, then by their best unit."""
    best = [max((s.score for s in own), default=0.0) for own in scored]
    ranked = sorted(range(len(scored)), key=lambda i: (-best[i], i))
    if lead is not None and lead.score > 0:
        ranked = [lead.passage, *[i for i in ranked if i != lead.passage]]
    return ranked


def excerpts(question: str, passages: list[Passage], *, limit: int) -> list[tuple[int, str]]:
    """Every passage's best units as the extractive answer chooses them (the asked unit, the
    sentence after it, its list, the units holding most of its relevance) within ``limit``
    characters, in the passage's own order; the passages ranked as the extractive answer ranks
    them (the one holding the asked fact first). Returns (index in ``passages``, text): what an
    LLM with little room reads before whole chunks (``chat.answer.budget``)."""
    found = [units(p.text) for p in passages]
    asked = Asked.of(read(question)).weighed_among(found)
    scored = [
        _score_units(asked, i, own, p.meaning)
        for i, (own, p) in enumerate(zip(found, passages, strict=True))
    ]
    lead = _lead([s for own in scored for s in own])
    out = []
    for i in _ranked(scored, lead):
        holds_lead = lead is not None and lead.passage == i
        chosen = sorted(
            _choose(scored[i], limit, lead=lead if holds_lead else None),
            key=lambda s: s.unit.order,
        )
        out.append((i, _render(chosen, heading="", quote=False) or passages[i].text[:limit]))
    return out


def _lead(scored: list[Scored]) -> Scored | None:
    """The unit the answer leads with: the best one stating a value of the kind asked, when one
    holds at least half the relevance of the best unit of all; else the best unit."""
    best = max(scored, key=lambda s: (s.score, -s.passage), default=None)
    if best is None:
        return None
    valued = [s for s in scored if s.value and s.relevance >= VALUE_LEAD * best.relevance]
    return max(valued, key=lambda s: (s.score, -s.passage)) if valued else best


def _last(heading: str) -> str:
    return heading.split(" › ")[-1].strip() if heading else ""


def _choose(scored: list[Scored], limit: int, *, lead: Scored | None) -> list[Scored]:
    """The units to quote: the lead first when it is here (else the passage's best), the unit
    after it when it goes on in prose, then the best others that hold at least
    ``KEEP`` of its relevance, within ``limit`` characters and ``UNITS`` units; in the
    passage's order after the first (the items of the first's list right after it). Another
    list a quoted unit opens or belongs to comes whole (``_complete``). A document's own
    question stays before the unit answering it."""
    if not scored:
        return []
    ranked = sorted(scored, key=lambda s: (-s.score, s.unit.order))
    first = lead if lead is not None else ranked[0]
    by_order = {s.unit.order: s for s in scored}
    leaned = _leaned_on(first, by_order)
    chosen = [first]
    used = _length(first.unit, set()) + sum(len(s.unit.text) + 1 for s in leaned)
    heads = set(first.unit.head)
    floor = KEEP * first.relevance
    after = by_order.get(first.unit.order + 1)
    if (
        after is not None
        and not after.unit.table
        and not first.unit.table
        and after.unit.heading == first.unit.heading
        and not (_label(after.unit) and not _list_of(after, by_order))
    ):
        ranked = [after, *[s for s in ranked if s is not after]]  # its next sentence goes on
    else:
        after = None
    listed = _list_of(first, by_order)
    if listed:
        # An item of a list, or the sentence that opens one ("Есть три типа:"), answers with
        # the list ("какие подходы бывают"): its items go first, best first, whatever their
        # own score.
        siblings = sorted(
            (s for s in scored if s.unit.items == listed and s is not first),
            key=lambda s: (-s.score, s.unit.order),
        )
        ranked = [*siblings, *[s for s in ranked if s not in siblings]]
        after = None
    for item in ranked:
        if len(chosen) >= UNITS:
            break
        sibling = listed and item.unit.items == listed
        if item is first or item in leaned:
            continue
        if item.relevance < floor and item is not after and not sibling:
            continue
        if first.labelled and item.unit.table and not item.labelled:
            continue  # the question names its row ("поле Link"): that row, not its neighbours
        length = _length(item.unit, heads)
        if used + length > limit:
            continue
        chosen.append(item)
        heads.update(item.unit.head)
        used += length + 1
    _complete(chosen, scored, by_order, listed, heads, limit - used)
    for item in list(chosen):  # the question a chosen unit answers comes with it
        before = by_order.get(item.unit.order - 1)
        if before is not None and before.unit.asks and before not in chosen:
            chosen.append(before)
    rest = sorted(
        (s for s in chosen if s is not first and s not in leaned),
        key=lambda s: (not (listed and s.unit.items == listed), s.unit.order),
    )
    before_first = by_order.get(first.unit.order - 1)
    if before_first is not None and before_first in rest and before_first.unit.asks:
        rest.remove(before_first)
        return _no_dangling([*leaned, before_first, first, *rest])
    return _no_dangling([*leaned, first, *rest])


def _label(unit: Unit) -> bool:
    """A line that only announces what follows ("Источники:", "Пример:"): a prose unit ending
    with a colon, or too short to quote alone."""
    return not unit.table and (unit.text.rstrip().endswith(":") or not quotable(unit))


def _no_dangling(chosen: list[Scored]) -> list[Scored]:
    """The chosen units without a label that nothing it announces follows in the quote: a quote
    never ends on "Источники:", nor shows a list's opening line without its items. The first
    unit stays (it was chosen for what it holds)."""
    kept = list(chosen)
    for i in range(len(kept) - 1, 0, -1):
        unit = kept[i].unit
        if not _label(unit):
            continue
        follows = kept[i + 1] if i + 1 < len(kept) else None
        announced = follows is not None and (
            follows.unit.items or follows.unit.order == unit.order + 1
        )
        if not announced:
            del kept[i]
    return kept


def _complete(chosen, scored, by_order, listed, heads, room: int) -> None:
    """Add to ``chosen`` each other list one of its units opens or belongs to, whole: the
    opening line and the items, when they fit in ``room`` characters and ``UNITS`` units (a
    list cut after one item misleads: "1-й столбец …" without the second and third)."""
    lists = {s.unit.items for s in chosen if s.unit.items} | {_list_of(s, by_order) for s in chosen}
    for own in sorted(lists - {0, listed}):
        members = [s for s in scored if s.unit.items == own and s not in chosen]
        opener = next(
            (s for s in scored if not s.unit.items and _list_of(s, by_order) == own), None
        )
        if opener is not None and opener not in chosen:
            members.insert(0, opener)
        length = sum(_length(s.unit, heads) + 1 for s in members)
        if members and length <= room and len(members) <= UNITS:
            chosen.extend(members)
            room -= length


def _leaned_on(first: Scored, by_order: dict[int, Scored]) -> list[Scored]:
    """The sentences before ``first`` that it leans on, in order: while a sentence points back
    (``Unit.points_back``: "… с этими тремя фильтрами"), the one before it under the same
    heading, ``BACK`` at most."""
    leaned: list[Scored] = []
    current = first
    while len(leaned) < BACK and current.unit.points_back:
        before = by_order.get(current.unit.order - 1)
        if before is None or before.unit.table or before.unit.heading != current.unit.heading:
            break
        leaned.insert(0, before)
        current = before
    return leaned


def _list_of(first: Scored, by_order: dict[int, Scored]) -> int:
    """The list a unit belongs to, or opens when it ends with a colon and a list follows it
    (0: none)."""
    if first.unit.items:
        return first.unit.items
    after = by_order.get(first.unit.order + 1)
    if first.unit.text.rstrip().endswith(":") and after is not None and after.unit.items:
        return after.unit.items
    return 0


def _length(unit: Unit, heads: set[str]) -> int:
    """What quoting the unit adds: a row without the header rows already quoted."""
    if not unit.table:
        return len(unit.text)
    return len(unit.row) + sum(len(h) for h in unit.head if h not in heads)


def _render(
    chosen: list[Scored], *, heading: str, quote: bool = True, said: tuple[str, ...] = ()
) -> str:
    """Prose units as one quotation (a unit under a sub-heading of its own says it), table
    rows as a table under their header row (and the table's caption); ``quote=False``: the
    prose as plain lines (what an LLM reads). ``said``: captions the reader has just read."""
    mark = "> " if quote else ""
    blocks: list[str] = []
    prose: list[str] = []
    table: list[str] = []
    head: list[str] | None = None  # the header rows of the table being written
    said = {x.casefold() for x in said if x}
    said |= {heading.casefold()} if heading else set()
    # A caption quoted as a sentence and again above its rows would be said twice.
    captions = {s.unit.caption.strip().casefold() for s in chosen if s.unit.table}
    for item in chosen:
        unit = item.unit
        if not unit.table and unit.text.strip().casefold() in captions:
            continue
        if unit.table:
            if prose:
                blocks.append("\n".join(mark + p for p in " ".join(prose).splitlines()))
                prose = []
            if not table or head != list(unit.head):
                if table:
                    blocks.append("\n".join(table))
                head = list(unit.head)
                table = list(head)
                if unit.caption and unit.caption.casefold() not in said:
                    table.insert(0, unit.caption)  # the line above its table, as it was read
                    said.add(unit.caption.casefold())
            table.append(unit.row)
            continue
        if table:
            blocks.append("\n".join(table))
            table = []
        text = unit.text
        if unit.heading and unit.heading.casefold() not in said:
            text = f"**{unit.heading}:** {text}"
            said.add(unit.heading.casefold())
        prose.append(text)
    if prose:
        blocks.append("\n".join(mark + p for p in " ".join(prose).splitlines()))
    if table:
        blocks.append("\n".join(table))
    return "\n\n".join(blocks)
