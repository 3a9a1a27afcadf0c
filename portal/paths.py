"""Where the product's folders are, in a checkout and in an installed wheel.

A checkout keeps ``templates/``, ``static/`` and ``locale/`` beside the apps and its data in
``var/``; the wheel carries the same folders inside ``portal`` (setup.py) and an installed portal
keeps its data under the folder it runs in (systemd's ``WorkingDirectory``, the container's
``WORKDIR``) unless ``KB_DATA_DIR`` says otherwise. Nothing here imports Django: ``manage.py``
compiles the translations with it before the settings load.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CODE_DIR = PACKAGE_DIR.parent  # the folder holding the apps: the checkout, or site-packages
IS_CHECKOUT = (CODE_DIR / "manage.py").is_file() and (CODE_DIR / "pyproject.toml").is_file()
# Default home of the portal's files (data, drop folder): the checkout, or the working folder.
HOME_DIR = CODE_DIR if IS_CHECKOUT else Path.cwd()


def shipped(folder: str) -> Path:
    """One of the interface's folders (``templates``, ``static``, ``locale``): inside the
    installed package when the wheel put it there, else at the top of the checkout."""
    packaged = PACKAGE_DIR / folder
    return packaged if packaged.is_dir() else CODE_DIR / folder
