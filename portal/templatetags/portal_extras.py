from __future__ import annotations

from django import template

from portal.markdown import break_tags_as_spaces

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``{{ counts|get_item:key }}``: a dictionary lookup with a variable key."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def plain_quote(text: str) -> str:
    """``{{ source.quote|plain_quote }}``: a quoted passage as plain text, without the line break
    tags a Markdown table row holds in its cells."""
    return break_tags_as_spaces(text or "")
