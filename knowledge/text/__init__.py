"""The word tools every room uses, in pure Python (no Django, no database): the toolbox at the
bottom of ``knowledge``.

- ``nlp``: razdel, natasha's models and pymorphy3 behind one door (tokens, sentences, the parse,
  named entities, lemmas, word vectors), loaded once per process: the only module of the code
  base that loads the language models;
- ``language``: the one language detector (questions, answers' wording, documents' text-search
  configuration);
- ``matching``: how a word is matched, one way per purpose (lemmas for meaning, normal forms for
  the closed classes, name stems for the names of documents);
- ``words``: the closed word classes, the one stop-word list of the code base among them;
- ``named``: the named things of a text (identifiers, Latin words, abbreviations, quoted names,
  figures); ``persons``: persons named in an English text;
- ``identifiers``: an identifier's parts as the full-text index reads them;
- ``confusables``: Unicode's look-alike characters (moderation, the prompt fence, source names).

The reading of a question (``knowledge.question``) and the parsers (``knowledge.parsing``) stand
on it; it imports nothing of the house (``tests/knowledge/question/test_one_reading.py`` and the
contracts in ``pyproject.toml`` hold it so).
"""
