from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``{{ counts|get_item:key }}``: a dictionary lookup with a variable key."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None
