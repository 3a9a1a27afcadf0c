"""Markdown as the answers and the document viewer show it (``portal.markdown``)."""

from __future__ import annotations

from knowledge.parsing.base import Table
from portal.markdown import render_markdown


def test_a_line_break_in_a_table_cell_shows_as_a_line_break_not_as_the_text_br():
    # The parsers write a cell's line breaks as <br> (a pipe table's cell is one line).
    table = Table(["Alpha", "Beta"], [["Entry:\nrequirements covered", "Entry:\nusers chosen"]])
    html = render_markdown(table.to_markdown())
    assert "<td>Entry:<br>\nrequirements covered</td>" in html
    assert "&lt;br" not in html


def test_only_a_bare_line_break_tag_passes_any_other_html_stays_text():
    html = render_markdown("a<BR/>b <br />c <br onclick=alert(1)>d <script>x</script> `e<br>f`")
    assert html.count("<br>") == 2
    assert "&lt;br onclick=alert(1)&gt;d &lt;script&gt;x&lt;/script&gt;" in html
    assert "<code>e&lt;br&gt;f</code>" in html  # code is shown as written
