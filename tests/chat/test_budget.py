"""The context budget on sources made here: what a server of a given context reads."""

from __future__ import annotations

from chat.answer.budget import MIN_SOURCES, fit
from chat.answer.prompting import PromptSource

QUESTION = "Сколько часов обычно длится тест на стабильность под нагрузкой?"
ASKED = "Обычно такой тест под нагрузкой длится от шести до восьми часов подряд."
FILLER = (
    "Команда заранее готовит стенд, наполняет базу данными и договаривается о мониторинге. "
    "Отчёт о прогоне хранят вместе с графиками потребления памяти и соединений. "
)


def source(number: int, text: str, *, section: str | None = None) -> PromptSource:
    return PromptSource(
        number=number,
        chunk_id=None,
        document_id=number,
        version_id=number,
        title=f"Страница {number}",
        version_label="",
        heading="Раздел",
        section="",
        url="",
        text=section or text,
        quote="",
        score=1.0 / number,
        chunk_text=text,
    )


def words(text: str) -> int:
    """A tokenizer for the test: one token a word or sign."""
    return len(text.split()) + text.count(",") + text.count(".")


def sources() -> list[PromptSource]:
    first = FILLER * 6 + ASKED + " " + FILLER * 6
    return [
        source(1, first, section=first + FILLER * 20),
        source(2, FILLER * 10),
        source(3, FILLER * 10),
    ]


def sent(prompt) -> str:
    return prompt.messages[-1]["content"]


def test_a_small_context_gets_the_asked_sentence_before_whole_chunks():
    prompt = fit(
        QUESTION, sources(), [], profile=None, refusal="Нет ответа.",
        context=1000, max_tokens=512, count=words,
    )  # fmt: skip
    assert prompt is not None
    assert ASKED in sent(prompt)
    assert prompt.texts[1] != sources()[0].chunk_text  # not the whole chunk: its best units
    assert prompt.max_tokens == 250  # a quarter of the context, under KB_LLM_MAX_TOKENS
    assert prompt.tokens + prompt.max_tokens <= 1000
    assert sum(words(m["content"]) for m in prompt.messages) <= 1000 - 250


def test_a_large_context_gets_whole_chunks_then_sections():
    prompt = fit(
        QUESTION, sources(), [], profile=None, refusal="Нет ответа.",
        context=32_000, max_tokens=512, count=words,
    )  # fmt: skip
    assert prompt.max_tokens == 512
    assert prompt.texts[1] == sources()[0].text  # the section
    assert prompt.texts[2] == sources()[1].chunk_text


def test_a_source_that_does_not_fit_is_not_numbered_in_the_prompt():
    prompt = fit(
        QUESTION, sources(), [], profile=None, refusal="Нет ответа.",
        context=520, max_tokens=64, count=words,
    )  # fmt: skip
    assert prompt is not None and 1 in prompt.texts
    left_out = {1, 2, 3} - set(prompt.texts)
    assert left_out
    for number in left_out:
        assert f"[{number}] Страница {number}" not in sent(prompt)


def test_no_prompt_when_the_sources_would_get_too_little_room():
    assert (
        fit(
            QUESTION,
            sources(),
            [],
            profile=None,
            refusal="Нет ответа.",
            context=400,
            max_tokens=64,
            count=words,
        )  # fmt: skip
        is None
    )
    assert MIN_SOURCES > 0


def test_the_oldest_history_goes_first_when_it_takes_more_than_a_third():
    history = [(f"Вопрос {i}?", "Ответ. " * 150, "") for i in range(3)]
    prompt = fit(
        QUESTION, sources(), history, profile=None, refusal="Нет ответа.",
        context=2000, max_tokens=256, count=words,
    )  # fmt: skip
    asked = [m["content"] for m in prompt.messages if m["role"] == "user"][:-1]
    assert asked and "Вопрос 0?" not in asked and "Вопрос 2?" in asked
