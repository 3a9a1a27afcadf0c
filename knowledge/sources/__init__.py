"""Sources that sync themselves: one connector module per kind (``git``, ``folder``), the
interface they share (``base``), the idempotent sync service (``sync``) and its schedule."""
