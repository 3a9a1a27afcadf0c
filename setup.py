"""What pyproject.toml cannot say: the wheel carries the interface's folders.

``templates/``, ``static/`` and ``locale/`` stay at the top of the checkout (the project's
layout); in the wheel they become package data of ``portal`` (``portal/templates`` ...), where
``portal.settings`` finds them in an installed portal. The translations are compiled (.po ->
.mo, with polib) while the wheel is built, so an installed portal never writes into its own
package folder.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
APPS = ["portal", "knowledge", "chat", "feedback", "evaluation", "scenarios", "operations"]
SHIPPED_FOLDERS = ["templates", "static", "locale"]


class BuildWithCatalogs(build_py):
    """Compile the message catalogs before the package data is copied."""

    def run(self) -> None:
        import polib

        for po_path in sorted((HERE / "locale").glob("*/LC_MESSAGES/*.po")):
            polib.pofile(str(po_path)).save_as_mofile(str(po_path.with_suffix(".mo")))
        super().run()


# Each folder and every folder under it is a package of data files to setuptools.
DATA_PACKAGES = [
    f"portal.{folder}" + (f".{sub}" if sub else "")
    for folder in SHIPPED_FOLDERS
    for sub in ["", *find_namespace_packages(where=folder)]
]

setup(
    packages=find_namespace_packages(include=[f"{app}*" for app in APPS], exclude=["*.__pycache__"])
    + DATA_PACKAGES,
    package_dir={f"portal.{folder}": folder for folder in SHIPPED_FOLDERS},
    package_data={
        **{package: ["*"] for package in DATA_PACKAGES},
        "evaluation.baselines": ["*.json"],  # the gate's committed baseline runs
    },
    cmdclass={"build_py": BuildWithCatalogs},
)
