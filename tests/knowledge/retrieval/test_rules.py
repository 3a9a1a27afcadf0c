"""The selection rules through search(), each on data where breaking the rule changes the
answer: at most N chunks per document, the minimum score, the source cascade, freshness
tie-breaks, and who may read which source."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group

from knowledge.models import Chunk, DocumentVersion
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits
from tests.knowledge.retrieval.conftest import add_document, make_source

PASSWORD_POLICY = """# Парольная политика

## Длина пароля

Пароль пользователя должен содержать не менее двенадцати символов. Короткий пароль система
отклоняет при регистрации и при смене пароля, показывая требование к длине пароля.

## Символы пароля

Пароль должен содержать заглавные и строчные буквы, цифры и специальные символы. Пароль из
одних цифр или одних букв система не принимает.

## Смена пароля

Пароль меняется каждые девяносто дней. Новый пароль не может совпадать с пятью предыдущими
паролями пользователя.

## Блокировка после ввода неверного пароля

После пяти попыток ввода неверного пароля учётная запись блокируется на пятнадцать минут.
"""

ONBOARDING = """# Первый рабочий день

## Доступы

В первый день новый сотрудник получает ноутбук, пропуск в офис и временный пароль от почты,
который нужно сменить при первом входе.
"""

SUPPORT = """# Служба поддержки

## Обращения

Если вы забыли пароль, напишите в службу поддержки: сотрудник поддержки сбросит пароль и
пришлёт ссылку для входа.
"""

QUESTION = "Какие требования к паролю: длина, символы, смена пароля?"


def options(min_score: float | None = -1.0, **hits) -> SearchOptions:
    """Four hits, two per document, no cascade and no minimum, unless told otherwise."""
    hits = {"k": 4, "per_document": 2, "cascade": False, **hits}
    return SearchOptions(hits=Hits(**hits), min_score=min_score)


@pytest.fixture
def passwords(db, embedder):
    source = make_source("Security")
    return {
        "policy": add_document(source, "policy.md", PASSWORD_POLICY, embedder),
        "onboarding": add_document(source, "onboarding.md", ONBOARDING, embedder),
        "support": add_document(source, "support.md", SUPPORT, embedder),
    }


# --- at most N chunks per document -----------------------------------------------------------


def test_no_document_fills_the_final_list_beyond_its_cap(passwords, embedder):
    policy = passwords["policy"].pk
    result = search(QUESTION, options=options(), embedder=embedder)
    # The premise: ranked alone, the policy's chunks would take the first three places.
    assert [c.document_id for c in result.candidates[:3]] == [policy] * 3
    documents = [c.document_id for c in result.hits]
    assert documents.count(policy) == 2
    assert {passwords["onboarding"].pk, passwords["support"].pk} <= set(documents)
    assert len(result.hits) == 4


def test_the_first_documents_keep_a_place_and_the_rest_go_by_rank(passwords, embedder):
    policy = passwords["policy"].pk
    ranked = search(QUESTION, options=options(per_document=6, k=4), embedder=embedder).candidates
    # The premise: the policy's four sections are the four best chunks.
    assert [c.document_id for c in ranked[:4]] == [policy] * 4
    deep = search(QUESTION, options=options(per_document=6, k=4, spread=0), embedder=embedder)
    assert [c.document_id for c in deep.hits] == [policy] * 4
    spread = search(QUESTION, options=options(per_document=6, k=4, spread=2), embedder=embedder)
    documents = [c.document_id for c in spread.hits]
    # The second document keeps its place; the other places are the policy's next sections.
    assert documents.count(policy) == 3 and len(set(documents)) == 2
    assert [c.chunk_id for c in spread.hits if c.document_id == policy] == [
        c.chunk_id for c in ranked[:3]
    ]


def test_the_cap_is_a_setting(passwords, embedder, ranking_weights):
    ranking_weights(hits={"per_document": 1})
    result = search(
        QUESTION, options=SearchOptions(min_score=-1.0, hits=Hits(cascade=False)), embedder=embedder
    )
    documents = [c.document_id for c in result.hits]
    assert len(documents) == len(set(documents)) == 3


# --- the minimum score -----------------------------------------------------------------------


def test_a_best_score_just_under_the_minimum_finds_nothing(passwords, embedder, ranking_weights):
    best = search(QUESTION, options=options(), embedder=embedder).candidates[0]
    ranking_weights(gate={"min_score": best.score + 0.001})
    result = search(QUESTION, options=options(min_score=None), embedder=embedder)
    assert not result.found
    assert result.hits == []
    assert result.near_misses[0].chunk_id == best.chunk_id  # kept for reformulation tiles


def test_a_best_score_just_over_the_minimum_is_found_alone(passwords, embedder, ranking_weights):
    ranking_weights(gate={"follower_share": 1.0})  # every hit must reach the minimum itself
    ranked = search(QUESTION, options=options(), embedder=embedder).candidates
    best, second = ranked[0], ranked[1]
    assert best.score - second.score > 0.002
    minimum = ranking_weights(gate={"min_score": best.score - 0.001}).gate.min_score
    result = search(QUESTION, options=options(min_score=None), embedder=embedder)
    assert [c.chunk_id for c in result.hits] == [best.chunk_id]
    assert all(c.score < minimum for c in result.near_misses)


def test_once_the_best_passes_the_others_need_only_the_follower_share(
    passwords, embedder, ranking_weights
):
    ranked = search(QUESTION, options=options(per_document=5, k=10), embedder=embedder).candidates
    best, others = ranked[0], ranked[1:]
    minimum = best.score - 0.001
    # A floor half-way between the other chunks' best and worst score.
    floor = (max(c.score for c in others) + min(c.score for c in others)) / 2
    ranking_weights(gate={"min_score": minimum, "follower_share": floor / minimum})
    # The premise: some chunks lie between the floor and the minimum, some under the floor.
    between = [c.chunk_id for c in others if floor <= c.score < minimum]
    under = [c.chunk_id for c in others if c.score < floor]
    assert between and under
    result = search(
        QUESTION, options=options(min_score=None, per_document=5, k=10), embedder=embedder
    )
    hits = [c.chunk_id for c in result.hits]
    assert hits[0] == best.chunk_id
    assert set(between) <= set(hits)
    assert not set(under) & set(hits)
    # Nothing reaches the minimum: no follower is shown either (the refusal stands).
    ranking_weights(gate={"min_score": best.score + 0.001})
    refused = search(QUESTION, options=options(min_score=None), embedder=embedder)
    assert refused.hits == []


def test_a_search_kept_to_one_document_is_not_capped(passwords, embedder):
    from knowledge.retrieval.types import Filters

    policy = passwords["policy"].pk
    chunks = Chunk.objects.filter(document_id=policy).count()
    assert chunks > 2  # the premise: more chunks than the cap per document
    result = search(
        QUESTION, filters=Filters(document_ids=[policy]), options=options(k=10), embedder=embedder
    )
    assert [c.document_id for c in result.hits] == [policy] * chunks
    # Over several documents the cap still holds.
    spread = search(QUESTION, options=options(k=10), embedder=embedder)
    assert [c.document_id for c in spread.hits].count(policy) == 2


# --- the source cascade ----------------------------------------------------------------------

VPN_HANDBOOK = """# Справочник сотрудника

