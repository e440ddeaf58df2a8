"""Sweep specifications: a TOML file that names a job and a grid of parameters.

    job = "calibrate"                        # which certdp command each cell runs
    name = "sg_q{q}_n{steps}"                # optional: each cell's file name (without .json)

    [[grid]]                                 # one or more blocks; a block is a Cartesian product
    mechanism = "subsampled-gaussian"
    q = [0.005, 0.01]                        # a list of values
    steps = {from = 100, to = 500, step = 200}   # or a range: 100, 300, 500 (exact arithmetic)
    epsilon = 3                              # or one value
    delta = "1e-5"

A value is a string, an integer, a float (read back as its shortest round-trip decimal, so ``0.1``
means 0.1, the same text the command line would receive), a boolean (a switch such as
``allow_untrusted``), a list of those, or an inline table: ``{from, to, step}`` (from, from + step,
... up to to, in exact decimal arithmetic), ``{from, to, num}`` (num evenly spaced points, which
must be exact decimals) or ``{glob = "dir/*.json"}`` (the matching files, sorted; relative to the
spec file's folder, like every path in a spec). Keys are the command's flags without the dashes
(``max_seconds`` or ``max-seconds``).
"""

from __future__ import annotations

import glob as globmod
import hashlib
import itertools
import re
import string
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from certdp.errors import InvalidArgument, LimitExceeded, fmt_value
from certdp.fileio import read_capped
from certdp.pairs.params import exact_str, real

#: Most cells of one sweep (the manifest lists them all; split a larger sweep into several).
MAX_CELLS = 10_000

#: Most values one key may take in one block.
MAX_VALUES = 1_000

#: Largest spec file read.
MAX_SPEC_BYTES = 1 << 20

_TOP_KEYS = ("job", "name", "grid", "description")
_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")

Value = str | bool


@dataclass(frozen=True)
class Cell:
    """One task of a sweep: the job, its parameters as the command line would receive them (text,
    or True for a switch), the block it came from and its file name (without ``.json``)."""

    name: str
    job: str
    block: int
    params: tuple[tuple[str, Value], ...]

    def get(self, key: str) -> Value | None:
        """Contract: the value of ``key`` in this cell, or None."""
        return dict(self.params).get(key)


