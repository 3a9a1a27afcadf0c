"""The progress bar of the backup and restore commands: one tqdm bar per stage of a service."""

from __future__ import annotations

import sys

from tqdm import tqdm


class BarProgress:
    """``operations.backup.Progress`` drawn with tqdm (on stderr, like ``manage.py ingest``)."""

    def __init__(self, disable: bool = False) -> None:
        self.disable = disable
        self.bar: tqdm | None = None

    def stage(self, title: str, total: int | None = None, unit: str = "it") -> None:
        self.close()
        if total is None:  # a step with nothing to count: its name is enough
            if not self.disable:
                tqdm.write(f"{title}…", file=sys.stderr)
            return
        self.bar = tqdm(
            total=total,
            desc=title,
            unit=unit,
            unit_scale=unit == "B",
            unit_divisor=1024,
            disable=self.disable,
            dynamic_ncols=True,
        )

    def advance(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
