"""A chunk's text cut into units: sentences, list items, table rows under their header."""

from __future__ import annotations

from knowledge.units import units

TEXT = """Вступление к разделу. Вторая фраза вступления.

### Common Coupling

Модули разделяют глобальное состояние. В тестах это источник нестабильности.

**Итог**

- Первый пункт списка с тремя словами;
- 2. Второй пункт списка тоже длинный.

Таблица параметров стенда
| Параметр | Значение |
| --- | --- |
| Пользователи | 500 |
| Длительность | 8 часов |

Кто пишет отчёт? Обычно его пишет ведущий инженер.
"""


def test_sentences_items_and_rows_are_units_in_order():
    found = units(TEXT)
    texts = [u.text for u in found]
    assert texts[:2] == ["Вступление к разделу.", "Вторая фраза вступления."]
    assert "Модули разделяют глобальное состояние." in texts
    assert "Первый пункт списка с тремя словами;" in texts  # the list marker is not quoted
    rows = [u for u in found if u.table]
    assert [u.row for u in rows] == ["| Пользователи | 500 |", "| Длительность | 8 часов |"]
    assert [u.order for u in found] == list(range(len(found)))


def test_a_unit_keeps_the_sub_heading_it_stands_under():
    found = {u.text: u for u in units(TEXT)}
    assert found["Вступление к разделу."].heading == ""
    coupling = found["В тестах это источник нестабильности."]
    assert coupling.heading == "Common Coupling"
    assert coupling.embed_text == "Common Coupling: В тестах это источник нестабильности."
    assert found["Первый пункт списка с тремя словами;"].heading == "Итог"


def test_a_row_is_read_under_its_header_and_caption():
    row = next(u for u in units(TEXT) if u.table)
    assert row.head == ("| Параметр | Значение |", "| --- | --- |")
    assert row.caption == "Таблица параметров стенда"
    assert row.embed_text == (
        "Таблица параметров стенда\n| Параметр | Значение |\n| Пользователи | 500 |"
    )


def test_a_title_row_across_a_table_takes_the_column_names_with_it():
    table = (
        "| Поля | | |\n| --- | --- | --- |\n| Имя | Тип | Описание |\n| Link | string | Ссылка |"
    )
    (row,) = units(table)
    assert row.row == "| Link | string | Ссылка |"
    assert row.head[-1] == "| Имя | Тип | Описание |"
    assert "| Имя | Тип | Описание |\n| Link | string | Ссылка |" in row.embed_text


def test_a_question_the_document_asks_is_marked():
    found = units(TEXT)
    asked = next(u for u in found if u.text == "Кто пишет отчёт?")
    assert asked.asks and not found[asked.order + 1].asks


def test_abbreviations_do_not_end_a_sentence():
    found = units("Версия 2.3 вышла вчера. Длится 6–8 ч. в среднем, т.е. долго. Всё.")
    assert [u.text for u in found] == [
        "Версия 2.3 вышла вчера.",
        "Длится 6–8 ч. в среднем, т.е. долго.",
        "Всё.",
    ]


def test_a_title_row_inside_a_table_heads_the_rows_below_it_with_their_own_column_names():
    table = (
        "| Поля | | |\n| --- | --- | --- |\n| Имя | Тип | Назначение |\n"
        "| items | List | Все мероприятия |\n"
        "| Методы | | |\n| Имя | Аргументы | Назначение |\n"
        "| Reload | - | Обновляет данные |\n\nТекст после таблицы."
    )
    found = units(table)
    assert [u.row for u in found if u.table] == [
        "| items | List | Все мероприятия |",
        "| Reload | - | Обновляет данные |",
    ]
    reload = found[1]
    assert reload.heading == "Методы"
    assert reload.head[-1] == "| Имя | Аргументы | Назначение |"
    assert found[-1].text == "Текст после таблицы." and found[-1].heading == ""


def test_the_items_of_one_list_share_its_number():
    found = units(
        "Вступление.\n\n- первый пункт\n- второй пункт\n\nТекст между.\n\n1. другой список"
    )
    numbers = {u.text: u.items for u in found}
    assert numbers["Вступление."] == 0 and numbers["Текст между."] == 0
    assert numbers["первый пункт"] == numbers["второй пункт"] != numbers["другой список"] > 0


def test_a_sentence_with_a_demonstrative_points_back():
    found = units(
        "Берут три фильтра: дейтеранопия, протанопия и тританопия. "
        "Это наиболее частые формы. Если интерфейс виден с этими фильтрами, всё в порядке. "
        "Тот же приём годится для графиков."
    )
    assert [u.points_back for u in found] == [False, True, True, False]


def test_a_quotation_s_question_marks_do_not_end_the_sentence():
    found = units(
        "Заголовок пишут по формуле “Что? Где? Когда?” и не длиннее строки. "
        'Экран 5" тоже бывает. Он спросил: «Зачем? Почему?» Ответа не было.'
    )
    assert [u.text for u in found] == [
        "Заголовок пишут по формуле “Что? Где? Когда?” и не длиннее строки.",
        'Экран 5" тоже бывает.',
        "Он спросил: «Зачем? Почему?» Ответа не было.",
    ]


def test_a_quotation_never_closed_does_not_swallow_the_line():
    line = "Он сказал: «Начнём. " + " ".join(f"Фраза номер {i} про тесты." for i in range(40))
    assert max(len(u.text) for u in units(line)) <= 300
