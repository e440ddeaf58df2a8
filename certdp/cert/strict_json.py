"""Reading a certificate as untrusted bytes: one meaning per file, bounded work.

Plain ``json.loads`` lets the last of two equal keys win (so two readers of one file can see
two different claims), accepts NaN and Infinity, parses 4,000-digit integers and recurses once
per bracket. Here every file has one meaning or is refused with a one-line reason.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from certdp import fileio
from certdp.cert.limits import MAX_ABS_INT, MAX_DEPTH, MAX_FILE_BYTES, refuse
from certdp.errors import CertificateMalformed


def read_capped(path: str | Path, what: str = "certificate", limit: int = MAX_FILE_BYTES) -> bytes:
    """Read the regular file ``path`` of at most ``limit`` bytes (certdp.fileio.read_capped).

    Contract: as certdp.fileio.read_capped: a directory, device, FIFO, /proc file or a file over
    ``limit`` bytes is refused (InvalidArgument / LimitExceeded, exit 2) without an unbounded read.
    """
    return fileio.read_capped(path, what, limit)


def _depth(doc: Any) -> int:
    """Deepest nesting of arrays and objects in a parsed document (iterative: no recursion).

    Computed after parsing, not by scanning the text: a scan that skips strings with a regex is
    quadratic on an unterminated string of escaped quotes (found by review)."""
    deepest, stack = 0, [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise CertificateMalformed(f"field {key[:40]}: duplicate key (two readers could see two different values)")
        out[key] = value
    return out


def _int(text: str) -> int:
    # digits first: int() of a 100,000-digit string is quadratic (and refused by Python >= 3.11)
    if len(text.lstrip("-")) > len(str(MAX_ABS_INT)) or abs(int(text)) > MAX_ABS_INT:
        raise CertificateMalformed(f"integer {text[:24]}{'...' if len(text) > 24 else ''} is not an exact JSON number")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise CertificateMalformed(f"number {text[:24]} is not finite")
    return value


def _constant(text: str) -> None:
    raise CertificateMalformed(f"number {text} is not valid JSON")


def loads_strict(data: bytes) -> Any:
    """Parse certificate bytes: UTF-8 JSON with unique keys, finite numbers, integers below 2^53
    and nesting depth <= MAX_DEPTH.

    Contract: returns the parsed document, or raises CertificateMalformed (malformed) or
    LimitExceeded (too large or too deep) with a one-line reason; never a traceback.
    """
    if len(data) > MAX_FILE_BYTES:
        raise refuse("certificate size", len(data), f"of {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CertificateMalformed("field (document): not UTF-8 text") from None
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_int=_int,
            parse_float=_float,
            parse_constant=_constant,
        )
    except RecursionError:  # the C parser counts its recursion: deep nesting stops here, cleanly
        raise refuse("nesting depth", "1000+", f"of {MAX_DEPTH}") from None
    except json.JSONDecodeError as exc:
        raise CertificateMalformed(f"field (document): not valid JSON ({exc.__class__.__name__})") from None
    deepest = _depth(doc)
    if deepest > MAX_DEPTH:
        raise refuse("nesting depth", deepest, f"of {MAX_DEPTH}")
    return doc


def load_path(path: str | Path) -> Any:
    """Contract: loads_strict(read_capped(path))."""
    return loads_strict(read_capped(str(path)))
