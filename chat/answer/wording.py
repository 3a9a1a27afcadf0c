"""The fixed texts of answers, in the question's language (Russian or English).

Everything the pipeline says in its own words (refusal, partial notice, clarification,
extractive label, "no such version", its status lines) follows the language of the question, not
of the page. The texts go through gettext like the rest of the interface: English here, Russian in
``locale/ru/LC_MESSAGES/django.po``.
"""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext, gettext_noop, pgettext

from chat.models import ChatSettings
from knowledge.question.resolving import Place
from knowledge.text.language import detect

REFUSAL_EN = "The documents of the knowledge base do not answer this question."

# The kinds of fact a partial answer names as missing.
_FACT_NAMES = {
    "price": gettext_noop("the price"),
    "percent": gettext_noop("the percentage"),
    "duration": gettext_noop("the duration"),
    "deadline": gettext_noop("the deadline"),
    "size": gettext_noop("the size"),
    "date": gettext_noop("the date"),
    "moment": gettext_noop("the date"),
    "year": gettext_noop("the year"),
    "version": gettext_noop("the version number"),
    "person": gettext_noop("the name"),
    "organisation": gettext_noop("the organisation"),
    "place": gettext_noop("the place"),
    "number": gettext_noop("the number"),
}

# The pipeline's own sentences, English as written here; the catalogs (locale/) translate them.
_TEXTS = {
    "partial": gettext_noop(
        "The documents describe {topic}, but do not state {missing}. The nearest passages are below."
    ),
    "anything_about": gettext_noop("anything about {names}"),
    "clarify": gettext_noop(
        "The question can be read in several ways: the documents use these words for different "
        "things. Which one do you mean?"
    ),
    "no_version": gettext_noop(
        "«{document}» has no version {missing}. Its versions: {available}. Choose one:"
    ),
    "no_version_nearest": gettext_noop(
        "«{document}» has no version {missing}. The versions nearest to it: {available}. "
        "Choose one:"
    ),
    "several_versions": gettext_noop(
        "In «{document}», {several} could be several versions: {available}. Choose one:"
    ),
    "ask_version": gettext_noop("What changed in «{document}» in version {label}?"),
    "compared": gettext_noop("Comparing {old} and {new}."),
    "version_of_day": gettext_noop("the version of {day}{tag}"),
    "nth_version_of_day": gettext_noop("the {ordinal} version of {day}{tag}"),
    "numbered_version_of_day": gettext_noop("version no. {number} of {day}{tag}"),
    "labelled_version": gettext_noop("version {label}"),
    "date": gettext_noop("{year}-{month}-{day}"),
    "extractive": gettext_noop(
        "Extractive answer (no language model): the passages that best match the question."
    ),
    "diff_label": gettext_noop(
        "Answered from the comparison of the document's versions (no language model)."
    ),
    "diff_footer": gettext_noop("Versions: {old} [2] → {new} [3]; the whole comparison [1]."),
    "words_only": gettext_noop(
        "Searched by words only: the embeddings server is unavailable, so search by meaning is off."
    ),
    "searching": gettext_noop("Searching the documents…"),
    "comparing": gettext_noop("Comparing the versions…"),
    "chat_off": gettext_noop(
        "The chat is switched off by an administrator for now. Documents, versions and search work."
    ),
    "llm_down": gettext_noop(
        "The language model is unavailable ({error}); the passages from the documents are below."
    ),
    "llm_reading": gettext_noop("The language model is reading the sources… {seconds} s"),
    "llm_writing": gettext_noop("The language model is writing… {seconds} s"),
    "llm_small": gettext_noop(
        "The language model's context ({context} tokens) leaves no room for the sources; the "
        "passages from the documents are below."
    ),
    "llm_no_citation": gettext_noop(
        "The language model's answer cited no source, so it is not shown; the passages from the "
        "documents are below."
    ),
    "llm_empty": gettext_noop(
        "The language model's answer states nothing but a citation, so it is not shown; the "
        "passages from the documents are below."
    ),
    "llm_unsupported": gettext_noop(
        "The language model's answer is not shown: the sources it cites do not say "
        "«{sentence}». The passages from the documents are below."
    ),
    "llm_premise": gettext_noop(
        "The language model's answer is not shown: it states what the documents do not say "
        "(«{sentence}»). The passages from the documents are below."
    ),
    "llm_down_diff": gettext_noop(
        "The language model is unavailable ({error}); the changes from the comparison of the "
        "versions are below."
    ),
    "interrupted": gettext_noop(
        "The answer was interrupted: the server process answering it stopped. Ask the question "
        "again."
    ),
    "version": gettext_noop("Version {label}"),
    "comparison": gettext_noop("Comparison of versions"),
    "moderation_credentials": gettext_noop(
        "I can't help with that: passwords, tokens, keys and other secrets are not given out "
        "through the knowledge base. Access is granted by the system's owner through the usual "
        "procedure."
    ),
    "moderation_personal_data": gettext_noop(
        "I can't help with that: colleagues' personal data (addresses, phone numbers, salaries, "
        "passport details) is not given out through the knowledge base."
    ),
    "moderation_abuse": gettext_noop(
        "Let's keep it respectful. I'm glad to help with a question about the documents, "
        "processes and testing."
    ),
    "moderation_other": gettext_noop(
        "I can't help with that request: requests of this kind are not handled by the portal. "
        "Please ask about the documents."
    ),
}


