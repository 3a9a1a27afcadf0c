"""The ranking's weights: one typed object read from the environment, each weight with the
benchmark it was set from (no database)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledge.retrieval import weights as module
from knowledge.retrieval.types import SearchOptions
from knowledge.retrieval.weights import GROUPS, Gate, Hits, Weights, weights

ROOT = Path(__file__).resolve().parents[3]


def _settings() -> list:
    return [f for group in GROUPS.values() for f in fields(group)]


def test_every_weight_is_read_from_its_environment_variable(monkeypatch):
    changed = {}
    for f in _settings():
        default = f.metadata["default"]
        if isinstance(default, bool):
            value, text = not default, "0" if default else "1"
        elif isinstance(default, int):
            value = default + 1 if f.metadata["maximum"] != default else default - 1
            text = str(value)
        elif isinstance(default, float):
            value, text = default + 0.5, str(default + 0.5)
        else:
            value = next(c for c in f.metadata["choices"] if c != default)
            text = value
        monkeypatch.setenv(f.metadata["variable"], text)
        changed[f.metadata["variable"]] = value
    assert Weights.from_environment().by_variable() == changed


def test_unset_variables_give_the_shipped_defaults(monkeypatch):
    for f in _settings():
        monkeypatch.delenv(f.metadata["variable"], raising=False)
    defaults = {f.metadata["variable"]: f.metadata["default"] for f in _settings()}
    assert Weights.from_environment().by_variable() == defaults
    assert defaults["KB_SEARCH_MIN_SCORE"] == 0.19 and defaults["KB_SEARCH_RESULTS"] == 8


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("KB_SEARCH_MIN_SCORE", "low", "KB_SEARCH_MIN_SCORE='low' is not a number"),
        ("KB_SEARCH_CANDIDATES", "1", "KB_SEARCH_CANDIDATES=1 is below the minimum 5"),
        ("KB_SEARCH_FUSION", "sum", "KB_SEARCH_FUSION='sum' must be one of: calibrated, rrf"),
        ("KB_SEARCH_CASCADE", "maybe", "KB_SEARCH_CASCADE='maybe' is not a boolean"),
    ],
)
def test_a_bad_value_is_a_configuration_error(monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        Weights.from_environment()


def test_a_group_made_in_code_keeps_the_configured_values_it_does_not_name(ranking_weights):
    ranking_weights(hits={"per_document": 3, "spread": 0}, gate={"min_score": 0.3})
    assert Hits(k=5) == Hits(k=5, per_document=3, spread=0, cascade=weights().hits.cascade)
    assert Gate().min_score == 0.3
    assert SearchOptions().hits.per_document == 3


def test_the_fixture_gives_the_configured_weights_back(ranking_weights):
    configured = weights()
    ranking_weights(gate={"min_score": 0.99})
    assert weights().gate.min_score == 0.99
    module.configure(configured)
    assert weights() is configured


def test_every_weight_names_what_it_was_set_from():
    """A weight's comment says which benchmark (or that none) and which figure or commit."""
    lines = (ROOT / "knowledge" / "retrieval" / "weights.py").read_text().splitlines()
    for i, line in enumerate(lines):
        if " = setting(" in line:
            assert lines[i - 1].strip().startswith("#"), line


def test_every_weight_is_listed_in_the_example_environment():
    example = (ROOT / "deploy" / ".env.example").read_text()
    for f in _settings():
        variable = f.metadata["variable"]
        assert re.search(rf"^{variable}=", example, re.M), variable
