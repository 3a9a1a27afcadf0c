"""The fixed texts of answers, in the question's language (Russian or English).

Everything the pipeline says in its own words (refusal, partial notice, clarification,
extractive label, "no such version") follows the language of the question, not of the page.
"""

from __future__ import annotations

from knowledge.question.language import detect

REFUSAL_EN = "The documents of the knowledge base do not answer this question."

_FACT_NAMES = {
    "ru": {
        "price": "стоимость",
        "percent": "процент",
        "duration": "срок или длительность",
        "size": "размер",
        "date": "дата",
        "year": "год",
        "version": "номер версии",
        "person": "имя",
        "number": "число",
    },
    "en": {
        "price": "the price",
        "percent": "the percentage",
        "duration": "the duration",
        "size": "the size",
        "date": "the date",
        "year": "the year",
        "version": "the version number",
        "person": "the name",
        "number": "the number",
    },
}

_TEXTS = {
    "ru": {
        "partial": "В документах описано: {topic}, но не указано {missing}. Ниже — ближайшие фрагменты.",
        "clarify": "Вопрос можно понять по-разному: в документах это встречается в разных значениях. Уточните, что вы имеете в виду:",
        "no_version": "У документа «{document}» нет версии {missing}. Есть версии: {available}. Выберите нужную:",
        "ask_version": "Что изменилось в «{document}» в версии {label}?",
        "extractive": "Ответ составлен из цитат документов (без языковой модели): самые подходящие фрагменты.",
        "diff_label": "Ответ составлен по сравнению версий документа (без языковой модели).",
        "diff_footer": "Версии: {old} [2] → {new} [3]; полное сравнение [1].",
        "words_only": "Поиск шёл только по словам: сервер эмбеддингов недоступен, поиск по смыслу не работает.",
        "moderation_credentials": "С этим я не помогу: пароли, токены, ключи и другие секреты через базу знаний не выдаются. Доступ оформляется у владельца системы по принятому порядку.",
        "moderation_personal_data": "С этим я не помогу: личные данные коллег (адреса, телефоны, зарплаты, паспортные данные) через базу знаний не выдаются.",
        "moderation_abuse": "Давайте общаться уважительно. С вопросом о документах, процессах и тестировании я с радостью помогу.",
        "moderation_other": "С этим запросом я не помогу: такие запросы в портале не обрабатываются. Задайте, пожалуйста, вопрос о документах.",
    },
    "en": {
        "partial": "The documents describe {topic}, but do not state {missing}. The nearest passages are below.",
        "clarify": "The question can be read in several ways: the documents use these words for different things. Which one do you mean?",
        "no_version": "«{document}» has no version {missing}. Its versions: {available}. Choose one:",
        "ask_version": "What changed in «{document}» in version {label}?",
        "extractive": "Extractive answer (no language model): the passages that best match the question.",
        "diff_label": "Answered from the comparison of the document's versions (no language model).",
        "diff_footer": "Versions: {old} [2] → {new} [3]; the whole comparison [1].",
        "words_only": "Searched by words only: the embeddings server is unavailable, so search by meaning is off.",
        "moderation_credentials": "I can't help with that: passwords, tokens, keys and other secrets are not given out through the knowledge base. Access is granted by the system's owner through the usual procedure.",
        "moderation_personal_data": "I can't help with that: colleagues' personal data (addresses, phone numbers, salaries, passport details) is not given out through the knowledge base.",
        "moderation_abuse": "Let's keep it respectful. I'm glad to help with a question about the documents, processes and testing.",
        "moderation_other": "I can't help with that request: requests of this kind are not handled by the portal. Please ask about the documents.",
    },
}


def language_of(text: str) -> str:
    """ "ru" or "en": the one detector of the code base (``knowledge.question.language``)."""
    return detect(text)


def say(key: str, language: str, **values: object) -> str:
    return _TEXTS[language if language in _TEXTS else "en"][key].format(**values)


def fact_name(kind: str, language: str) -> str:
    return _FACT_NAMES.get(language, _FACT_NAMES["en"]).get(kind, kind)


def partial_notice(language: str, topic: str, named_missing: list[str], asked: str) -> str:
    """ "В документах описано X, но не указано Y": Y is the named things they lack, or the
    kind of fact asked."""
    if named_missing:
        names = ", ".join(f"«{n}»" for n in named_missing)
        missing = ("ничего о " if language == "ru" else "anything about ") + names
    else:
        missing = fact_name(asked, language)
    return say("partial", language, topic=topic, missing=missing)
