"""The reading of a question: language, focus and the kind of fact asked, entities, named
things, version references. Questions written for these tests, not taken from any set."""

from __future__ import annotations

import pytest

from knowledge.question import read
from knowledge.question.mentions import find_refs
from knowledge.text.language import detect, search_config
from knowledge.text.words import is_stop


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Какие поля есть у класса Order?", "ru"),
        ("Что такое Kubernetes Operator?", "ru"),
        ("How long is a sprint?", "en"),
        ("42", "en"),
    ],
)
def test_one_detector_tells_russian_from_english_by_script(text, language):
    assert detect(text) == language


def test_documents_get_the_text_search_configuration_of_their_script():
    assert search_config("Программа испытаний, раздел 2") == "russian"
    assert search_config("Terms of Service") == "english"
    assert search_config("| 12 | 34 |") == "simple"


@pytest.mark.parametrize(
    ("text", "lemma", "kind"),
    [
        ("Сколько стоит годовая подписка на сервис?", "подписка", "price"),
        ("Какой размер вложения допускает почтовый сервер?", "размер", "size"),
        ("В каком году вышла первая версия стандарта?", "год", "year"),
        ("Что такое регрессионное тестирование?", "тестирование", "definition"),
        ("Как настроить ночную сборку?", "сборка", "procedure"),
        ("Почему сборка падает по ночам?", "сборка", "reason"),
        ("Как зовут владельца продукта?", "владелец", "person"),
        ("Сколько серверов в кластере?", "сервер", "number"),
        ("Когда вышла первая версия стандарта?", "версия", "moment"),
        ("Когда был утверждён план испытаний?", "план", "moment"),
        ("Когда запускать ночную сборку?", "сборка", ""),
        ("Когда проводится нагрузочное тестирование?", "тестирование", ""),
    ],
)
def test_the_focus_and_the_kind_of_fact_come_from_the_parse(text, lemma, kind):
    question = read(text)
    assert question.focus.lemma == lemma
    assert question.kind == kind


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Насколько надёжен этот кластер?", ()),
        ("Насколько длинной должна быть инструкция?", ()),
        ("Насколько дорого стоит продление подписки?", ("price",)),
        ("Насколько дольше идёт ночная сборка?", ("number",)),
        ("Сколько узлов в кластере?", ("number",)),
    ],
)
def test_насколько_asks_a_degree_a_number_only_when_a_measure_names_it(text, kinds):
    assert read(text).kinds == kinds


def test_the_question_sentence_holds_the_focus_not_the_context_before_it():
    question = read(
        "Вчера мы выкатили релиз, который сломал оплату картой. Сколько длится откат релиза?"
    )
    assert question.focus.asks == "сколько"
    assert question.kind == "duration"


def test_a_relative_pronoun_is_not_the_question_word():
    question = read("Какие проверки делает команда, которая принимает сборку?")
    assert question.focus.lemma == "проверка"


def test_named_entities_are_not_key_terms_of_the_question():
    question = read("Какая температура воздуха будет в Новосибирске завтра?")
    assert ("place", "Новосибирске") in [(e.kind, e.text) for e in question.entities]
    assert "новосибирск" not in [t.lemma for t in question.key_terms]
    assert "температура" in [t.lemma for t in question.key_terms]


def test_a_gost_document_named_in_full_is_not_a_term_of_the_question():
    question = read("Что пояснительная записка говорит о производительности?")
    assert [t.lemma for t in question.key_terms] == ["производительность"]


def test_how_a_question_names_documents_is_read_once():
    outright = read("Какие сроки по техзаданию?").documents
    assert outright.outright
    assert outright.types == ("техническое задание",)
    topic = read("Как писать техническое задание?").documents
    assert not topic.outright  # a spelled-out type is a topic, not one document
    assert topic.phrases == ("техническое задание",)
    assert {"техни", "задан"} <= topic.stems


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Какой отступ у кнопки в пикселях?", "size"),
        ("Какой штраф в рублях за просрочку?", "price"),
        ("Какая задержка в миллисекундах допустима?", "duration"),
    ],
)
def test_the_unit_a_value_is_wanted_in_asks_for_a_value_of_its_kind(text, kind):
    assert kind in read(text).kinds


def test_a_unit_after_в_in_the_accusative_is_a_rate_not_the_unit_of_the_answer():
    assert "duration" in read("Какой интервал между релизами в неделях?").kinds
    assert "duration" not in read("Сколько отчётов приходит в неделю?").kinds


def test_persons_are_read_in_russian_and_english():
    assert [e.text for e in read("Что Ивану Сидорову ответил заказчик?").persons()] == [
        "Ивану Сидорову"
    ]
    assert [e.text for e in read("What did Maria Lopez say about the release?").persons()] == [
        "Maria Lopez"
    ]
    assert read("How does Max compare screenshots?").persons() == []


def test_named_things_are_identifiers_latin_words_and_abbreviations():
    question = read("Как OrderService передаёт события в Kafka через СУБД?")
    assert {"OrderService", "Kafka", "СУБД"} <= set(question.named)


def test_capitalised_latin_words_in_a_row_are_also_one_name():
    question = read("Как отправить сборку в Azure DevOps через Apache Kafka Streams?")
    assert {"Azure DevOps", "Apache Kafka Streams", "Azure", "DevOps"} <= set(question.named)
    assert "Azure DevOps" not in read("Azure DevOps or Jira: which is cheaper?").named


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Что изменилось между коммитами 0041435 и a1b2c3d?", ["0041435", "a1b2c3d"]),
        ("Сравни ревизию 1234567 с текущей", ["1234567"]),
        ("В компании 1234567 пользователей", []),
    ],
)
def test_a_commit_id_of_digits_only_is_read_beside_a_version_word_or_another_id(text, found):
    assert [m.text for m in find_refs(text) if m.ref.label] == found


def test_an_ordinal_takes_the_date_it_introduces():
    refs = find_refs("Чем вторая версия от 3 июня 2021 отличается от первой версии от 4 июня?")
    assert [(m.ref.day.day, m.ref.ordinal) for m in refs] == [(3, 2), (4, 1)]


@pytest.mark.parametrize(
    ("text", "changes", "version_word"),
    [
        ("What's new in the backup guide?", True, False),
        ("Покажи редакцию 3 регламента отпусков", False, True),
        ("Who signs the leave policy?", False, False),
    ],
)
def test_the_reading_says_whether_a_question_asks_what_changed_or_names_a_version(
    text, changes, version_word
):
    reading = read(text)
    assert (reading.asks_changes, reading.names_version) == (changes, version_word)


@pytest.mark.parametrize(
    ("lemma", "pos", "stop"),
    [
        ("в", "ADP", True),
        ("какой", "DET", True),
        ("как-то", "ADV", True),
        ("означать", "VERB", True),
        ("быть", "AUX", True),
        ("сборка", "NOUN", False),
        ("the", "", True),
        ("release", "", False),
    ],
)
def test_stop_words_are_grammatical_classes(lemma, pos, stop):
    assert is_stop(lemma, pos) is stop
