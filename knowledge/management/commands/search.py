"""``manage.py search "QUERY" [--k N] [--json] [--explain] [--source NAME] [--section 2.1]
[--type test_case]``: retrieval only, no LLM.

The same search the chat, the JSON API and MCP use, over every source (the command runs as
staff). ``--explain`` shows each candidate's rank and score at every stage, read off its
record (``knowledge.retrieval.types.Candidate``): the lists (dense, lexical, sparse), its own
calibrated score, the evidence, the fusion, the PRF pass, the rerank and the final place; what
became of it, and the time of each stage.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from knowledge.models import Chunk, Source
from knowledge.retrieval import (
    Candidate,
    Filters,
    Hit,
    Place,
    SearchOptions,
    SearchResult,
    describe,
    explained,
    outcomes,
    result_summary,
    search,
)
from knowledge.retrieval.weights import Hits

STAGES = ("route", "embed", "dense", "lexical", "sparse", "fusion", "rerank", "browse", "total")


class Command(BaseCommand):
    help = "Search the knowledge base (retrieval only, no LLM) and print the chunks found."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("query")
        parser.add_argument("--k", type=int, default=None, help="how many chunks (final N)")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument(
            "--explain", action="store_true", help="ranks and scores in every list, and timings"
        )
        parser.add_argument("--source", action="append", default=[], help="only this source")
        parser.add_argument("--section", action="append", default=[], help='e.g. "2.1"')
        parser.add_argument(
            "--type", action="append", default=[], choices=Chunk.BlockType.values, dest="types"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        search_options = SearchOptions()
        if options["k"] is not None:
            if options["k"] < 1:
                raise CommandError(_("--k must be at least 1"))
            search_options = SearchOptions(hits=Hits(k=options["k"]))
        filters = Filters(
            sections=[s.strip().rstrip(".") for s in options["section"]],
            block_types=options["types"],
            source_ids=[self._source_id(name) for name in options["source"]],
        )
        result = search(options["query"], filters=filters, options=search_options)
        self.per_document = search_options.hits.per_document
        hits = describe(result.hits)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    self._json(result, hits, options["explain"]), ensure_ascii=False, indent=2
                )
            )
            return
        self._print(result, hits)
        if options["explain"]:
            self._print_explain(result)

    def _source_id(self, name: str) -> int:
        source = Source.objects.filter(name__iexact=name).first()
        if source is None:
            known = ", ".join(Source.objects.values_list("name", flat=True)) or "none"
            raise CommandError(
                _("no source named %(name)r (sources: %(known)s)") % {"name": name, "known": known}
            )
        return source.pk

    def _json(self, result: SearchResult, hits: list[Hit], explain: bool) -> dict[str, Any]:
        data = {**result_summary(result), "results": [h.as_dict() for h in hits]}
        if explain:
            data["candidates"] = explained(result, self.per_document)
            data["timings_ms"] = result.timings
        return data

    def _print(self, result: SearchResult, hits: list[Hit]) -> None:
        notes = [
            f"ranked words: {result.retrieval_query!r}"
            if result.retrieval_query != result.query
            else ""
        ]
        if result.filters.as_dict():
            notes.append("filters: " + _filters_text(result.filters))
        if result.tier is not None:
            notes.append(f"cascade tier {result.tier}")
        notes.append(result.rerank_note)
        self.stdout.write(" · ".join(n for n in notes if n))
        if not hits:
            self.stdout.write(_("Nothing found above the minimum score."))
            return
        for hit in hits:
            where = " › ".join(p for p in [hit.document, *hit.heading_path] if p)
            section = f" [{hit.section}]" if hit.section else ""
            self.stdout.write(
                f"\n{hit.rank}. {hit.score:.3f}  {where}{section} · {hit.version} · {hit.block_type}"
            )
            self.stdout.write(f"   {hit.url}")
            snippet = textwrap.shorten(hit.text, 300, placeholder=" …")
            self.stdout.write(textwrap.indent(textwrap.fill(snippet, 96), "   "))

    def _print_explain(self, result: SearchResult) -> None:
        timings = " · ".join(f"{k} {result.timings[k]:.1f}" for k in STAGES if k in result.timings)
        self.stdout.write(f"\nTimings (ms): {timings}")
        described = {h.chunk_id: h for h in describe(result.candidates)}
        outcome = outcomes(result, self.per_document)
        prf = any(c.prf for c in result.candidates)
        prf_header = f"{'prf':<13}" if prf else ""
        self.stdout.write(
            f"\n{'chunk':>7}  {'dense':<13}{'lexical':<20}{'sparse':<13}{'own':<7}"
            f"{'evidence':<22}{'fused':<13}{prf_header}{'rerank':<13}{'score':>10}  "
            f"{'result':<14}document › section"
        )
        for c in result.candidates:
            hit = described.get(c.chunk_id)
            where = f"{hit.document} › {hit.section or '-'}" if hit else "(gone)"
            lexical = _place(c.lexical, 2)
            if c.lexical is not None and c.calibrated is not None:
                lexical += f" ({c.calibrated.lexical_norm:.2f})"
            own = f"{c.calibrated.score:.3f}" if c.calibrated else "-"
            prf_place = f"{_place(c.prf):<13}" if prf else ""
            self.stdout.write(
                f"{c.chunk_id:>7}  {_place(c.dense):<13}{lexical:<20}{_place(c.sparse):<13}"
                f"{own:<7}{_evidence(c):<22}{_place(c.fused):<13}{prf_place}"
                f"{_place(c.rerank):<13}{_place(c.final):>10}  {outcome[c.chunk_id]:<14}"
                f"{where[:60]}"
            )
        self.stdout.write(
            "\nrank score per stage; '-' = not in that list's top K (fusion scored it anyway); "
            "lexical = BM25 (share of the query's best BM25); own = the chunk's calibrated "
            "score; evidence = the document's (d), its named words' (n) and a named row "
            "label's (l) share, added to the fused score only; score = the final place and "
            "the score the minimum applies to"
        )


def _place(place: Place | None, digits: int = 3) -> str:
    if place is None:
        return "-"
    return f"{place.rank or '-'} {place.score:.{digits}f}"


def _evidence(c: Candidate) -> str:
    parts = [
        f"{letter}{value:.2f}"
        for letter, value in (
            ("d", c.document_evidence),
            ("n", c.name_evidence),
            ("l", c.label_evidence),
        )
        if value
    ]
    return " ".join(parts) or "-"


def _filters_text(filters: Filters) -> str:
    return ", ".join(f"{k}={','.join(map(str, v))}" for k, v in filters.as_dict().items())
