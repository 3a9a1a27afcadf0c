"""The extractive answer leads with the asked fact: the unit holding a value of the kind asked,
from whichever passage holds it, quoted first with its own link."""

from __future__ import annotations

from chat.answer.extractive import (
    LENGTH,
    Passage,
    Scored,
    _render,
    best_quote,
    extractive_answer,
)
from knowledge.question import read
from knowledge.units import units

OPENING = (
    "Тестирование выносливости проверяет, как система ведёт себя под постоянной нагрузкой. "
    "Его проводят перед крупными релизами. Команда готовит сценарии заранее."
)
DURATION = (
    "Нагрузку держат на стенде долго. Обычно такой прогон длится 6–8 часов. "
    "За это время ищут утечки памяти."
)


def answer(question: str, *passages: Passage) -> str:
    return extractive_answer(read(question), list(passages), language="ru")


def test_the_sentence_with_the_asked_duration_leads_from_the_passage_that_holds_it():
    text = answer(
        "Сколько обычно длится тестирование выносливости?",
        Passage(1, "Тестирование выносливости", "Обзор", OPENING),
        Passage(2, "Стенд", "Прогоны", DURATION),
    )
    opening, rest = text.split("\n\n", 2)[1:]
    # The answer opens with the sentence holding the duration (and the one it leans on), on a
    # line of its own with its link; the passages follow, that one first, without saying it
    # twice.
    assert opening.startswith("> ") and opening.endswith("[2]") and "6–8 часов" in opening
    assert "Нагрузку держат на стенде долго." in opening
    assert rest.startswith("**Стенд** — Прогоны [2]") and "6–8 часов" not in rest
    assert "[1]" in rest  # the other passage is still quoted, after it


def test_a_question_the_document_asks_comes_with_its_answer():
    page = (
        "Критерии приёмки описывают готовую функцию. Их формулируют до разработки. "
        "Кто пишет критерии приёмки? Обычно этим занимается владелец продукта."
    )
    text = answer("Кто формулирует критерии приёмки?", Passage(1, "Критерии", "", page))
    assert "Кто пишет критерии приёмки? Обычно этим занимается владелец продукта." in text


def test_a_sentence_under_a_sub_heading_says_the_heading():
    page = "### Общее состояние\n\nМодули разделяют глобальные переменные и синглтоны."
    text = answer(
        "Как называется связь через глобальные переменные?", Passage(1, "Связи", "", page)
    )
    assert "**Общее состояние:** Модули разделяют глобальные переменные" in text


def test_the_row_answering_the_question_is_quoted_under_its_header():
    table = (
        "Описание методов класса Store\n\n| Имя | Тип | Назначение |\n| --- | --- | --- |\n"
        "| Store | void | Конструктор. |\n| Reload | void | Отправляет запрос к серверу. |\n"
        "| Save | void | Сохраняет файл на диск. |"
    )
    quote = best_quote(read("Какой метод отправляет запрос к серверу?"), table)
    lines = quote.splitlines()
    assert "| Reload | void | Отправляет запрос к серверу. |" in lines
    assert lines.index("| Имя | Тип | Назначение |") < lines.index(
        "| Reload | void | Отправляет запрос к серверу. |"
    )
    assert "| Save | void | Сохраняет файл на диск. |" not in lines


def test_the_answer_stays_short_however_long_the_passages():
    long = " ".join(f"Предложение номер {i} о тестировании выносливости стенда." for i in range(80))
    text = answer(
        "Что известно о тестировании выносливости стенда?",
        *[Passage(n, f"Страница {n}", "", long) for n in range(1, 6)],
    )
    quoted = sum(len(line) for line in text.splitlines() if line.startswith("> "))
    assert quoted <= LENGTH + 3 * 80  # the first unit of each passage may go a little over


def test_a_list_of_links_is_never_the_answer():
    links = "- [Статья](https://example.org/a)\n- [Видео](https://example.org/b)"
    text = answer(
        "Где почитать о тестировании выносливости?",
        Passage(1, "Ссылки", "Источники", links),
        Passage(2, "Тестирование выносливости", "", OPENING),
    )
    assert "example.org" not in text and "[2]" in text


def test_an_item_of_a_list_is_quoted_with_its_list():
    page = (
        "Есть три типа анализа влияния:\n\n"
        "- Анализ зависимостей ищет части продукта, которые придётся переделать;\n"
        "- Эмпирический анализ оценивает риски для всего процесса;\n"
        "- Анализ прослеживаемости смотрит на документацию.\n\n"
        "Отдельно стоит сказать о сроках и бюджете проекта в целом."
    )
    text = answer("Какие типы анализа влияния бывают?", Passage(1, "Импакт анализ", "", page))
    for item in ("Анализ зависимостей", "Эмпирический анализ", "Анализ прослеживаемости"):
        assert item in text


def test_a_sentence_that_leans_on_the_ones_before_it_is_quoted_with_them():
    page = (
        "Цвет не должен быть единственным способом передачи информации. "
        "Чтобы сократить число проверок, берут три фильтра: дейтеранопия, протанопия и тританопия. "
        "Это наиболее частые формы цветовой слепоты. "
        "Если интерфейс различим с этими тремя фильтрами, он различим и для остальных людей."
    )
    text = answer(
        "Какие фильтры цветовой слепоты проверить, чтобы интерфейс был различим для всех людей?",
        Passage(1, "Доступность", "", page),
    )
    assert "дейтеранопия, протанопия и тританопия" in text
    opening = text.split("\n\n")[1]
    assert opening.index("дейтеранопия") < opening.index("с этими тремя фильтрами")


