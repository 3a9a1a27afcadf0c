"""Hard bounds on every unit of text the system embeds or scores. No Django in here.

A file of one 5-million-letter word was one chunk of 5 million characters: the embedder grew a
worker to 20 GB and the kernel ended it, and the retry climbed again (issue 50). A real
document can hold such a run (a minified line, a base64 blob), so it is indexed, cut:

- **a token** (a run of characters without a blank) longer than ``LONG_TOKEN_CHARS`` is cut
  into pieces of that length, a space between them (``split_long_tokens``); the chunker does
  it to every block's text, table cell and caption before it packs them;
- **a chunk** is at most ``CHUNK_MAX_CHARS`` characters: a longer one is cut at blanks into
  consecutive chunks of the same section (``within_ceiling``);
- **an embedder** reads at most ``EMBED_MAX_CHARS`` characters of a text (``knowledge.
  embedding``): a chunk with its title and heading path, or a question; and of a token of
  ``LONG_TOKEN_CHARS`` or more (a piece of a cut one) its first ``EMBED_TOKEN_CHARS``: such a
  run is not language to a sentence encoder, and USE's tokenizer spent a second on each 10,000
  characters of one (a 5 MB word: 500 chunks, ten minutes). Its words stay whole in the chunk
  for the word search (``embed_view``).

The limits are above anything the demo corpus holds (its longest token is a URL of 1,204
characters, its longest chunk 5,529 characters), so its chunks and vectors are as they were.
"""

from __future__ import annotations

import re

LONG_TOKEN_CHARS = 2000  # below PostgreSQL's 2,047-character word limit of a tsvector, too
CHUNK_MAX_CHARS = 12_000
# A chunk at its ceiling with its document's title and heading path in front of it.
EMBED_MAX_CHARS = 16_000
EMBED_TOKEN_CHARS = 200

# Tried only where a token begins: each token is read once, whatever the text (from inside a
# long token every position would be tried again).
_LONG_TOKEN = re.compile(rf"(?<!\S)\S{{{LONG_TOKEN_CHARS + 1},}}")


def has_long_token(text: str) -> bool:
    return _LONG_TOKEN.search(text) is not None


def split_long_tokens(text: str) -> str:
    """``text`` with every token longer than ``LONG_TOKEN_CHARS`` cut into pieces of that
    length, a space between them; the text itself when it has none (the usual case)."""
    if not has_long_token(text):
        return text

    def pieces(found: re.Match[str]) -> str:
        token = found.group(0)
        step = LONG_TOKEN_CHARS
        return " ".join(token[i : i + step] for i in range(0, len(token), step))

    return _LONG_TOKEN.sub(pieces, text)


_AT_LIMIT = re.compile(rf"(?<!\S)\S{{{LONG_TOKEN_CHARS},}}")


def embed_view(text: str) -> str:
    """What an embedder reads of ``text``: each token of ``LONG_TOKEN_CHARS`` or more cut to its
    first ``EMBED_TOKEN_CHARS``, then at most ``EMBED_MAX_CHARS`` characters."""
    text = text[: EMBED_MAX_CHARS * 4]  # whatever follows cannot be read anyway
    text = _AT_LIMIT.sub(lambda found: found.group(0)[:EMBED_TOKEN_CHARS], text)
    return text[:EMBED_MAX_CHARS]


def within_ceiling(text: str, limit: int = CHUNK_MAX_CHARS) -> list[str]:
    """``text`` in consecutive parts of at most ``limit`` characters, each cut at the last
    blank before the limit (a line break first); ``[text]`` when it fits."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        cut = text.rfind("\n", start + limit // 2, end)
        if cut == -1:
            cut = max(text.rfind(" ", start + limit // 2, end), text.rfind("\t", start, end))
        if cut <= start:
            cut = end  # no blank in the second half: cut where the limit is
        parts.append(text[start:cut].strip())
        start = cut
    parts.append(text[start:].strip())
    return [part for part in parts if part]
