"""The knowledge base's vocabulary finds a question's lemma whichever form a document uses."""

from __future__ import annotations

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source
from knowledge.retrieval.vocabulary import chunk_frequencies, common_names
from knowledge.text import matching

TEXT = "Полная копия базы данных хранится 35 дней; копии журналов хранятся семь дней."


def test_every_form_of_a_russian_lemma_and_only_the_word_itself_otherwise():
    assert {"день", "дня", "дней", "днем"} <= set(matching.forms("день"))
    assert matching.forms("GitHub") == ("github",)
    assert matching.forms("дней") == ("дней",)  # not a lemma: the word alone


def test_a_lemma_counts_when_a_document_has_only_another_of_its_forms(db):
    """The text-search stemmer makes "ден" of "день" and "дне" of "дней": looked up by the
    lemma alone, "Сколько дней хранится копия?" found its focus in no document."""
    source = Source.objects.create(name="Regulations")
    version = register_file(source, "backup.txt", TEXT.encode(), enqueue=False).version
    ingest_version(version.pk)
    counts, total = chunk_frequencies(["день", "копия", "храниться", "сугроб"], [source.pk])
    assert total >= 1
    assert counts == {"день": 1, "копия": 1, "храниться": 1, "сугроб": 0}


def test_a_name_of_several_lexemes_is_common_only_when_each_of_them_is(db):
    """The ratio "4.5:1" is read as "4.5" and "1": a knowledge base full of ones does not make the
    ratio common (then the evidence need not hold it, and a trick question passes)."""
    source = Source.objects.create(name="Notes")
    for i in range(3):
        text = f"Шаг 1 из {i + 2}: Android-сборка проверена. Контраст 3:1 в шаге {i}."
        version = register_file(source, f"note{i}.txt", text.encode(), enqueue=False).version
        ingest_version(version.pk)
    found = common_names(["Android", "4.5:1", "3:1", "iOS"], [source.pk], share=0.5)
    assert found == {"android", "3:1"}
