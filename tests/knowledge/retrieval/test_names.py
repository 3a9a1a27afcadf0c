"""Named things: a question naming a company, product or tool ("How did Contoso's ...?")
prefers the documents about that thing, where another document's chunk matches the rest of
the question's words a little better."""

from __future__ import annotations

import pytest

from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Fusion, Hits, weights
from knowledge.text.named import named_words
from tests.knowledge.retrieval.conftest import add_document, make_source


def test_named_words_are_capitalised_inside_the_sentence_or_latin_in_russian():
    assert named_words("How has Apple's total net sales changed over time?") == ["Apple"]
    assert named_words("What did NVIDIA report? Which AWS segment grew?") == ["NVIDIA", "AWS"]
    assert named_words("Как настроить Jenkins для flaky тестов?") == ["Jenkins", "flaky"]
    assert named_words("Сколько стоит iPhone?") == ["iPhone"]
    # A capital at the start of a sentence alone is no name.
    assert named_words("Operating expenses rose. Why?") == []
    assert named_words("Почему тесты падают?") == []


CONTOSO = """# Quarterly report one

## About the company

Contoso designs kitchen appliances. Contoso sells them through retailers; Contoso's stores
opened in three new cities.

## Costs

Operating expenses rose during the quarter because freight prices went up and the new stores
opened. Rent for the stores and wages for the new staff were paid from the budget of the year.

## Outlook

Contoso expects demand for kitchen appliances to stay level next year.
"""

FABRIKAM = """# Quarterly report two

## About the company

Fabrikam builds bicycles and sells them online.

## Operating expenses

Operating expenses stayed level during the quarter: wages and rent did not move.
"""

QUESTION = "How did Contoso's operating expenses change during the quarter?"


@pytest.mark.django_db
def test_a_question_naming_a_company_prefers_that_companys_document(embedder):
    source = make_source("Filings")
    contoso = add_document(source, "contoso.md", CONTOSO, embedder)
    fabrikam = add_document(source, "fabrikam.md", FABRIKAM, embedder)

    def first(name_weight: float):
        options = SearchOptions(
            hits=Hits(k=4, per_document=1, cascade=False),
            fusion=Fusion(name_weight=name_weight),
            min_score=-1.0,
        )
        result = search(QUESTION, options=options)
        return result.hits[0].document_id, [round(h.fused.score, 3) for h in result.hits]

    # Without the rule, the other company's page wins on "operating expenses change".
    assert first(0.0)[0] == fabrikam.pk, first(0.0)
    configured = weights().fusion.name_weight
    assert first(configured)[0] == contoso.pk, first(configured)
