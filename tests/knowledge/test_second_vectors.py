"""Second vectors: each unit of each searchable chunk read by e5, after the version is
searchable; reused across versions, replaced for another model, shown on the Documents page,
read by search."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from knowledge.embedding import SECOND_MODEL_ID, E5Embedder, Embeddings
from knowledge.ingest import second
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, ChunkVector, Source
from knowledge.question import read
from knowledge.retrieval.hybrid import search
from knowledge.retrieval.types import SearchOptions
from knowledge.units import CUTTING, units

PAGE = """# Стенд нагрузочного тестирования

## Длительность прогона

Тестирование выносливости обычно длится 6–8 часов. За это время ищут утечки памяти.

## Отчёт

Отчёт о прогоне кладут в общий каталог команды.

| Параметр | Значение |
| --- | --- |
| Пользователи | 500 |
| Длительность | 8 часов |
"""


class CountingE5(E5Embedder):
    """The bundled e5 model, counting the texts it is given."""

    def __init__(self) -> None:
        super().__init__(threads=1)
        self.seen: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        self.seen.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture(scope="module")
def e5() -> CountingE5:
    return CountingE5()


def add_version(text: str, name: str = "stand.md"):
    source, _ = Source.objects.get_or_create(name="Stand wiki")
    registration = register_file(source, name, text.encode(), enqueue=False)
    result = ingest_version(registration.version.pk)
    assert result.status == "ready", result
    return registration.version


@pytest.mark.django_db
def test_a_ready_version_is_searchable_first_and_gets_its_unit_vectors_after(e5):
    version = add_version(PAGE)
    chunks = list(Chunk.objects.filter(version=version, searchable=True))
    assert chunks and not ChunkVector.objects.exists()
    assert second.progress().done == 0 and not second.progress().complete
    assert search("длительность прогона").hits  # searchable before any second vector

    e5.seen.clear()
    done, more = second.fill_second_vectors(e5)
    assert (done, more) == (len(chunks), False)
    for chunk in chunks:
        stored = ChunkVector.objects.get(chunk=chunk)
        found = units(chunk.text)
        assert stored.model_id == SECOND_MODEL_ID and stored.count == len(found)
        assert stored.units_key == second.units_key(found)
        vectors = second.unpack(stored.vectors, stored.count)
        assert vectors.shape == (len(found), 384)
    assert second.progress().complete


@pytest.mark.django_db
def test_a_unit_under_a_sub_heading_is_read_with_it(e5):
    version = add_version(PAGE)
    second.fill_second_vectors(e5)
    texts = set(e5.seen)
    # A heading inside the chunk's text (the chunk's own headings are its heading path).
    assert "Отчёт: Отчёт о прогоне кладут в общий каталог команды." in texts
    # A table row is read under its header row.
    assert any("| Параметр | Значение |" in t and "| Пользователи | 500 |" in t for t in texts)
    del version


@pytest.mark.django_db
def test_unchanged_chunks_of_a_new_version_reuse_their_vectors(e5):
    add_version(PAGE)
    second.fill_second_vectors(e5)
    e5.seen.clear()
    changed = PAGE.replace("| Пользователи | 500 |", "| Пользователи | 800 |")
    version = add_version(changed)
    done, _ = second.fill_second_vectors(e5)
    assert done == Chunk.objects.filter(version=version, searchable=True).count()
    # Only the units of the changed chunk were read again.
    assert e5.seen and all("6–8 часов" not in t for t in e5.seen)
    assert any("| Пользователи | 800 |" in t for t in e5.seen)


@pytest.mark.django_db
def test_vectors_of_another_model_are_replaced_and_never_read(e5):
    version = add_version(PAGE)
    chunk = Chunk.objects.filter(version=version, searchable=True).first()
    found = units(chunk.text)
    ChunkVector.objects.create(
        chunk=chunk,
        model_id="older-model",
        units_key=second.units_key(found),
        count=len(found),
        vectors=second.pack(np.ones((len(found), 384))),
    )
    assert second.stored_vectors([chunk.pk]) == {}
    assert second.progress().done == 0
    second.fill_second_vectors(e5)
    assert ChunkVector.objects.get(chunk=chunk).model_id == SECOND_MODEL_ID
    assert set(second.stored_vectors([chunk.pk])) == {chunk.pk}


@pytest.mark.django_db
def test_vectors_of_another_cutting_of_the_text_are_not_read_and_are_made_again(e5):
    version = add_version(PAGE)
    second.fill_second_vectors(e5)
    chunk = Chunk.objects.filter(version=version, searchable=True).first()
    ChunkVector.objects.filter(chunk=chunk).update(cutting=CUTTING - 1)
    assert chunk.pk not in second.stored_vectors([chunk.pk])
    assert second.progress().done == second.progress().total - 1
    done, _ = second.fill_second_vectors(e5)
    assert done == 1 and chunk.pk in second.stored_vectors([chunk.pk])


@pytest.mark.django_db
def test_weighted_the_search_scores_each_candidate_by_its_closest_unit(e5, ranking_weights):
    add_version(PAGE)
    second.fill_second_vectors(e5)
    ranking_weights(fusion={"meaning_weight": 0.1})
    result = search(
        "Сколько обычно длится тестирование выносливости?", options=SearchOptions(answer=True)
    )
    assert result.meaning_vector is not None and result.hits
    best = result.hits[0]
    scores = result.unit_scores[best.found_id]
    assert best.meaning is not None and best.meaning.score == pytest.approx(float(max(scores)))
    assert best.explain()["meaning_score"] == pytest.approx(round(float(max(scores)), 4))
    # The unit closest to the question is the one holding the duration.
    text = Chunk.objects.get(pk=best.found_id).text
    assert "6–8 часов" in units(text)[int(np.argmax(scores))].text


@pytest.mark.django_db
def test_a_question_naming_a_thing_the_documents_know_is_ranked_without_e5(e5, ranking_weights):
    add_version(PAGE)
    add_version(
        "# Квазарный стенд\n\nКвазарный стенд Zorvex держит нагрузку сутками без перерыва.",
        "zorvex.md",
    )
    second.fill_second_vectors(e5)
    ranking_weights(fusion={"meaning_weight": 0.1})
    answering = SearchOptions(answer=True)
    unnamed = search("Сколько обычно длится тестирование выносливости?", options=answering)
    assert any(hit.meaning is not None for hit in unnamed.hits)
    # "Zorvex" is a name the knowledge base holds: the name ranks, e5's closeness does not.
    named = search("Сколько держит нагрузку стенд Zorvex?", options=answering)
    assert named.hits and named.meaning_vector is not None
    assert all(hit.meaning is None for hit in named.hits) and not named.unit_scores


@pytest.mark.django_db
def test_unweighted_the_answer_still_reads_the_units_of_its_sources(e5, ranking_weights):
    from chat.answer.prompting import build_sources

    add_version(PAGE)
    second.fill_second_vectors(e5)
    question = "Сколько обычно длится тестирование выносливости?"
    # Weight 0: e5 ranks nothing; an answer is built, so the question is in its space.
    ranking_weights(fusion={"meaning_weight": 0.0})
    result = search(question, options=SearchOptions(answer=True))
    assert all(hit.meaning is None for hit in result.hits) and not result.unit_scores
    assert result.meaning_vector is not None
    sources = build_sources(result, reading=read(question))
    first = sources[0]
    assert len(first.meaning) == len(units(first.chunk_text))
    best = units(first.chunk_text)[int(np.argmax(first.meaning))]
    assert "6–8 часов" in best.text


@pytest.mark.django_db
def test_a_search_that_only_lists_hits_asks_e5_nothing_while_the_ranking_reads_nothing(e5):
    from knowledge.embedding import get_second_embedder

    add_version(PAGE)
    second.fill_second_vectors(e5)
    get_second_embedder.cache_clear()
    asked = []
    model = get_second_embedder()
    original = model.embed_query
    model.embed_query = lambda text: asked.append(text) or original(text)
    try:
        listed = search("Сколько обычно длится тестирование выносливости?")
        assert listed.hits and listed.meaning_vector is None and not asked
        answered = search(
            "Сколько обычно длится тестирование выносливости?", options=SearchOptions(answer=True)
        )
        assert answered.meaning_vector is not None and len(asked) == 1
    finally:
        get_second_embedder.cache_clear()


@pytest.mark.django_db
def test_turned_off_the_search_reads_no_second_vectors(e5, settings):
    from knowledge.embedding import get_second_embedder

    add_version(PAGE)
    second.fill_second_vectors(e5)
    settings.SECOND_EMBEDDER = "none"
    get_second_embedder.cache_clear()
    try:
        result = search("Сколько обычно длится тестирование выносливости?")
        assert result.meaning_vector is None and not result.unit_scores
        assert all(hit.meaning is None for hit in result.hits)
        assert second.progress() is None
    finally:
        settings.SECOND_EMBEDDER = "e5"
        get_second_embedder.cache_clear()


@pytest.mark.django_db
def test_the_documents_page_shows_how_far_the_meaning_index_has_got(client, alice, e5):
    add_version(PAGE)
    client.force_login(alice)
    page = client.get("/documents/").content.decode()
    assert "Meaning index" in page or "Смысловой индекс" in page
    second.fill_second_vectors(e5)
    page = client.get("/documents/").content.decode()
    assert "second-vectors" not in page


def test_a_worker_fills_the_second_vectors_after_the_ingest_it_ran(transactional_db):
    from tests.conftest import WorkerProcess
    from tests.knowledge.conftest import wait_for

    process = WorkerProcess("second-vectors", second_vectors=True)
    try:
        source = Source.objects.create(name="Stand wiki")
        version = register_file(source, "stand.md", PAGE.encode()).version  # queued on commit
        wait_for(
            lambda: Chunk.objects.filter(version=version, searchable=True).exists(),
            timeout=300,
            what="the version searchable",
        )
        wait_for(lambda: second.progress().complete, timeout=300, what="the second vectors")
        assert ChunkVector.objects.filter(chunk__version=version).count() == (
            Chunk.objects.filter(version=version, searchable=True).count()
        )
    finally:
        process.stop()


@pytest.mark.django_db
def test_a_chunk_of_links_and_labels_only_is_stored_without_reading_it(e5):
    links = (
        "# Ссылки\n\n- [Первая статья](https://example.org/a)\n- [Вторая](https://example.org/b)\n"
    )
    version = add_version(links, name="links.md")
    e5.seen.clear()
    done, more = second.fill_second_vectors(e5)
    assert (done, more) == (Chunk.objects.filter(version=version, searchable=True).count(), False)
    assert e5.seen == []  # a list of links is never quoted: nothing to read
    stored = ChunkVector.objects.get(chunk__version=version)
    assert not second.unpack(stored.vectors, stored.count).any()


@pytest.mark.django_db
def test_many_versions_ready_queue_one_run_of_the_second_vectors(
    monkeypatch, django_capture_on_commit_callbacks
):
    """Each version ready asks for the second vectors: a knowledge base of 309 versions queued
    309 runs of a minute each ahead of every later ingest (faults.py: 60 new versions never
    started within 90 s). One run waits at most; once it starts, new work queues one more."""
    from knowledge import queue

    sent: list[str] = []
    monkeypatch.setattr(queue, "_send", lambda task, *_: sent.append(task))
    queue.started_once(queue.FILL_SECOND_VECTORS)  # no mark left by another test
    for _ in range(5):  # five versions ready, each in its own transaction
        with django_capture_on_commit_callbacks(execute=True):
            queue.enqueue_once_on_commit(queue.FILL_SECOND_VECTORS)
    assert sent == [queue.FILL_SECOND_VECTORS]
    queue.started_once(queue.FILL_SECOND_VECTORS)  # the waiting run starts
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            queue.enqueue_once_on_commit(queue.FILL_SECOND_VECTORS)
    assert sent == [queue.FILL_SECOND_VECTORS] * 2
    queue.started_once(queue.FILL_SECOND_VECTORS)


@pytest.mark.django_db
def test_one_process_fills_the_second_vectors_at_a_time():
    """Two runs at once held both of a worker's processes for their turns, and ingests and the
    maintenance queue waited (faults.py: the default queue 143 tasks behind)."""
    from knowledge import queue
    from knowledge.tasks import fill_second_vectors_task

    task = queue.FILL_SECOND_VECTORS
    queue.end_turn(task)
    assert queue.take_turn(task, 60) is True
    try:
        assert queue.take_turn(task, 60) is False
        add_version("# Стенд\n\nСтенд держит нагрузку шесть часов подряд.\n", name="turn.md")
        assert fill_second_vectors_task() == 0  # another process's turn: nothing done here
        assert not second.progress().complete
    finally:
        queue.end_turn(task)
    assert queue.take_turn(task, 60) is True
    queue.end_turn(task)


@pytest.fixture
def no_pace():
    from knowledge.queue import FILL_SECOND_VECTORS, _redis

    _redis().delete(f"kb:pace:{FILL_SECOND_VECTORS}")
    yield
    _redis().delete(f"kb:pace:{FILL_SECOND_VECTORS}")


@pytest.mark.django_db
def test_the_documents_page_says_how_long_the_meaning_index_has_left_then_took(
    e5, client, alice, no_pace
):
    from knowledge.queue import FILL_SECOND_VECTORS, _redis, record_pace

    add_version(PAGE)
    add_version(PAGE.replace("Стенд", "Второй стенд"), "second.md")
    total = second.progress().total
    client.force_login(alice)
    assert (
        "left at the pace"
        not in client.get("/documents/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    )
    # A run that started ten minutes ago and has made all but one of them.
    record_pace(FILL_SECOND_VECTORS, 0, total)
    key = f"kb:pace:{FILL_SECOND_VECTORS}"
    _redis().hset(key, mapping={"started": float(_redis().hget(key, "started")) - 600})
    second.fill_second_vectors(e5)
    ChunkVector.objects.filter(pk=ChunkVector.objects.order_by("pk").last().pk).delete()
    record_pace(FILL_SECOND_VECTORS, total - 1, total)
    minutes = max(1, round(600 / (total - 1) / 60))
    page = client.get("/documents/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"About {minutes} minute" in page and "left at the pace so far." in page
    second.fill_second_vectors(e5)
    record_pace(FILL_SECOND_VECTORS, total, total)  # the run ends
    page = client.get("/documents/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Meaning index complete: the last passages took 10 minutes." in page