def test_a_row_named_like_the_table_itself_is_not_taken_for_the_row_asked():
    # The caption names the class: its constructor's row, labelled with the same name, is not
    # what "which method of Store sends a request" asks for.
    table = (
        "Описание методов класса Store\n\n| Имя | Тип | Назначение |\n| --- | --- | --- |\n"
        "| Store | void | Обновляет данные при смене языка. |\n"
        "| Reload | void | Отправляет запрос к серверу и обновляет данные. |\n"
        "| Save | void | Сохраняет файл на диск. |"
    )
    text = answer(
        "Какой метод класса Store отправляет запрос к серверу и обновляет данные?",
        Passage(1, "Пояснительная записка", "Методы", table),
    )
    assert "| Reload | void | Отправляет запрос к серверу и обновляет данные. |" in text


def test_a_word_every_sentence_holds_weighs_less_than_a_rare_one():
    # Each of the first three holds three of the question's words, all common to them; the
    # last holds the two words no other sentence holds: it answers, and is quoted.
    page = (
        "Сервис хранит старые данные диска. Сервис хранит старые журналы диска. "
        "Сервис читает старые файлы диска. Архивы и подписи проверяет планировщик каждую ночь."
    )
    text = answer(
        "Что сервис делает со старыми архивами и подписями диска?",
        Passage(1, "Сервис", "", page),
    )
    assert "Архивы и подписи проверяет планировщик каждую ночь." in text


def test_another_list_a_quoted_item_belongs_to_is_quoted_whole_and_in_order():
    page = (
        "Памятка проверок стажёра ведётся в таблице. "
        "Таблица памятки проверок стажёра хранится в вики команды.\n\n"
        "Колонки у неё такие:\n\n"
        "- первая: названия проверок стажёра;\n"
        "- вторая для отметки: pass/fail;\n"
        "- третья под заметки.\n"
    )
    text = answer("Где хранится таблица памятки проверок стажёра?", Passage(1, "Памятка", "", page))
    assert text.index("хранится в вики") < text.index("Колонки у неё такие")
    positions = [text.index(s) for s in ("Колонки у неё такие", "первая:", "вторая", "третья")]
    assert positions == sorted(positions)


def test_a_quote_never_ends_on_a_label_that_announces_nothing_quoted():
    page = (
        "Прогон на стенде длится 6–8 часов.\n\n"
        "Источники:\n\n- [Статья](https://example.org/a)\n- [Видео](https://example.org/b)"
    )
    text = answer("Сколько длится прогон на стенде?", Passage(1, "Стенд", "", page))
    assert "6–8 часов" in text.split("\n\n")[1]
    assert "Источники" not in text


def test_a_table_row_opens_the_answer_under_its_header_row():
    table = (
        "| Прогон | Длительность | Стенд |\n| --- | --- | --- |\n"
        "| Дымовой | 10 минут | общий |\n| Выносливость | 6–8 часов | отдельный |\n"
        "| Регресс | 2 часа | общий |"
    )
    text = answer("Сколько длится прогон выносливости?", Passage(3, "Прогоны", "Расписание", table))
    opening = text.split("\n\n")[1].splitlines()
    assert opening[0] == "| Прогон | Длительность | Стенд |"
    assert opening[-1] == "| Выносливость | 6–8 часов | отдельный |"
    # Its source's label and link right after it: a row alone does not say whose table it is.
    assert text.split("\n\n")[2] == "**Прогоны** — Расписание [3]"
    assert "| Регресс |" not in text  # the other rows are not the asked one


def test_a_caption_quoted_as_a_sentence_is_not_said_again_above_its_rows():
    # A passage's quote may hold its table's caption as a sentence and one of its rows, which
    # brings the caption along: the caption is said once.
    text = "Поля класса Заказ\n\n| Имя | Тип |\n| --- | --- |\n| Номер | int |\n| Сумма | decimal |"
    found = units(text)
    caption = next(u for u in found if not u.table)
    row = next(u for u in found if u.table and "Номер" in u.row)
    assert row.caption == caption.text.strip()
    chosen = [Scored(0, u, 1.0, 1.0, False) for u in (caption, row)]
    quote = _render(chosen, heading="")
    assert quote.count("Поля класса Заказ") == 1 and "| Номер | int |" in quote, quote


def test_a_table_rows_passage_is_labelled_once_and_its_caption_said_once():
    page = (
        "Длительность прогонов на стенде\n\n"
        "| Прогон | Длительность |\n| --- | --- |\n"
        "| Выносливость | 6–8 часов |\n| Регресс | 2 часа |\n\n"
        "Прогон выносливости на стенде длится дольше других прогонов."
    )
    text = answer(
        "Сколько длится прогон выносливости на стенде?", Passage(2, "Стенд", "Прогоны", page)
    )
    assert text.split("\n\n")[1].splitlines()[-1] == "| Выносливость | 6–8 часов |", text
    assert text.count("**Стенд**") == 1, text
    assert text.count("Длительность прогонов на стенде") <= 1, text
