"""The SQL side of the lexical list: a question's lexemes and content words, and what the
normalised BM25 makes of words the knowledge base has never seen."""

from __future__ import annotations

from knowledge.retrieval import sql as q
from knowledge.retrieval.fusion import bm25_idf
from knowledge.retrieval.hybrid import SearchOptions, search
from tests.knowledge.retrieval.conftest import add_document, make_source


def words_of(text: str) -> list[list[str]]:
    return q.query_terms(text, q.LANGUAGES)[1]


def test_content_words_leave_out_stop_words_and_question_words(db):
    words = words_of("Сколько тест-кейсов в разделе про авторизацию?")
    flat = {x for variants in words for x in variants}
    assert {"тест", "кейс", "раздел", "авторизац"} <= flat
    assert not flat & {"сколько", "в", "про"}
    assert len(words) == 4  # "тест-кейсов" counts as its two parts, not a third word
    english = words_of("How many points did the Panthers defense surrender?")
    assert [w for w in english if "point" in w] and [w for w in english if "panther" in w]
    assert not {x for w in english for x in w} & {"how", "many", "did", "the"}


def test_each_word_keeps_its_lexeme_under_every_configuration(db):
    [word] = words_of("пароли")
    assert "парол" in word  # russian stem
    assert "пароли" in word  # simple: the word itself


def test_the_lexemes_include_compounds_for_scoring(db):
    lexemes, _ = q.query_terms("тест-кейсы", q.LANGUAGES)
    assert "тест-кейс" in lexemes and "тест" in lexemes


def test_stop_words_are_not_scored_under_another_configuration(db):
    # "simple" (and "russian" for English words) keep "in", "if", "the"; no chunk indexed in
    # English has them, so as lexemes they were the question's rarest, heaviest terms.
    lexemes, _ = q.query_terms("What drove the change in expenses if any?", q.LANGUAGES)
    assert {"drove", "chang", "expens"} <= set(lexemes)
    assert not set(lexemes) & {"in", "if", "the", "what", "any"}
    lexemes, _ = q.query_terms("Пароль и логин в системе", q.LANGUAGES)
    assert {"парол", "логин", "систем"} <= set(lexemes)
    assert not set(lexemes) & {"и", "в"}


def test_an_empty_question_has_no_terms(db):
    assert q.query_terms("  ", q.LANGUAGES) == ([], [])
    assert q.query_terms("и в на", q.LANGUAGES)[1] == []


HANDBOOK = """# Парольная политика

## Длина пароля

Пароль пользователя должен содержать не менее двенадцати символов. Короткий пароль система
отклоняет при регистрации и при смене пароля.
"""


def test_words_nothing_contains_lower_the_lexical_share(db, embedder):
    add_document(make_source("Security"), "policy.md", HANDBOOK, embedder)
    lexical = SearchOptions(lists=("lexical",), min_score=-1.0)
    known = search("длина пароля", options=lexical, embedder=embedder).candidates[0]
    diluted = search("длина пароля шарлотки", options=lexical, embedder=embedder).candidates[0]
    assert known.chunk_id == diluted.chunk_id
    assert known.lexical.score == diluted.lexical.score  # the same words matched
    # but a third of the question is a word no chunk has, and it outweighs a known word
    assert diluted.calibrated.lexical_norm < known.calibrated.lexical_norm * 0.6


def test_question_words_of_a_definition_question_are_not_content_words(db):
    assert words_of("Что такое протокол?") == [["протокол"]]
    assert [w for w in words_of("Объясни, что означает регресс") if "регресс" in w] == words_of(
        "Объясни, что означает регресс"
    )


def test_unknown_words_are_the_content_words_no_chunk_contains(db, embedder):
    add_document(make_source("Security"), "policy.md", HANDBOOK, embedder)
    assert q.unknown_words("Какая длина пароля?") == []
    assert [w for w in q.unknown_words("Как испечь шарлотку к паролю?") if "шарлотк" in w]
    assert len(q.unknown_words("Как испечь шарлотку к паролю?")) == 2  # испечь, шарлотку


def test_the_prefilter_keeps_the_best_bm25_chunks(db, embedder):
    source = make_source("Notes")
    for i in range(12):
        body = "пароль " * (i % 4 + 1) + "система учёт журнал " + ("аудит" if i % 5 == 0 else "")
        add_document(source, f"note-{i}.md", f"# Заметка {i}\n\n{body}\n", embedder)
    lexemes, _ = q.query_terms("аудит пароля в системе", q.LANGUAGES)
    df, total, avg = q.term_stats(lexemes)
    idf = {x: bm25_idf(df[x], total) for x in lexemes if df.get(x)}
    scope = q.Scope(q.Filters(), None, embedder.model_id)
    terms = q.Terms(idf, avg)
    everything = q.bm25(scope, terms, k=3, matching=q.Matching(list(idf)))
    filtered = q.bm25(scope, terms, k=3, matching=q.Matching(list(idf), prefilter=3))
    # The same chunks with the same BM25 (the sum may add its terms in another order).
    assert [(i, round(score, 9)) for i, score in filtered] == [
        (i, round(score, 9)) for i, score in everything
    ]
    assert len(everything) == 3


def _reference_bm25(chunk_ids, idf, avg) -> dict[int, float]:
    """BM25 of the chunks from their whole full-text vectors, unnested in full (as before the
    vector was cut down to the question's terms), positions and heading weights counted here."""
    from django.db import connection

    k1, b = q.BM25_K1, q.BM25_B
    scores: dict[int, float] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.lexeme_count, u.lexeme, u.positions, u.weights "
            "FROM knowledge_chunk c, unnest(c.search_vector) u WHERE c.id = ANY(%s)",
            [list(chunk_ids)],
        )
        for chunk_id, length, lexeme, positions, weights in cursor.fetchall():
            if lexeme not in idf:
                continue
            heading = sum(1 for w in weights or [] if w in ("A", "B"))
            tf = len(positions or [None]) + (q.HEADING_TF - 1) * heading
            norm = k1 * (1 - b + b * length / max(avg, 1.0))
            scores[chunk_id] = scores.get(chunk_id, 0.0) + idf[lexeme] * tf * (k1 + 1) / (tf + norm)
    return scores


def test_bm25_counts_every_position_and_heading_of_the_question_terms(db, embedder):
    source = make_source("Guides")
    add_document(
        source,
        "audit.md",
        "# Аудит паролей\n\n## Журнал аудита\n\nАудит пароля: журнал хранит пароль и аудит "
        "входа, пароль меняют раз в квартал.\n\n## Прочее\n\nСистема учёта без паролей.\n",
        embedder,
    )
    add_document(source, "misc.md", "# Заметки\n\nПароль от системы учёта.\n", embedder)
    lexemes, _ = q.query_terms("аудит пароля в журнале системы", q.LANGUAGES)
    df, total, avg = q.term_stats(lexemes)
    idf = {x: bm25_idf(df[x], total) for x in lexemes if df.get(x)}
    scope = q.Scope(q.Filters(), None, embedder.model_id)
    found = q.bm25(scope, q.Terms(idf, avg), k=10, matching=q.Matching(list(idf), prefilter=5))
    expected = _reference_bm25([i for i, _ in found], idf, avg)
    assert len(found) >= 3
    assert {i: round(s, 9) for i, s in found} == {i: round(s, 9) for i, s in expected.items()}
    # A term in a heading counts more than once: the top chunk has "аудит" in its headings.
    assert found[0][1] > found[-1][1]
