"""A transient status line for commands that run for seconds without a fraction done to show.

:func:`certdp.cli.common.progress_bar` suits work with a known fraction (sweeps, TV bounds); a
calibration probes until it is done and a verifier recomputes claims, so they get a spinner, the
latest step and the elapsed seconds instead. Both draw on stderr only when it is a terminal and
--json is off, so stdout carries exactly the result (one JSON object under --json).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult


def _quiet(text: str) -> None:
    """The update of a silent status line."""


class _Line:
    """The renderable of the status line: rich renders it on every refresh, so the elapsed
    seconds advance even while one probe runs for long without an update."""

    def __init__(self, what: str) -> None:
        from rich.spinner import Spinner

        self.what = what
        self.text = ""
        self.start = time.monotonic()
        self.spinner = Spinner("dots")  # one Spinner for the whole line: its frame follows its own clock
        from certdp.enclose.work import current

        self.meter = current()  # the command's work meter (certdp.enclose.work): units done so far

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        step = f": {self.text}" if self.text else ""
        if self.meter is not None and self.meter.used:
            step += f"  [{self.meter.used:,} work units]"
        # the seconds first: a narrow terminal cuts the end of the line, not the clock
        self.spinner.text = f"{time.monotonic() - self.start:.0f} s  {self.what}{step}"
        line = self.spinner.render(console.get_time())
        # one line whatever the terminal width: a wrapped live line leaves debris when it shrinks
        line.no_wrap, line.overflow = True, "ellipsis"
        yield line


@contextmanager
def status_line(args: argparse.Namespace, what: str) -> Iterator[Callable[[str], None]]:
    """A spinner line on stderr showing ``what``, the latest text given to the yielded
    ``update(text)`` and the elapsed seconds, erased when the block ends; silent (``update`` does
    nothing) under --json or when stderr is not a terminal. Never writes to stdout. Do not open it
    inside a :func:`certdp.cli.common.progress_bar` block: a terminal shows one live display."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        yield _quiet
        return
    from rich.console import Console
    from rich.live import Live

    line = _Line(what)

    def update(text: str) -> None:
        line.text = text  # shown at the next refresh (4 a second): no redraw per probe

    # stderr=True: rich's default console is stdout, which must carry only the result
    with Live(line, console=Console(stderr=True), transient=True, refresh_per_second=4):
        yield update
