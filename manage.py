#!/usr/bin/env python
"""Django's command-line utility for Knowledge Belt (installed: the ``knowledge-belt`` command)."""

from __future__ import annotations

from portal.cli import main

if __name__ == "__main__":
    main()
