"""A sweep's record on disk: ``DIR/manifest.json`` and the journal that makes it crash-safe.

Every finished cell is appended, as one JSON line, to ``DIR/manifest.journal`` (flushed and
fsynced) right after its output file has been renamed into place; ``manifest.json`` is rewritten
atomically from time to time and at the end, when the journal is folded into it and removed. A
sweep killed at any moment therefore loses at most the cells in flight: a cell whose output was
written but whose journal line was not is simply run again. ``DIR/.sweep.lock`` (an advisory
``flock``) keeps two sweeps from writing one folder at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from certdp.cert.crypto import atomic_write
from certdp.errors import InvalidArgument, fmt_value
from certdp.fileio import read_capped

FORMAT = "certdp-sweep-manifest/1"
MANIFEST = "manifest.json"
JOURNAL = "manifest.journal"
LOCK = ".sweep.lock"

#: Seconds between two rewrites of manifest.json during a run (the journal has every cell).
FLUSH_SECONDS = 5.0


def sha256_hex(data: bytes) -> str:
    """Contract: the SHA-256 of ``data`` in hex."""
    return hashlib.sha256(data).hexdigest()


#: Largest manifest or journal read back (10 000 cells take a few MB).
MAX_LEDGER_BYTES = 256 << 20


def _read_own(path: Path) -> str:
    """A manifest or journal as text, or "" when it is missing, not a regular file (a FIFO would
    block, a link may point anywhere), too large, or unreadable: then its cells run again."""
    try:
        data = read_capped(path, path.name, MAX_LEDGER_BYTES, follow_links=False)
    except InvalidArgument:  # missing, not a regular file, too large (LimitExceeded), unreadable
        return ""
    return data.decode("utf-8", errors="replace")


def previous_cells(out: Path) -> dict[str, dict[str, Any]]:
    """The cell entries a previous run left in ``out``: manifest.json, then the journal's lines
    (later lines win; a torn last line, from a kill mid-write, is ignored).

    Contract: a dict from cell name to its last recorded entry; an unreadable or foreign
    manifest counts as no manifest (its cells are run again, never trusted).
    """
    cells: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(ValueError):
        doc = json.loads(_read_own(out / MANIFEST))
        if isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("cells"), list):
            cells = {c["name"]: c for c in doc["cells"] if isinstance(c, dict) and isinstance(c.get("name"), str)}
    with contextlib.suppress(ValueError):
        for line in _read_own(out / JOURNAL).splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    cells[entry["name"]] = entry
    return cells


def _open_own(path: Path, flags: int) -> int:
    """Open (creating) a file of the sweep itself, never through a symbolic link: a link planted
    in the folder must not make the sweep append to, or create, a file elsewhere; nor a FIFO or a
    device stand in for it."""
    try:
        # O_NONBLOCK: a FIFO planted there must fail now, not block the sweep forever
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise InvalidArgument(f"out: {fmt_value(str(path))} cannot be opened ({exc.strerror}; a link?)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidArgument(f"out: {fmt_value(str(path))} is not a regular file")
    return fd


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``out``'s sweep lock; InvalidArgument naming ``out`` if another sweep holds it.

    Contract: while the context is open no other sweep (honouring the lock) writes ``out``.
    """
    fd = _open_own(out / LOCK, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InvalidArgument(f"out={fmt_value(str(out))} is in use by another certdp sweep") from None
        yield
    finally:
        os.close(fd)


class Ledger:
    """The manifest of one run: a header (spec, versions, scheduler) and one entry per cell,
    kept on disk through the journal."""

    def __init__(self, out: Path, header: dict[str, Any], cells: dict[str, dict[str, Any]]) -> None:
        self.out = out
        self.header = header
        self.cells = cells  # name -> entry, in the spec's order
        self._last_flush = 0.0
        self._journal = os.fdopen(_open_own(out / JOURNAL, os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8")

    def record(self, entry: dict[str, Any]) -> None:
        """Journal one finished cell (durably) and rewrite the manifest when it is due.

        Contract: when this returns, the entry survives a kill of this process.
        """
        self.cells[entry["name"]] = entry
        self._journal.write(json.dumps(entry, sort_keys=True) + "\n")
        self._journal.flush()
        os.fsync(self._journal.fileno())
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.write()

    def manifest(self) -> dict[str, Any]:
        """Contract: the manifest document: header, per-status counts and every cell's entry."""
        counts: dict[str, int] = {}
        for e in self.cells.values():
            counts[e["status"]] = counts.get(e["status"], 0) + 1
        return {
            "format": FORMAT,
            **self.header,
            "counts": dict(sorted(counts.items())),
            "cells": list(self.cells.values()),
        }

    def write(self) -> None:
        """Contract: manifest.json is replaced atomically by the current manifest."""
        atomic_write(self.out / MANIFEST, (json.dumps(self.manifest(), indent=1) + "\n").encode())
        self._last_flush = time.monotonic()

    def close(self) -> None:
        """Write the final manifest and fold the journal into it (the journal is then removed).

        Contract: manifest.json holds every entry recorded; no journal is left behind.
        """
        self.write()
        self._journal.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.out / JOURNAL)
