"""Document versions: a section-aware diff of two parsed documents, and the pages and services
built on it.

The diff engine (``sections``, ``align``, ``words``, ``tables``, ``diff``, ``summary``,
``render``) is pure Python over ``ParsedDocument``: no Django, so it can be read, tested and
benchmarked alone. ``services``, ``actions``, ``views`` and ``urls`` are the Django side.
"""
