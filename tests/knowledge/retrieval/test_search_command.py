"""``manage.py search``: retrieval only, the same hits as search(), JSON for tools, --explain."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Chunk
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from tests.knowledge.retrieval.conftest import add_document, make_source

QUESTION = "Какие климатические условия должны быть при испытаниях?"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("search", *args, stdout=out)
    return out.getvalue()


def run_json(*args: str) -> dict:
    return json.loads(run(*args, "--json"))


def test_json_lists_the_same_hits_as_search_with_links_to_the_viewer(db, programme, embedder):
    data = run_json(QUESTION, "--k", "3")
    expected = search(QUESTION, options=SearchOptions(hits=Hits(k=3)), embedder=embedder)
    assert [r["chunk_id"] for r in data["results"]] == [c.chunk_id for c in expected.hits]
    assert 1 <= len(data["results"]) <= 3
    chunks = {c.pk: c for c in Chunk.objects.filter(document=programme).select_related("version")}
    for rank, row in enumerate(data["results"], 1):
        chunk = chunks[row["chunk_id"]]
        assert row["rank"] == rank
        assert row["document"] == programme.title
        assert row["source"] == "Specifications"
        assert row["version"] == chunk.version.display_label
        assert row["section"] == chunk.section
        assert row["heading_path"] == chunk.heading_path
        assert row["block_type"] == chunk.block_type
        assert row["text"] == chunk.text
        assert row["url"] == (
            f"/documents/{programme.pk}/?version={chunk.version_id}"
            f"&chunk={chunk.pk}#chunk-{chunk.pk}"
        )
        assert isinstance(row["score"], float)
    assert data["found"] is True
    assert "no reranker configured" in data["rerank_note"]


def test_the_link_opens_the_document_viewer_on_that_chunk(db, programme, client, alice):
    row = run_json(QUESTION, "--k", "1")["results"][0]
    client.force_login(alice)
    html = client.get(row["url"]).content.decode()
    assert f'id="chunk-{row["chunk_id"]}"' in html


def test_explain_json_gives_every_candidate_at_every_stage_and_the_stage_timings(
    db, programme, ranking_weights
):
    ranking_weights(hits={"per_document": 2})
    data = run_json(QUESTION, "--explain", "--k", "2")
    candidates = data["candidates"]
    assert len(candidates) > len(data["results"])
    for key in (
        "dense_rank",
        "dense_score",
        "lexical_rank",
        "lexical_score",
        "lexical_norm",
        "sparse_rank",
        "calibrated",
        "label_evidence",
        "document_evidence",
        "name_evidence",
        "fused_rank",
        "fused_score",
        "prf_rank",
        "rerank_rank",
        "rerank_score",
        "final_rank",
        "score",
        "result",
    ):
        assert key in candidates[0]
    assert [c["final_rank"] for c in candidates] == list(range(1, len(candidates) + 1))
    # Each stage keeps its own score: without a reranker the final score is the chunk's own
    # calibrated one, and the fused score adds the document evidence to it.
    assert all(c["score"] == c["final_score"] == c["calibrated"] for c in candidates)
    assert all(c["fused_score"] >= c["calibrated"] for c in candidates)
    assert any(c["fused_score"] > c["calibrated"] for c in candidates)
    assert any(c["dense_rank"] for c in candidates) and any(c["lexical_rank"] for c in candidates)
    hit_ids = [r["chunk_id"] for r in data["results"]]
    assert [c["chunk_id"] for c in candidates if c["result"].startswith("hit")] == hit_ids
    # One document: everything after its first two chunks is over the per-document cap.
    assert {c["result"] for c in candidates[2:]} == {"document cap"}
    for stage in ("route", "embed", "dense", "lexical", "fusion", "total"):
        assert data["timings_ms"][stage] >= 0


def test_explain_prints_ranks_and_scores_per_list_and_timings(db, programme):
    text = run(QUESTION, "--explain", "--k", "2")
    assert "Timings (ms): route" in text and "embed" in text and "total" in text
    header = next(line for line in text.splitlines() if line.strip().startswith("chunk"))
    for column in ("dense", "lexical", "sparse", "fused", "rerank", "score", "result"):
        assert column in header
    best = run_json(QUESTION, "--k", "1")["results"][0]["chunk_id"]
    row = next(line for line in text.splitlines() if line.strip().startswith(f"{best} "))
    assert "hit 1" in row
    assert re.search(rf"^\s*{best}\s+\d+ 0\.\d{{3}}\s+\d+ \d+\.\d\d \(0\.\d\d\)", row)


def test_plain_output_shows_each_hit_with_its_place_and_link(db, programme, ranking_weights):
    ranking_weights(gate={"min_score": 0.0})
    text = run(QUESTION, "--k", "2")
    assert "1. " in text and "2. " in text
    assert "Условия проведения испытаний" in text
    assert re.search(r"/documents/\d+/\?version=\d+&chunk=\d+#chunk-\d+", text)


def test_section_and_type_options_filter_like_the_router(db, programme):
    section = run_json("условия", "--section", "5.4", "--k", "10")
    assert section["filters"] == {"sections": ["5.4"]}
    assert section["results"]
    assert all(r["section"].startswith("5.4") for r in section["results"])
    tables = run_json("лист регистрации изменений", "--type", "table", "--k", "10")
    assert tables["results"]
    assert {r["block_type"] for r in tables["results"]} == {"table"}


def test_source_option_restricts_to_that_source(db, programme, embedder):
    other = make_source("Handbook")
    add_document(
        other,
        "climate.md",
        "# Климат\n\n## Условия\n\nКлиматические условия в офисе: "
        "температура от 20 до 24 градусов, влажность от 40 до 60 процентов.\n",
        embedder,
    )
    everywhere = {r["source"] for r in run_json("климатические условия", "--k", "10")["results"]}
    assert everywhere == {"Specifications", "Handbook"}
    only = run_json("климатические условия", "--source", "handbook", "--k", "10")
    assert {r["source"] for r in only["results"]} == {"Handbook"}
    assert only["filters"] == {"source_ids": [other.pk]}


def test_an_unknown_source_is_an_error_naming_the_known_ones(db, programme):
    with pytest.raises(CommandError, match="no source named 'Wiki'.*Specifications"):
        run("условия", "--source", "Wiki")


def test_nothing_above_the_minimum_score_says_so(db, programme, ranking_weights):
    ranking_weights(gate={"min_score": 5.0})  # above any calibrated score
    assert "Nothing found above the minimum score." in run(QUESTION)
    data = run_json(QUESTION)
    assert data["found"] is False and data["results"] == []


def test_the_command_searches_like_search_with_explicit_filters(db, programme, embedder):
    data = run_json("условия", "--section", "6.3", "--k", "4")
    direct = search(
        "условия",
        filters=Filters(sections=["6.3"]),
        options=SearchOptions(hits=Hits(k=4)),
        embedder=embedder,
    )
    assert [r["chunk_id"] for r in data["results"]] == [c.chunk_id for c in direct.hits]
