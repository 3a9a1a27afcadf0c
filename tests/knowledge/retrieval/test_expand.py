"""Parent expansion: the enclosing section of the best hit of each of the best two documents,
within the character budget, from the version's parsed blocks."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk, DocumentVersion
from knowledge.retrieval.expansion import ExpandedSection, expand
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Candidate
from tests.knowledge.retrieval.conftest import add_document, make_source

CONFIGURE = "\n\n".join(
    f"Configuration step {n}: set the option atlas.{name} in /etc/atlas/atlas.conf, restart the "
    f"service and check that the log reports the new value of {name} without warnings. "
    "Write the change into the change journal with the date and your name, then notify the "
    "duty engineer so that monitoring thresholds can be adjusted for the new setting."
    for n, name in enumerate(
        [
            "port",
            "workers",
            "cache",
            "timeout",
            "tls",
            "proxy",
            "quota",
            "backup",
            "audit",
            "retention",
            "locale",
            "mail",
        ],
        1,
    )
)

GUIDE = f"""# Deployment guide

This guide covers installing and configuring the Atlas server.

## Install

### Download

The Atlas archive is downloaded from the internal mirror at mirror.example.local.

### Unpack

Unpack the archive into /opt/atlas and make the atlas user its owner.

## Configure

{CONFIGURE}
"""


@pytest.fixture
def guide(db, embedder):
    return add_document(make_source("Manuals"), "guide.md", GUIDE, embedder)


def chunk_with(document, words: str) -> Chunk:
    return Chunk.objects.get(document=document, text__contains=words)


def test_a_small_section_climbs_to_its_parent_while_the_parent_fits(guide):
    hit = chunk_with(guide, "internal mirror")
    unpack = chunk_with(guide, "Unpack the archive")
    [section] = expand([Candidate(hit.pk)], max_chars=700)
    assert isinstance(section, ExpandedSection)
    assert section.heading_path == ["Deployment guide", "Install"]
    assert section.section == "1.1"
    assert section.text.startswith("## 1.1 Install")
    assert "internal mirror" in section.text and "Unpack the archive" in section.text
    assert "Configuration step" not in section.text  # the whole guide does not fit in 700
    assert section.chunk_ids == [hit.pk, unpack.pk]
    assert section.hit_ids == [hit.pk]
    assert not section.truncated
    assert section.document_id == guide.pk and section.document_title == "Deployment guide"
    assert section.version_label == "v1"


def test_with_room_enough_the_whole_document_is_the_section(guide):
    hit = chunk_with(guide, "internal mirror")
    [section] = expand([Candidate(hit.pk)], max_chars=100_000)
    assert section.heading_path == []
    assert "This guide covers" in section.text and "Configuration step 12" in section.text
    assert set(section.chunk_ids) == set(
        Chunk.objects.filter(document=guide).values_list("pk", flat=True)
    )


def test_a_long_section_gives_a_window_of_whole_blocks_around_the_hit(guide):
    configure = list(Chunk.objects.filter(document=guide, section="1.2").order_by("position"))
    assert len(configure) >= 2  # the premise: the section is longer than one chunk
    hit = configure[-1]
    budget = len(hit.text) + 500
    [section] = expand([Candidate(hit.pk)], max_chars=budget)
    assert section.truncated
    assert len(section.text) <= budget
    assert hit.text in section.text  # the hit whole, and whole paragraphs around it
    assert section.text.split("\n\n")[0] in CONFIGURE.split("\n\n") + ["## 1.2 Configure"]
    assert section.heading_path == ["Deployment guide", "Configure"]
    assert hit.pk in section.chunk_ids


def test_a_hit_longer_than_the_budget_is_cut_to_it(guide):
    hit = Chunk.objects.filter(document=guide, section="1.2").first()
    [section] = expand([Candidate(hit.pk)], max_chars=200)
    assert section.truncated
    assert len(section.text) <= 202
    assert section.text.endswith(" …")
    assert section.chunk_ids == [hit.pk]


def test_the_budget_defaults_to_the_setting(guide, settings):
    hit = chunk_with(guide, "internal mirror")
    settings.EXPAND_CHARS = 100_000
    assert "Configuration step 12" in expand([Candidate(hit.pk)])[0].text
    settings.EXPAND_CHARS = 700
    assert "Configuration step" not in expand([Candidate(hit.pk)])[0].text


def test_only_the_best_two_documents_around_their_best_hit(db, embedder, guide):
    source = make_source("More manuals")
    faq = add_document(
        source, "faq.md", "# FAQ\n\n## Ports\n\nAtlas listens on port 8443.\n", embedder
    )
    misc = add_document(
        source, "misc.md", "# Misc\n\n## Coffee\n\nThe coffee machine is on floor 2.\n", embedder
    )
    guide_best = chunk_with(guide, "Unpack the archive")
    guide_other = chunk_with(guide, "internal mirror")
    hits = [
        Candidate(guide_best.pk),
        Candidate(Chunk.objects.get(document=faq).pk),
        Candidate(guide_other.pk),
        Candidate(Chunk.objects.get(document=misc).pk),
    ]
    sections = expand(hits, max_chars=700)
    assert [s.document_id for s in sections] == [guide.pk, faq.pk]
    assert sections[0].hit_ids == [guide_other.pk, guide_best.pk]  # both fall in "Install"
    assert "port 8443" in sections[1].text
    assert expand(hits, documents=3, max_chars=700)[2].document_id == misc.pk


def test_a_version_without_parsed_blocks_is_left_out(guide):
    hit = chunk_with(guide, "internal mirror")
    DocumentVersion.objects.filter(pk=hit.version_id).update(parsed=None)
    assert expand([Candidate(hit.pk)]) == []


def test_expanding_the_search_hits_on_the_real_test_programme(db, programme, embedder):
    result = search(
        "Климатические условия при испытаниях",
        options=SearchOptions(min_score=-1),
        embedder=embedder,
    )
    sections = expand(result.hits)
    assert len(sections) == 1  # one document
    [section] = sections
    best = Chunk.objects.get(pk=result.hits[0].chunk_id)
    assert best.pk in section.hit_ids
    assert section.heading_path == best.heading_path[: len(section.heading_path)]
    assert len(section.text) <= 4000
    assert "Климатические условия" in section.text
    assert section.version_label == "v1" and section.document_title == programme.title
