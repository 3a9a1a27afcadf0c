"""The answerability check on the question's reading and a given evidence (no search)."""

from __future__ import annotations

from chat.assess.answerability import check
from knowledge.question import read


def _check(question_text: str, evidence: str):
    question = read(question_text)
    vocabulary = {t.lemma: 3 for t in question.key_terms}
    return check(question, [evidence], vocabulary=vocabulary)


def test_a_noun_a_demonstrative_points_back_with_is_not_the_topic_the_evidence_must_name():
    question = read(
        "Ночью гоняем на стенде сценарий с тысячей виртуальных пользователей. "
        "Сколько обычно длится такая проверка?"
    )
    assert question.focus.lemma == "проверка" and question.focus.anaphoric
    checked = _check(
        question.text,
        "Сценарий с виртуальными пользователями на стенде обычно длится от 2 до 4 часов.",
    )
    assert checked.decision == "answer", checked.reason


def test_the_pointed_back_noun_still_needs_the_other_words_and_the_value():
    checked = _check(
        "Ночью гоняем на стенде сценарий с тысячей виртуальных пользователей. "
        "Сколько обычно длится такая проверка?",
        "Сценарий с виртуальными пользователями на стенде описан в отдельном разделе.",
    )
    assert checked.decision != "answer"
    assert checked.fact_found is False


def test_a_deadline_is_answered_by_a_date_or_by_a_span():
    table = "| Стадия | Срок подачи |\n|---|---|\n| Отчёт об испытаниях | 12.03.2021 |"
    dated = _check("Какой срок подачи отчёта об испытаниях?", table)
    assert dated.decision == "answer", dated.reason
    span = _check("Какой срок хранения журнала аудита?", "Хранение журнала аудита: 90 дней.")
    assert span.decision == "answer", span.reason
    missing = _check("Какой срок хранения журнала аудита?", "Хранение журнала аудита: в архиве.")
    assert missing.decision != "answer" and missing.asked == "deadline"


def test_a_name_of_latin_words_stands_in_the_evidence_as_written():
    asked = "Как опубликовать сборку в Azure DevOps?"
    apart = _check(asked, "Сборку публикуют через портал Azure. DevOps-сборку подписывают ключом.")
    assert apart.decision != "answer" and apart.named_missing == ["Azure DevOps"]
    together = _check(asked, "Сборку публикуют в Azure  DevOps через портал разработчика.")
    assert together.decision == "answer", together.reason


def test_the_value_asked_is_stated_of_the_thing_the_question_names():
    asked = "Сколько стоит лицензия YouTrack для команды?"
    other = _check(
        asked,
        "Лицензия Jira для команды стоит 10 долларов в месяц. YouTrack ставят на свой сервер.",
    )
    assert other.decision == "partial" and other.fact_found is False, other.reason
    own = _check(asked, "Лицензия YouTrack для команды стоит 10 долларов в месяц.")
    assert own.decision == "answer", own.reason


def test_a_name_only_in_the_sentences_before_the_question_sets_the_scene():
    evidence = "Нагрузочное тестирование стенда проводят по ночам, когда пользователей нет."
    scene = _check(
        "Наш DBA просит разгрузить днём стенд. Когда проводят нагрузочное тестирование стенда?",
        evidence,
    )
    assert scene.decision == "answer", scene.reason
    asked = _check("Когда DBA проводит нагрузочное тестирование стенда?", evidence)
    assert asked.decision != "answer" and asked.named_missing == ["DBA"]


def test_when_something_happened_is_answered_by_a_date_or_a_year():
    asked = "Когда вышла первая версия стандарта?"
    dated = _check(asked, "Первая версия стандарта вышла в марте 2019 года.")
    assert dated.decision == "answer", dated.reason
    undated = _check(asked, "Первая версия стандарта вышла после долгого обсуждения.")
    assert undated.decision != "answer" and undated.asked == "moment"


def test_a_word_naming_the_documents_is_never_the_focus():
    question = read("Сколько по вики обычно длится ретроспектива?")
    assert question.focus.lemma == "ретроспектива"
    assert question.kind == "duration"


STAND = "Сценарий с виртуальными пользователями на стенде обычно длится от 2 до 4 часов."
ASKED = "Сколько длится сценарий с виртуальными пользователями на стенде?"


def _with_meaning(meaning: float | None, *, scoped: bool = False):
    question = read(ASKED)
    vocabulary = {t.lemma: 3 for t in question.key_terms}
    return check(question, [STAND], vocabulary=vocabulary, meaning=meaning, scoped=scoped)


def test_nothing_close_enough_in_meaning_is_refused_whatever_the_words():
    assert _with_meaning(0.95).decision == "answer"
    far = _with_meaning(0.70)
    assert far.decision == "refusal" and "meaning" in far.reason
    assert far.meaning == 0.7


def test_without_second_vectors_or_for_a_named_document_the_meaning_is_not_read():
    assert _with_meaning(None).decision == "answer"
    assert _with_meaning(0.70, scoped=True).decision == "answer"


def test_the_meaning_threshold_is_the_configured_one(ranking_weights):
    ranking_weights(meaning={"refuse_below": 0.6})
    assert _with_meaning(0.70).decision == "answer"
    ranking_weights(meaning={"refuse_below": 0.0})
    assert _with_meaning(0.10).decision == "answer"
