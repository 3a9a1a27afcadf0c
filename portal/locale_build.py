"""Compile the interface's message catalogs (locale/*/LC_MESSAGES/*.po -> .mo) with polib.

The .po files are under version control; the .mo files are built, never committed. ``./kb``,
``manage.py`` and the test session call :func:`compile_catalogs` before anything renders a page,
so a clean checkout needs no manual step and no GNU gettext (``msgfmt`` is an apt package).
Run by hand: ``python -m portal.locale_build [--force]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import polib

from portal.paths import IS_CHECKOUT, shipped

LOCALE_DIR = shipped("locale")


def _stale(po: Path, mo: Path) -> bool:
    return not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime


def compile_catalogs(locale_dir: Path = LOCALE_DIR, *, force: bool = False) -> list[Path]:
    """Build every .mo older than its .po (or all with ``force``); return the files written.

    Only a checkout compiles: the wheel carries catalogs compiled when it was built (setup.py),
    and an installed package folder is not the portal's to write. Fuzzy entries are left out, as
    ``msgfmt`` does. Each .mo is written to a temporary file and
    renamed into place, so a process starting at the same moment never reads half a catalog.
    """
    if not IS_CHECKOUT:
        return []
    written = []
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        if not force and not _stale(po_path, mo_path):
            continue
        catalog = polib.pofile(str(po_path))
        fd, tmp = tempfile.mkstemp(dir=po_path.parent, suffix=".mo.tmp")
        os.close(fd)
        try:
            catalog.save_as_mofile(tmp)
            os.replace(tmp, mo_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(mo_path)
    return written


def main(argv: list[str]) -> int:
    written = compile_catalogs(force="--force" in argv)
    if "--quiet" not in argv:
        for path in written:
            sys.stderr.write(f"compiled {path.relative_to(LOCALE_DIR.parent)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
