"""Identifiers in the text PostgreSQL's full-text parser reads as one token, or drops.

The parser reads a dotted name as one "host" or "file" token: "Order.cs" gives the lexeme
``order.cs``, "OrderEditPage.xaml.cs" ``ordereditpage.xaml.cs``,
"System.Collections.Generic.IEnumerable" one lexeme too; and a generic type parameter is an
HTML tag to it, dropped: "ObservableCollection<Order>" gives ``observablecollect`` alone. A
question naming "класс Order", "OrderEditPage" or "IEnumerable" then finds no chunk by those
words, though the specification's tables name them on every row.

``lexical_text`` is what the full-text vector of a chunk is computed from: the text as it is,
each such identifier followed by its parts ("Order.cs Order cs", "ObservableCollection<Order>
Order"), so both the whole name and each part are lexemes. The stored text, the quotes and the
embeddings are not touched. Parts of one letter ("U.S.", "e.g.") are not identifiers.
"""

from __future__ import annotations

import re

_PART = r"[A-Za-z_][A-Za-z0-9_]*"
# A dotted name of two or more parts ("Order.cs", "App.xaml.cs", "System.Collections.Generic").
_DOTTED = re.compile(rf"(?<![\w.]){_PART}(?:\.{_PART})+(?![\w])")
# A type parameter list ("<Order>", "<string, Order>", "<Dictionary.Entry>").
_TYPE_ARGUMENTS = re.compile(rf"<\s*({_PART}(?:\.{_PART})*(?:\s*,\s*{_PART}(?:\.{_PART})*)*)\s*>")
_SPLIT = re.compile(r"[.,\s]+")


def parts(identifier: str) -> list[str]:
    """The words of a dotted or listed identifier, each of two characters or more."""
    return [p for p in _SPLIT.split(identifier) if len(p) >= 2]


def lexical_text(text: str) -> str:
    """``text`` with each dotted identifier and type parameter list followed by its parts."""
    if "." not in text and "<" not in text:
        return text

    def dotted(match: re.Match[str]) -> str:
        if any(len(p) < 2 for p in match.group(0).split(".")):  # "U.S", "e.g"
            return match.group(0)
        return f"{match.group(0)} {' '.join(parts(match.group(0)))}"

    def generic(match: re.Match[str]) -> str:
        words = parts(match.group(1))
        return f"{match.group(0)} {' '.join(words)} " if words else match.group(0)

    return _TYPE_ARGUMENTS.sub(generic, _DOTTED.sub(dotted, text))
