"""Aligning two documents' sections: which old section became which new one.

Tolerant of renumbering (numbers are never compared) and of renamed headings. Passes, each over
the sections the previous ones left unmatched:
1. the same normalised heading path (unique on both sides);
2. the same normalised title (unique among the unmatched on both sides);
3. similar content (Dice over content words >= 0.5), best pairs first: a renamed heading;
4. a similar title (difflib ratio or Dice over its words >= 0.75), best pairs first: a reworded heading over
   rewritten content;
5. position: inside a gap between two matched sections, sections of the same level in the same
   order pair up when their titles or contents are at least loosely alike (0.3).
Whatever is left is added or removed. A matched pair that is out of order relative to the
longest in-order run of pairs is moved.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from knowledge.versions.sections import Section, bag_similarity, content_bag

CONTENT_THRESHOLD = 0.5
TITLE_THRESHOLD = 0.75
LOOSE_THRESHOLD = 0.3


@dataclass
class SectionMatch:
    old: Section | None
    new: Section | None
    how: str = ""  # path, title, content, position; "" for an added or removed section
    moved: bool = False

    @property
    def renamed(self) -> bool:
        return bool(self.old and self.new and self.old.key_title != self.new.key_title)


def align_sections(old: list[Section], new: list[Section]) -> list[SectionMatch]:
    """Pairs in display order: the new document's order, removed sections where they stood."""
    pairs: dict[int, tuple[int, str]] = {}  # old index -> (new index, how)
    _match_unique(old, new, pairs, lambda s: (s.level == 0, s.key_path), "path")
    _match_unique(old, new, pairs, lambda s: (s.level == 0, s.key_title), "title")
    _match_by_content(old, new, pairs)
    _match_by_similar_title(old, new, pairs)
    _match_by_position(old, new, pairs)
    moved = _moved(pairs)
    return _display_order(old, new, pairs, moved)


def _free(old: list[Section], new: list[Section], pairs: dict[int, tuple[int, str]]):
    taken = {j for j, _ in pairs.values()}
    return [s for s in old if s.index not in pairs], [s for s in new if s.index not in taken]


def _match_unique(old, new, pairs, key, how: str) -> None:
    free_old, free_new = _free(old, new, pairs)
    old_counts = Counter(key(s) for s in free_old)
    new_by_key: dict = {}
    new_counts: Counter = Counter()
    for s in free_new:
        new_counts[key(s)] += 1
        new_by_key[key(s)] = s
    for s in free_old:
        k = key(s)
        if old_counts[k] == 1 and new_counts[k] == 1:
            pairs[s.index] = (new_by_key[k].index, how)


def _match_by_content(old, new, pairs) -> None:
    def score(o: Section, n: Section) -> float:
        return bag_similarity(o.bag, n.bag) if o.bag and n.bag else 0.0

    _match_best(old, new, pairs, score, CONTENT_THRESHOLD, "content")


def _match_by_similar_title(old, new, pairs) -> None:
    def score(o: Section, n: Section) -> float:
        if not o.key_title or not n.key_title:
            return 0.0
        words = bag_similarity(content_bag(o.key_title), content_bag(n.key_title))
        if words >= TITLE_THRESHOLD:
            return words
        chars = SequenceMatcher(None, o.key_title, n.key_title, autojunk=False)
        return chars.ratio() if chars.quick_ratio() >= TITLE_THRESHOLD else 0.0

    _match_best(old, new, pairs, score, TITLE_THRESHOLD, "title")


def _match_best(old, new, pairs, score, threshold: float, how: str) -> None:
    """Greedy over all unmatched pairs scoring >= threshold, best first."""
    free_old, free_new = _free(old, new, pairs)
    candidates = []
    for o in free_old:
        for n in free_new:
            if (o.level == 0) == (n.level == 0):
                value = score(o, n)
                if value >= threshold:
                    candidates.append((value, o.index, n.index))
    used_new: set[int] = set()
    for _value, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if i not in pairs and j not in used_new:
            pairs[i] = (j, how)
            used_new.add(j)


def _match_by_position(old, new, pairs) -> None:
    """Pair what is left inside each gap between matched sections, in order, when alike."""
    anchors = sorted((i, j) for i, (j, _) in pairs.items())
    free_old, free_new = _free(old, new, pairs)
    bounds = [(-1, -1), *anchors, (len(old), len(new))]
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:], strict=False):
        if i1 <= i0 or j1 <= j0:
            continue  # a moved anchor: no gap to pair inside
        gap_old = [s for s in free_old if i0 < s.index < i1]
        gap_new = [s for s in free_new if j0 < s.index < j1]
        start = 0
        for o in gap_old:
            for k in range(start, len(gap_new)):
                n = gap_new[k]
                if n.level == o.level and _loosely_alike(o, n):
                    pairs[o.index] = (n.index, "position")
                    start = k + 1
                    break


def _loosely_alike(o: Section, n: Section) -> bool:
    title = SequenceMatcher(None, o.key_title, n.key_title, autojunk=False).ratio()
    return title >= 0.6 or (bool(o.bag) and bag_similarity(o.bag, n.bag) >= LOOSE_THRESHOLD)


def _moved(pairs: dict[int, tuple[int, str]]) -> set[int]:
    """Old indexes of the pairs outside the longest run that keeps its order (an LIS)."""
    ordered = sorted(pairs.items())
    seq = [j for _, (j, _) in ordered]
    tails: list[int] = []  # tails[k]: index into seq of the smallest tail of a run of length k+1
    tail_values: list[int] = []
    parent = [-1] * len(seq)
    for pos, value in enumerate(seq):
        k = bisect_left(tail_values, value)
        if k > 0:
            parent[pos] = tails[k - 1]
        if k == len(tails):
            tails.append(pos)
            tail_values.append(value)
        else:
            tails[k] = pos
            tail_values[k] = value
    keep: set[int] = set()
    pos = tails[-1] if tails else -1
    while pos >= 0:
        keep.add(pos)
        pos = parent[pos]
    return {ordered[p][0] for p in range(len(seq)) if p not in keep}


def _display_order(old, new, pairs, moved: set[int]) -> list[SectionMatch]:
    by_new = {j: (i, how) for i, (j, how) in pairs.items()}
    # A removed section is shown right after the new place of its nearest earlier old
    # neighbour that stayed in order (or first, when none did).
    after: dict[int, list[Section]] = {}
    anchor = -1
    for s in old:
        if s.index in pairs and s.index not in moved:
            anchor = pairs[s.index][0]
        elif s.index not in pairs:
            after.setdefault(anchor, []).append(s)
    result = [SectionMatch(s, None) for s in after.get(-1, [])]
    for n in new:
        if n.index in by_new:
            i, how = by_new[n.index]
            result.append(SectionMatch(old[i], n, how, moved=i in moved))
        else:
            result.append(SectionMatch(None, n))
        result += [SectionMatch(s, None) for s in after.get(n.index, [])]
    return result