# "the second version of …": the ordinals a day's versions are named by (their Russian forms,
# in the catalog, agree with "версию").
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")  # fmt: skip
_ORDINAL_CONTEXT = "the n-th version"


def language_of(text: str) -> str:
    """ "ru" or "en": the one detector of the code base (``knowledge.text.language``)."""
    return detect(text)


def refusal_text() -> str:
    """The staff's refusal (the chat settings): the Russian one."""
    return ChatSettings.current().refusal_text


def refusal(language: str) -> str:
    """The canonical refusal in ``language`` (the question's): the staff's in Russian."""
    return refusal_text() if language == "ru" else REFUSAL_EN


def say(key: str, language: str, **values: object) -> str:
    """One of the pipeline's sentences in ``language`` (the question's), from the catalogs."""
    with translation.override(language if language in ("ru", "en") else "en"):
        return gettext(_TEXTS[key]).format(**values)


def fact_name(kind: str, language: str) -> str:
    if kind not in _FACT_NAMES:
        return kind
    with translation.override(language if language in ("ru", "en") else "en"):
        return gettext(_FACT_NAMES[kind])


def partial_notice(language: str, topic: str, named_missing: list[str], asked: str) -> str:
    """ "В документах описано X, но не указано Y": Y is the named things they lack, or the
    kind of fact asked."""
    if named_missing:
        missing = say("anything_about", language, names=", ".join(f"«{n}»" for n in named_missing))
    else:
        missing = fact_name(asked, language)
    return say("partial", language, topic=topic, missing=missing)


def compared(language: str, old: tuple[Place, str], new: tuple[Place, str]) -> str:
    """ "Comparing the second version of 2021-11-09 (5c0ffee) and …": which two versions a
    diff answer compares, each named by its day and its place among that day's versions
    (``knowledge.question.resolving.place``), with its display label."""
    return say(
        "compared", language, old=version_name(language, *old), new=version_name(language, *new)
    )


def version_name(language: str, place: Place, label: str) -> str:
    """A version named by where it stands (see ``compared``): "the second version of
    2021-11-09 (5c0ffee)", "the version of 2021-11-10 (6d1aaaf, the latest)", "version v2.4"."""
    marker = "the latest" if place.latest else ("the first" if place.first else "")
    with translation.override(language if language in ("ru", "en") else "en"):
        marker = pgettext(_ORDINAL_CONTEXT, marker) if marker else ""
        ordinal = (
            pgettext(_ORDINAL_CONTEXT, _ORDINALS[place.ordinal - 1])
            if 0 < place.ordinal <= len(_ORDINALS)
            else ""
        )
    if place.day is None:
        name = say("labelled_version", language, label=label)
        return f"{name} ({marker})" if marker else name
    inside = ", ".join(part for part in (place.tag, marker) if part)
    tag = f" ({inside})" if inside else ""
    day = say(
        "date",
        language,
        year=place.day.year,
        month=f"{place.day.month:02d}",
        day=f"{place.day.day:02d}",
    )
    if not place.ordinal:
        return say("version_of_day", language, day=day, tag=tag)
    if ordinal:
        return say("nth_version_of_day", language, ordinal=ordinal, day=day, tag=tag)
    return say("numbered_version_of_day", language, number=place.ordinal, day=day, tag=tag)