## Удалённая работа

Работать из дома можно по согласованию с руководителем. Для доступа к внутренним системам
используется VPN.
"""

VPN_GUIDE = """# Инструкция по VPN

## Подключение к VPN из дома

Чтобы подключиться к VPN из дома, установите клиент OpenVPN, импортируйте профиль
company.ovpn из портала самообслуживания и войдите с корпоративным логином и паролем.
"""

VPN_QUESTION = "Как подключиться к VPN из дома?"


@pytest.fixture
def tiers(db, embedder):
    first = make_source("Handbook", priority=1)
    second = make_source("IT guides", priority=2)
    add_document(first, "handbook.md", VPN_HANDBOOK, embedder)
    add_document(second, "vpn.md", VPN_GUIDE, embedder)
    flat = search(VPN_QUESTION, options=options(), embedder=embedder)
    chunk_source = dict(Chunk.objects.values_list("pk", "source_id"))
    best = {}
    for c in flat.candidates:
        best.setdefault(chunk_source[c.chunk_id], c.score)
    # The premise: over both tiers at once, tier 2 holds the better match.
    assert chunk_source[flat.hits[0].chunk_id] == second.pk
    assert best[second.pk] > best[first.pk] + 0.02
    return first, second, best, chunk_source


def test_the_cascade_answers_from_tier_one_when_it_has_a_passing_chunk(tiers, embedder):
    first, second, best, chunk_source = tiers
    minimum = best[first.pk] - 0.01
    result = search(
        VPN_QUESTION, options=options(cascade=True, min_score=minimum), embedder=embedder
    )
    assert result.tier == 1
    assert result.hits
    assert {chunk_source[c.chunk_id] for c in result.hits} == {first.pk}


def test_the_cascade_goes_to_tier_two_when_tier_one_has_nothing_passing(tiers, embedder):
    first, second, best, chunk_source = tiers
    minimum = (best[first.pk] + best[second.pk]) / 2
    result = search(
        VPN_QUESTION, options=options(cascade=True, min_score=minimum), embedder=embedder
    )
    assert result.tier == 2
    assert {chunk_source[c.chunk_id] for c in result.hits} == {second.pk}


def test_without_the_cascade_both_tiers_are_ranked_together(tiers, embedder):
    first, second, best, chunk_source = tiers
    minimum = best[first.pk] - 0.01
    result = search(VPN_QUESTION, options=options(min_score=minimum), embedder=embedder)
    assert result.tier is None
    assert [chunk_source[c.chunk_id] for c in result.hits] == [second.pk, first.pk]


# --- freshness tie-breaks --------------------------------------------------------------------

NOTES = """# Release notes

