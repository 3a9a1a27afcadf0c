"""One reading of a question, computed once per turn: ``read(text) -> Question``.

Language, tokens with lemmas, parts of speech and the dependency parse, named entities
(persons, organisations, places), identifiers, Latin words and abbreviations, version
references (and whether the question asks what changed or names a version), the asked focus
and the kind of fact asked. Search, the answerability check, the answer policy, the extractive
answer and the version detector read it; none of them parses the question again.

The reading stands on the word tools (``knowledge.text``: the language models, the language
detector, how a word is matched, the closed word classes), the only place of the code base that
stems, detects language or lists stop words (``tests/knowledge/question/test_one_reading.py``
holds it so). It is pure Python: what it needs of the documents it is given.
"""

from __future__ import annotations

from knowledge.question.reading import Question, Term, read

__all__ = ["Question", "Term", "read"]