@dataclass(frozen=True)
class Spec:
    """A parsed sweep specification: its job, cells, the file it came from and that file's
    SHA-256 (recorded in the manifest)."""

    job: str
    cells: tuple[Cell, ...]
    path: Path
    sha256: str
    data: dict[str, Any] = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Contract: the spec as recorded in the manifest: path, digest and parsed content."""
        return {"path": str(self.path), "sha256": self.sha256, "content": self.data}


def _bad(where: str, value: object, why: str) -> InvalidArgument:
    return InvalidArgument(f"{where}={_show(value)} {why}")


def _show(value: object) -> str:
    text = repr(value) if isinstance(value, (dict, list)) else fmt_value(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _scalar(where: str, v: object) -> Value:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise _bad(where, v, "must be a finite number")
        return repr(v)  # shortest round trip: 0.1 -> "0.1", 1e-5 -> "1e-05"
    if isinstance(v, str):
        if not v.strip():
            raise _bad(where, v, "must not be empty")
        return v
    raise _bad(where, v, "must be a string, a number, a boolean, a list or a range table")


def _number(where: str, v: object) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _bad(where, v, "must be a number")
    return real(where, _scalar(where, v))  # type: ignore[arg-type]


def _range(where: str, table: dict[str, Any], base: Path) -> list[Value]:
    keys = set(table)
    if keys == {"glob"}:
        pattern = table["glob"]
        if not isinstance(pattern, str) or not pattern.strip():
            raise _bad(f"{where}.glob", pattern, "must be a file pattern")
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        found = sorted(globmod.glob(full))
        if not found:
            raise _bad(f"{where}.glob", pattern, f"matches no file (relative to {base})")
        # as the spec would give them: relative to its folder when the pattern is
        return [f if Path(pattern).is_absolute() else str(Path(f).relative_to(base)) for f in found]
    if keys not in ({"from", "to", "step"}, {"from", "to", "num"}):
        raise _bad(where, table, "must be a list, one value, {from, to, step}, {from, to, num} or {glob}")
    lo, hi = _number(f"{where}.from", table["from"]), _number(f"{where}.to", table["to"])
    if hi < lo:
        raise _bad(f"{where}.to", table["to"], f"must be >= from={_show(table['from'])}")
    if "step" in table:
        step = _number(f"{where}.step", table["step"])
        if step <= 0:
            raise _bad(f"{where}.step", table["step"], "must be > 0")
        if (hi - lo) / step >= MAX_VALUES:
            raise LimitExceeded(f"{where} has more than {MAX_VALUES} values")
        count = int((hi - lo) / step) + 1
        points = [lo + k * step for k in range(count)]
    else:
        num = table["num"]
        if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= MAX_VALUES:
            raise _bad(f"{where}.num", num, f"must be an integer in [1, {MAX_VALUES}]")
        if num == 1 and hi != lo:
            raise _bad(f"{where}.num", num, "must be >= 2 when to != from")
        points = [lo + (hi - lo) * k / (num - 1) for k in range(num)] if num > 1 else [lo]
    out: list[Value] = []
    for p in points:
        d = p.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d != 1:
            raise _bad(where, table, f"gives {p}, which is not a decimal number: give a step")
        out.append(exact_str(p))
    return out


def _values(where: str, v: object, base: Path) -> list[Value]:
    if isinstance(v, list):
        if not v:
            raise _bad(where, v, "must not be an empty list")
        if len(v) > MAX_VALUES:
            raise LimitExceeded(f"{where} has {len(v)} values, more than {MAX_VALUES}")
        return [_scalar(f"{where}[{i}]", x) for i, x in enumerate(v)]
    if isinstance(v, dict):
        return _range(where, v, base)
    return [_scalar(where, v)]


def _template_keys(where: str, template: object) -> list[str]:
    if not isinstance(template, str) or not template.strip():
        raise _bad(where, template, "must be a file-name template such as 'cell_q{q}_n{steps}'")
    try:
        parts = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise _bad(where, template, f"is not a valid template ({exc})") from None
    # no format specs or conversions: {q:>99999999} would build a huge name, {q:d} would raise
    if any(not f or not f.isidentifier() or spec or conv for f, spec, conv in parts):
        raise _bad(where, template, "may only use plain {key} placeholders")
    return [f for f, _, _ in parts]


def _file_name(template: str, params: dict[str, Value], job: str, file_keys: frozenset[str]) -> str:
    # a file given as a value is named by its stem: verify_{certificate} -> verify_dpsgd_q0.01
    texts = {k: Path(v).stem if k in file_keys else v for k, v in params.items() if isinstance(v, str)}
    texts.update({k: k if v else f"no_{k}" for k, v in params.items() if isinstance(v, bool)})
    texts["job"] = job
    name = _SAFE.sub("_", template.format(**texts)).strip("._")
    return name[:200] or job


def _default_template(blocks: list[dict[str, list[Value]]], job: str) -> str:
    """The job, the mechanism, and every key that takes more than one value anywhere."""
    varying: list[str] = []
    keys = sorted(dict.fromkeys(k for b in blocks for k in b), key=lambda k: k != "mechanism")
    for k in keys:
        seen = {v for b in blocks for v in b.get(k, [])}
        if k == "mechanism" or len(seen) > 1 or any(k not in b for b in blocks):
            varying.append(k)
    # a switch names itself (allow_untrusted, no_allow_untrusted); a value is prefixed by its key
    bare = {k for k in varying if k == "mechanism" or all(isinstance(v, bool) for b in blocks for v in b.get(k, []))}
    return "_".join(["{job}"] + [("{%s}" if k in bare else k + "{%s}") % k for k in varying])


def parse_spec(path: str | Path, jobs: tuple[str, ...], file_keys: frozenset[str] = frozenset()) -> Spec:
    """Read and expand a sweep specification.

    Contract: every cell of every block, with unique file names; InvalidArgument (one line naming
    the key, such as ``grid[1].q``) for malformed TOML, an unknown job or top-level key, a bad
    value or range, a template placeholder that is not a key of the block, or two cells with the
    same file name (ignoring case: the folder may be on a case-insensitive file system);
    LimitExceeded beyond MAX_CELLS cells or MAX_SPEC_BYTES bytes (no more is read). The values of
    ``file_keys`` are paths, named by their stem in file names. Checking each key against the
    job's flags is the caller's (certdp.cli.run_sweep).
    """
    p = Path(path)
    raw = read_capped(p, "spec", MAX_SPEC_BYTES)  # /dev/zero, a FIFO, a folder: never read
    try:
        data = tomllib.loads(raw.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:  # Recursion: deep nesting
        raise InvalidArgument(f"spec={fmt_value(str(path))} is not valid TOML ({str(exc)[:200]})") from None
    for key in data:
        if key not in _TOP_KEYS:
            raise InvalidArgument(f"spec key {fmt_value(key)} is unknown (allowed: {', '.join(_TOP_KEYS)})")
    job = data.get("job")
    if job not in jobs:
        raise _bad("job", job, f"must be one of {', '.join(jobs)}")
    grid = data.get("grid")
    if isinstance(grid, dict):
        grid = [grid]
    if not isinstance(grid, list) or not grid or not all(isinstance(b, dict) for b in grid):
        raise InvalidArgument("grid is missing: give a [grid] table or [[grid]] blocks of parameters")
    base = p.resolve().parent
    blocks: list[dict[str, list[Value]]] = []
    templates: list[str | None] = []
    for i, block in enumerate(grid):
        values: dict[str, list[Value]] = {}
        for key, v in block.items():
            if key == "name":
                continue
            norm = key.replace("-", "_")
            if norm in values:
                raise InvalidArgument(f"grid[{i}].{key} is given twice (as - and _ spellings)")
            values[norm] = _values(f"grid[{i}].{key}", v, base)
        blocks.append(values)
        templates.append(block.get("name", data.get("name")))
    count = sum(_product_size(b) for b in blocks)
    if count > MAX_CELLS:
        raise LimitExceeded(f"the sweep has {count} cells, more than {MAX_CELLS}: split it")
    default = _default_template(blocks, job)
    cells: list[Cell] = []
    owner: dict[str, int] = {}
    for i, (values, template) in enumerate(zip(blocks, templates, strict=True)):
        tpl = default if template is None else template
        where = f"grid[{i}].name" if template is not None and "name" in grid[i] else "name"
        for f in _template_keys(where, tpl):
            if f != "job" and f not in values:
                raise _bad(where, tpl, f"uses {{{f}}}, which is not a key of grid[{i}]")
        keys = list(values)
        for combo in itertools.product(*(values[k] for k in keys)):
            params = dict(zip(keys, combo, strict=True))
            name = _file_name(tpl, params, job, file_keys)
            folded = name.casefold()
            if folded == "manifest" or folded in owner:
                other = "the manifest" if folded == "manifest" else f"a cell of grid[{owner[folded]}]"
                raise _bad(
                    where,
                    tpl,
                    f"gives the file name {name}.json to a cell of grid[{i}] and to {other}: "
                    "put every key that varies in the name",
                )
            owner[folded] = i
            cells.append(Cell(name, job, i, tuple(params.items())))
    return Spec(job, tuple(cells), p, hashlib.sha256(raw).hexdigest(), data)


def _product_size(values: dict[str, list[Value]]) -> int:
    n = 1
    for v in values.values():
        n *= len(v)
    return n