## Export

Reports can be exported to CSV and to Excel from the report page.
"""


def _age(document, year: int) -> None:
    DocumentVersion.objects.filter(document=document).update(
        created_at=datetime(year, 1, 1, tzinfo=UTC)
    )


@pytest.mark.parametrize("fresh_first", ["a", "b"])
def test_equal_scores_go_to_the_newer_document_in_a_fresh_source(db, embedder, fresh_first):
    source = make_source("Release notes", prefer_fresh=True)
    a = add_document(source, "2023/notes.md", NOTES, embedder)
    b = add_document(source, "2024/notes.md", NOTES, embedder)
    _age(a, 2024 if fresh_first == "a" else 2020)
    _age(b, 2024 if fresh_first == "b" else 2020)
    result = search("How do I export a report to Excel?", options=options(), embedder=embedder)
    first, second = result.hits[:2]
    assert first.score == second.score  # a true tie: the same text in two documents
    newer = a if fresh_first == "a" else b
    assert first.document_id == newer.pk


def test_freshness_does_not_reorder_ties_in_other_sources(db, embedder):
    source = make_source("Archive", prefer_fresh=False)
    a = add_document(source, "2023/notes.md", NOTES, embedder)
    b = add_document(source, "2024/notes.md", NOTES, embedder)
    _age(a, 2020)
    _age(b, 2024)
    orders = set()
    for older, newer in ((a, b), (b, a)):
        _age(older, 2020)
        _age(newer, 2024)
        result = search("How do I export a report to Excel?", options=options(), embedder=embedder)
        orders.add(tuple(c.document_id for c in result.hits[:2]))
    assert len(orders) == 1  # the order does not follow the dates


# --- permissions -----------------------------------------------------------------------------

BADGE = """# Пропуска

## Потерянный пропуск

О потерянном пропуске сообщите на ресепшен: пропуск заблокируют и выдадут новый за 500 рублей.
"""


@pytest.fixture
def sources_with_readers(db, embedder, bob):
    team = Group.objects.create(name="QA team")
    bob.groups.add(team)
    public = make_source("Open", is_public=True)
    reader = make_source("Bob's", is_public=False)
    reader.readers.add(bob)
    group = make_source("Team space", is_public=False)
    group.reader_groups.add(team)
    secret = make_source("Secret", is_public=False)
    for source in (public, reader, group, secret):
        add_document(source, "badge.md", BADGE, embedder)
    return {"public": public, "reader": reader, "group": group, "secret": secret}


def _sources_seen(result) -> set[int]:
    ids = [c.chunk_id for c in (*result.hits, *result.candidates, *result.near_misses)]
    return set(Chunk.objects.filter(pk__in=ids).values_list("source_id", flat=True))


@pytest.mark.parametrize(
    ("persona", "visible"),
    [
        ("alice", {"public", "reader", "group", "secret"}),  # staff
        ("bob", {"public", "reader", "group"}),  # reader of one source, member of one group
        ("eve", {"public"}),
    ],
)
def test_a_user_sees_only_chunks_of_sources_they_may_read(
    request, sources_with_readers, embedder, persona, visible
):
    user = request.getfixturevalue(persona)
    result = search(
        "Что делать, если потерял пропуск?", user=user, options=options(k=10), embedder=embedder
    )
    expected = {sources_with_readers[name].pk for name in visible}
    assert _sources_seen(result) == expected


def test_an_anonymous_user_sees_nothing(sources_with_readers, embedder):
    from django.contrib.auth.models import AnonymousUser

    result = search(
        "потерянный пропуск", user=AnonymousUser(), options=options(), embedder=embedder
    )
    assert result.candidates == []


def test_naming_a_source_one_may_not_read_does_not_reach_it(sources_with_readers, embedder, eve):
    result = search("потерянный пропуск в Secret", user=eve, options=options(), embedder=embedder)
    assert _sources_seen(result) == {sources_with_readers["public"].pk}
