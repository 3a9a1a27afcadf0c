"""Word-level diff inside one paragraph (or table cell), rendered as escaped <ins>/<del> HTML.

Texts are split into words, whitespace and punctuation; difflib aligns the tokens. Changes
separated only by whitespace or punctuation are merged into one deletion and one insertion, so a
rewritten phrase reads as "<del>old phrase</del><ins>new phrase</ins>" rather than a comb of
single words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property
from html import escape

_TOKEN = re.compile(r"\w+|\n|[^\S\n]+|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w", re.UNICODE)
# Bold and code marks a Markdown source may carry are formatting, not text. Underscores are
# left alone: a form's "«___» ________ 2019 г." is made of them.
_EMPHASIS = re.compile(r"(\*\*|`)")
_SPACES = re.compile(r"[^\S\n]+")

EQUAL, INSERT, DELETE = "equal", "insert", "delete"


def normalise_text(text: str) -> str:
    """The text as the diff compares it: emphasis markers dropped, whitespace collapsed."""
    text = _EMPHASIS.sub("", text.replace("\u00a0", " ").replace("\u00ad", ""))
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def tokenize(text: str) -> list[str]:
    """Words, single newlines, runs of other whitespace (as one space) and punctuation marks."""
    tokens = _TOKEN.findall(normalise_text(text))
    return [" " if t.isspace() and t != "\n" else t for t in tokens]


def count_words(text: str) -> int:
    return sum(1 for t in tokenize(text) if _WORD.match(t))


@dataclass
class WordDiff:
    """The aligned tokens of two texts: a list of (tag, text) with tag equal, insert or delete."""

    ops: list[tuple[str, str]]

    @cached_property
    def added(self) -> int:
        return sum(_words_in(text) for tag, text in self.ops if tag == INSERT)

    @cached_property
    def removed(self) -> int:
        return sum(_words_in(text) for tag, text in self.ops if tag == DELETE)

    @property
    def changed(self) -> bool:
        return any(tag != EQUAL for tag, _ in self.ops)

    def old_text(self) -> str:
        return "".join(text for tag, text in self.ops if tag != INSERT)

    def new_text(self) -> str:
        return "".join(text for tag, text in self.ops if tag != DELETE)

    def inline_html(self) -> str:
        """Both sides in one text: deletions struck out, insertions underlined."""
        return "".join(_op_html(tag, text) for tag, text in self.ops)

    def old_html(self) -> str:
        """The old text with its deletions marked (the left column of side by side)."""
        return "".join(_op_html(tag, text) for tag, text in self.ops if tag != INSERT)

    def new_html(self) -> str:
        """The new text with its insertions marked (the right column of side by side)."""
        return "".join(_op_html(tag, text) for tag, text in self.ops if tag != DELETE)


def _words_in(text: str) -> int:
    return sum(1 for t in _TOKEN.findall(text) if _WORD.match(t))


def _op_html(tag: str, text: str) -> str:
    body = escape(text, quote=False).replace("\n", "<br>")
    if tag == INSERT:
        return f"<ins>{body}</ins>"
    if tag == DELETE:
        return f"<del>{body}</del>"
    return body


def diff_words(old: str, new: str) -> WordDiff:
    """Align ``old`` and ``new`` word by word.

    Long texts are aligned by sentence (and list line) first and word by word only inside
    the changed sentences: difflib is quadratic on tokens as common as "the" or "и", and a
    legal paragraph has hundreds of them."""
    a, b = tokenize(old), tokenize(new)
    if a == b:
        return WordDiff([(EQUAL, "".join(a))] if a else [])
    if len(a) + len(b) <= SENTENCE_LEVEL:
        raw = _token_ops(a, b)
    else:
        raw = _sentence_ops(_sentences(a), _sentences(b))
    return WordDiff(_merge(_absorb_glue(raw)))


SENTENCE_LEVEL = 160  # tokens on both sides together above which sentences are aligned first
_SENTENCE_END = {".", ";", "!", "?", ":"}


def _sentences(tokens: list[str]) -> list[tuple[str, ...]]:
    """Tokens cut after sentence punctuation followed by a space, and after line breaks."""
    out: list[tuple[str, ...]] = []
    start = 0
    for k, token in enumerate(tokens):
        ends = token == "\n" or (token == " " and k > 0 and tokens[k - 1] in _SENTENCE_END)
        if ends:
            out.append(tuple(tokens[start : k + 1]))
            start = k + 1
    if start < len(tokens):
        out.append(tuple(tokens[start:]))
    return out


def _sentence_ops(a: list[tuple[str, ...]], b: list[tuple[str, ...]]) -> list[tuple[str, str]]:
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    raw: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        left = [t for sentence in a[i1:i2] for t in sentence]
        right = [t for sentence in b[j1:j2] for t in sentence]
        if tag == "equal":
            raw.append((EQUAL, "".join(left)))
        else:
            raw += _token_ops(left, right)
    return raw


def _token_ops(a: list[str], b: list[str]) -> list[tuple[str, str]]:
    # Spaces are junk to the matcher: they are everywhere, so they would make it try every
    # pairing; junk next to a match is still taken into it.
    matcher = SequenceMatcher(_is_space, a, b, autojunk=False)
    raw: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            raw.append((DELETE, "".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            raw.append((INSERT, "".join(b[j1:j2])))
        if tag == "equal":
            raw.append((EQUAL, "".join(a[i1:i2])))
    return raw


def _is_space(token: str) -> bool:
    return token == " "


def _is_glue(text: str) -> bool:
    """Whitespace or punctuation only: not worth keeping as an island between two changes."""
    return not _WORD.search(text) and "\n" not in text


def _run_length(ops: list[tuple[str, str]], index: int, step: int) -> int:
    """Characters changed in the run of changes next to ``index`` (before: -1, after: 1)."""
    total, k = 0, index + step
    while 0 <= k < len(ops) and ops[k][0] != EQUAL:
        total += len(ops[k][1])
        k += step
    return total


def _is_island(ops: list[tuple[str, str]], index: int) -> bool:
    """An equal run between two changes that reads better folded into them: glue, or a word
    or two shorter than the changes on both sides ("<del>игра</del> и <del>тел</del>")."""
    tag, text = ops[index]
    if tag != EQUAL or not 0 < index < len(ops) - 1:
        return False
    if ops[index - 1][0] == EQUAL or ops[index + 1][0] == EQUAL:
        return False
    if _is_glue(text):
        return True
    short = "\n" not in text and _words_in(text) <= 2
    return short and len(text) < min(_run_length(ops, index, -1), _run_length(ops, index, 1))


def _absorb_glue(ops: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Fold islands of equal text between changes into both the deletion and the insertion."""
    out: list[tuple[str, str]] = []
    for index, (tag, text) in enumerate(ops):
        if _is_island(ops, index):
            out.append((DELETE, text))
            out.append((INSERT, text))
        else:
            out.append((tag, text))
    # Deletions first, then insertions, inside every run of changes.
    result: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for op in [*out, (EQUAL, "")]:
        if op[0] == EQUAL:
            result += [o for o in run if o[0] == DELETE] + [o for o in run if o[0] == INSERT]
            run = []
            result.append(op)
        else:
            run.append(op)
    return [op for op in result if op[1]]


def _merge(ops: list[tuple[str, str]]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for tag, text in ops:
        if merged and merged[-1][0] == tag:
            merged[-1] = (tag, merged[-1][1] + text)
        else:
            merged.append((tag, text))
    return merged


def similarity(old: str, new: str) -> float:
    """0..1: how much of two texts' words are shared (difflib's ratio over word tokens)."""
    a = [t for t in tokenize(old) if _WORD.match(t)]
    b = [t for t in tokenize(new) if _WORD.match(t)]
    if not a and not b:
        return 1.0
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < 0.2:
        return matcher.real_quick_ratio()
    return matcher.ratio()
