"""Claims as data: frozen descriptions of what a paper states, kept apart from their evaluation.

A claim file (TOML, one per paper) has a ``[paper]`` table (id, title, authors, arxiv or url) and
``[[claim]]`` tables. Every claim has ``id``, ``where`` (section / table / equation), ``printed``
(the number as printed, verbatim), ``statement`` and ``kind``:

* ``value``: the printed number, read with ``rounding`` (nearest | up | down | exact; ``step``
  for a lattice such as a sigma search step), must contain ``quantity``;
* ``bound``: ``quantity`` ``op`` (<=, <, >=, >) the printed number, exactly as printed;
  ``one_sided = true`` when the quantity only bounds the claimed property from the safe side
  (an RDP conversion's epsilon for an (eps, delta) guarantee): it can confirm, never refute;
* ``relation``: ``left`` ``op`` ``right`` (each a quantity or a number; op may also be ==);
* ``identity``: ``check`` names a proofs_checks id whose symbolic proof is the evidence;
* ``out-of-scope``: ``reason`` says what certdp lacks (training runs, data, ...).

A quantity is ``quantity = "name"`` with ``params = {...}`` (or, inside ``left``/``right`` and
nested params, a table ``{quantity = "name", key = value, ...}``); the names are those of
certdp.claims.quantities, each of which states the certdp function it calls. ``aggregate``
("min" or "max") with ``over`` (a list of parameter tables merged into ``params``) makes the
quantity the min or max over several settings (a printed range across workloads). ``note``
explains a derivation or, for a refuted claim, the likely cause.

Every claim may carry ``quote`` (the source's sentence or table cell, verbatim; where the source's
text is not at hand, ``"unknown: <why>"``, never a reconstruction) and ``number``
(a key shared by claims that check the same printed number, e.g. one printed range checked at
each of 20 workloads: the report counts distinct printed numbers, not claims).

``kind = "derived"`` marks a check the page does not state in these words (a consequence, a
special case, an interpretation): it names the form it is checked as (``checks_as``: value,
bound, relation or identity, with that form's fields) and ``reasoning`` ties it to the page.
Derived checks are counted apart from printed claims.

A parameter written ``"~0.638"`` is a *rounded printed input*: every value that prints as 0.638
(to the nearest unit in its last place, [0.6375, 0.6385]). Each quantity on the way to it must be
monotone in it (declared by the quantity), so that the values at the input's two ends bound the
quantity over the whole interval; the claim is confirmed if every value confirms, refuted if every
value refutes, imprecise otherwise (at most three rounded inputs, each appearing once per side).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from pathlib import Path

from certdp.claims.interval import Interval
from certdp.claims.rounding import ROUNDINGS, printed_interval, printed_value
from certdp.errors import InvalidArgument, fmt_value
from certdp.fileio import read_text
from certdp.pairs.params import exact_str

KINDS = ("value", "bound", "relation", "identity", "out-of-scope", "derived")
#: The forms a derived check may take.
DERIVED_FORMS = ("value", "bound", "relation", "identity")
#: What the report counts apart: printed claims, derived checks, identities, out of scope.
CATEGORIES = ("printed", "derived", "identity", "out of scope")
#: Most rounded printed inputs one claim may hold (2^k corner evaluations).
MAX_ROUNDED = 3
STATUSES = ("confirmed", "refuted", "imprecise", "out of scope")
OPS = ("<=", "<", ">=", ">", "==")
_COMMON = {"id", "where", "printed", "statement", "kind", "note", "quote", "number"}
#: The fields each kind reads: anything else is refused rather than silently ignored.
_FIELDS = {
    "value": _COMMON | {"quantity", "params", "rounding", "step", "value", "aggregate", "over"},
    "bound": _COMMON | {"quantity", "params", "op", "value", "aggregate", "over", "one_sided"},
    "relation": _COMMON | {"left", "right", "op"},
    "identity": _COMMON | {"check"},
    "out-of-scope": _COMMON | {"reason"},
}
_DERIVED = {"checks_as", "reasoning"}
#: Limits that keep a claim file from asking for unbounded work (the registry is far below them).
MAX_OVER = 200
MAX_LIST = 256
MAX_DEPTH = 8
MAX_CLAIM_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Ref:
    """A quantity to compute: a registered ``name`` and its ``params`` (values are canonical strings,
    tuples of them, or nested Refs). Hashable, so that each distinct computation runs once."""

    name: str
    params: tuple[tuple[str, object], ...]

    @property
    def key(self) -> str:
        """Contract: a canonical text, equal for equal computations."""
        return json.dumps([self.name, [[k, _plain(v)] for k, v in self.params]], separators=(",", ":"))

    @staticmethod
    def of(name: str, **params: object) -> Ref:
        """Contract: the Ref of an already canonical computation (params sorted by name, as
        :func:`make_ref` makes them), for quantities that name their own dependencies."""
        return Ref(name, tuple(sorted(params.items())))

    def get(self, name: str, default: object = None) -> object:
        """Contract: the parameter's canonical value, or ``default``."""
        return dict(self.params).get(name, default)

    def deps(self) -> list[Ref]:
        """Contract: the nested Refs among the parameters (computed before this one)."""
        return [v for _, v in self.params if isinstance(v, Ref)]

    def label(self) -> str:
        """Contract: a short human-readable form, ``name(k=v, ...)``."""
        inner = ", ".join(f"{k}={v.label() if isinstance(v, Ref) else _plain(v)}" for k, v in self.params)
        return f"{self.name}({inner})"


def _plain(v: object) -> object:
    if isinstance(v, Ref):
        return {"quantity": v.name, **{k: _plain(x) for k, x in v.params}}
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _canon(v: object, where: str, depth: int = 0) -> object:
    if depth > MAX_DEPTH:
        raise InvalidArgument(f"{where}: quantities nest deeper than {MAX_DEPTH} levels")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (float, Decimal)):
        return str(v) if isinstance(v, Decimal) else repr(v)
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, list):
        if len(v) > MAX_LIST:
            raise InvalidArgument(f"{where}: a list parameter holds at most {MAX_LIST} values")
        return tuple(_canon(x, where, depth + 1) for x in v)
    if isinstance(v, dict):
        if "quantity" in v:
            return make_ref(v, where, depth=depth + 1)
        raise InvalidArgument(f"{where}: a table parameter must name a quantity")
    raise InvalidArgument(f"{where}: unsupported parameter {fmt_value(v)}")


def make_ref(table: dict[str, object], where: str, params: dict[str, object] | None = None, depth: int = 0) -> Ref:
    """A Ref from ``{quantity = name, k = v, ...}`` (or a name and a separate params table).

    Contract: parameters in canonical form, sorted by name; an unknown quantity raises
    InvalidArgument naming it (checked against certdp.claims.quantities).
    """
    from certdp.claims.quantities import QUANTITIES

    name = table.get("quantity")
    if not isinstance(name, str) or name not in QUANTITIES:
        raise InvalidArgument(f"{where}: quantity={fmt_value(name)} is not a registered quantity")
    raw = {k: v for k, v in table.items() if k != "quantity"} if params is None else params
    if not isinstance(raw, dict):
        raise InvalidArgument(f"{where}: params must be a table")
    spec = QUANTITIES[name]
    unknown = sorted(set(raw) - set(spec.params))
    if unknown:
        raise InvalidArgument(f"{where}: quantity {name} has no parameter {unknown[0]} (has {', '.join(spec.params)})")
    missing = [p for p in spec.required if p not in raw]
    if missing:
        raise InvalidArgument(f"{where}: quantity {name} needs the parameter {missing[0]}")
    return Ref(name, tuple(sorted((k, _canon(v, f"{where}.{k}", depth)) for k, v in raw.items())))


@dataclass(frozen=True)
class Paper:
    """The source of a claim file: ``id`` (used by --paper), title, authors, arXiv id or URL."""

    id: str
    title: str
    authors: str
    arxiv: str = ""
    url: str = ""

    def cite(self) -> str:
        """Contract: "Authors, Title, arXiv:ID" (or the URL); "Title (authors unknown), ..." when the
        source names no authors."""
        src = f"arXiv:{self.arxiv}" if self.arxiv else self.url
        if self.authors == "unknown":
            return f"{self.title} (authors unknown), {src}"
        return f"{self.authors}, {self.title}, {src}"


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper (module docstring for the fields)."""

    paper: Paper
    id: str
    where: str
    printed: str
    statement: str
    kind: str
    aggregate: str | None = None
    over: tuple[Ref, ...] = ()
    target: Interval | None = None
    op: str | None = None
    left: Ref | Fraction | None = None
    right: Ref | Fraction | None = None
    check: str | None = None
    reason: str = ""
    note: str = ""
    refs: tuple[Ref, ...] = field(default=())
    one_sided: bool = False
    quote: str = ""
    number: str = ""
    #: why a derived check follows from the page ("" for a claim the page states)
    reasoning: str = ""
    #: rounded printed inputs: (parameter path, the interval of values that print that way)
    rounded: tuple[tuple[str, Interval], ...] = ()
    #: the claim at each corner of its rounded inputs' box (empty without rounded inputs)
    corners: tuple[Claim, ...] = ()

    @property
    def uid(self) -> str:
        """Contract: ``paper-id:claim-id``, unique across the registry."""
        return f"{self.paper.id}:{self.id}"

    @property
    def category(self) -> str:
        """Contract: "derived" for a derived check, "identity", "out of scope", else "printed"."""
        if self.reasoning:
            return "derived"
        if self.kind in ("identity", "out-of-scope"):
            return "identity" if self.kind == "identity" else "out of scope"
        return "printed"

    @property
    def number_key(self) -> str:
        """Contract: the key of the printed number this claim checks (``number``, else its id)."""
        return self.number or self.id


def _text(row: dict[str, object], key: str, where: str, required: bool = True) -> str:
    v = row.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or not v.strip():
        raise InvalidArgument(f"{where}: {key}={fmt_value(v)} must be a non-empty string")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in v):  # one-line errors and reports: no newlines, no escapes
        raise InvalidArgument(f"{where}: {key} must not hold control characters (newlines, escapes)")
    return v.strip()


#: How a quote says the source's words are not at hand: "unknown: <why>".
UNKNOWN_QUOTE = "unknown: "


def _quote(row: dict[str, object], where: str) -> str:
    """The source's words, or "unknown: <why>": a bare "unknown" would hide why the words are missing."""
    q = _text(row, "quote", where, required=False)
    marker = q.lower() == "unknown" or q.lower().startswith("unknown:")  # not a sentence that opens with the word
    if marker and not (q.startswith(UNKNOWN_QUOTE) and q[len(UNKNOWN_QUOTE) :].strip()):
        raise InvalidArgument(f'{where}: quote={fmt_value(q)} must read "unknown: <why the words are not at hand>"')
    return q


def _number_text(row: dict[str, object], key: str, where: str) -> str | None:
    """A number given as text: a TOML float would lose its printed digits (1.50 reads as 1.5)."""
    v = row.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise InvalidArgument(f'{where}: {key}={fmt_value(v)} must be written as a string ("1.50"), keeping its digits')
    return str(v)


def _subst(v: object, bindings: dict[str, object], where: str) -> object:
    """``v`` with every string "$name" replaced by bindings[name] (tables and lists recursively)."""
    if isinstance(v, str) and v.startswith("$"):
        if v[1:] not in bindings:
            raise InvalidArgument(f"{where}: {v} is not bound (bind it in over = [...])")
        return bindings[v[1:]]
    if isinstance(v, dict):
        return {k: _subst(x, bindings, where) for k, x in v.items()}
    if isinstance(v, list):
        return [_subst(x, bindings, where) for x in v]
    return v


def _side(v: object, where: str) -> Ref | Fraction:
    if isinstance(v, dict):
        return make_ref(v, where)
    if isinstance(v, (str, int, float, Decimal)) and not isinstance(v, bool):
        return printed_value(str(v), where)
    raise InvalidArgument(f"{where} must be a quantity table or a number, not {fmt_value(v)}")


def _rounded_inputs(v: object, qname: str | None, path: str, out: list[tuple[str, str]], where: str) -> bool:
    """Collect the rounded inputs ("~0.638") under ``v`` as (path, printed text); True if any.

    ``qname`` is the quantity whose parameter ``v`` is: it must be declared monotone in that
    parameter, or the values at the input's ends would not bound the quantity over its interval.
    """
    from certdp.claims.quantities import QUANTITIES

    name = path.rsplit(".", 1)[-1]

    def monotone_here() -> None:
        if qname is None or qname not in QUANTITIES:
            return  # a number side of a relation, or an unknown quantity (refused by make_ref)
        if name not in QUANTITIES[qname].monotone:
            raise InvalidArgument(
                f"{where}: {path} is a rounded input, but quantity {qname} is not declared monotone in {name}"
            )

    if isinstance(v, str) and v.strip().startswith("~"):
        monotone_here()
        out.append((path, v.strip()[1:]))
        return True
    if isinstance(v, list):
        if any(_rounded_inputs(x, None, f"{path}[{i}]", [], where) for i, x in enumerate(v)):
            raise InvalidArgument(f"{where}: {path} is a list: a rounded input cannot stand in one")
        return False
    if isinstance(v, dict):
        inner = v.get("quantity") if isinstance(v.get("quantity"), str) else None
        found = False
        for k, x in v.items():
            if k != "quantity":
                found |= _rounded_inputs(x, inner, f"{path}.{k}", out, where)  # type: ignore[arg-type]
        if found and inner is not None and path.rsplit(".", 1)[-1] not in ("left", "right"):
            monotone_here()  # the nested quantity feeds its parent: the parent must be monotone in it
        return found
    return False


def _set_rounded(v: object, path: str, ends: dict[str, str]) -> object:
    """``v`` with each rounded input replaced by its chosen end (paths as :func:`_rounded_inputs`)."""
    if path in ends:
        return ends[path]
    if isinstance(v, dict):
        return {k: (x if k == "quantity" else _set_rounded(x, f"{path}.{k}", ends)) for k, x in v.items()}
    return v


def claim_from_dict(row: object, paper: Paper, where: str) -> Claim:
    """Validate one ``[[claim]]`` table.

    Contract: a Claim whose fields are consistent with its kind; anything else raises
    InvalidArgument in one line naming the claim and the field. A derived check carries its form
    in ``kind`` and its ``reasoning``; a claim with rounded inputs carries the claim at each
    corner of their box (the module docstring).
    """
    if not isinstance(row, dict):
        raise InvalidArgument(f"{where} must be a table")
    cid = _text(row, "id", where)
    where = f"{paper.id}:{cid}"
    kind = _text(row, "kind", where)
    if kind not in KINDS:
        raise InvalidArgument(f"{where}: kind={fmt_value(kind)} must be one of {', '.join(KINDS)}")
    reasoning = ""
    allowed = _FIELDS.get(kind, set())
    if kind == "derived":
        form = row.get("checks_as")
        if form not in DERIVED_FORMS:
            raise InvalidArgument(f"{where}: checks_as={fmt_value(form)} must be one of {', '.join(DERIVED_FORMS)}")
        reasoning = _text(row, "reasoning", where)
        kind, allowed = str(form), _FIELDS[str(form)] | _DERIVED
    unknown = sorted(set(row) - allowed)
    if unknown:
        raise InvalidArgument(f"{where}: field {unknown[0]} does not apply to a {kind} claim")
    found: list[tuple[str, str]] = []
    if kind in ("value", "bound"):
        _rounded_inputs({"quantity": row.get("quantity"), **(row.get("params") or {})}, None, "params", found, where)
    elif kind == "relation":
        for side in ("left", "right"):
            _rounded_inputs(row.get(side), None, side, found, where)
    if not found:
        return _build(row, kind, paper, cid, where, reasoning)
    if row.get("over") is not None:
        raise InvalidArgument(f"{where}: a rounded input cannot be combined with aggregate over settings")
    if len(found) > MAX_ROUNDED:
        raise InvalidArgument(f"{where}: at most {MAX_ROUNDED} rounded inputs per claim (found {len(found)})")
    boxes = [(path, printed_interval(text, "nearest", None, f"{where}.{path}")) for path, text in found]
    corners = []
    for pick in itertools.product((0, 1), repeat=len(boxes)):
        ends = {
            path: exact_str(iv.upper if up else iv.lower)  # type: ignore[arg-type]
            for (path, iv), up in zip(boxes, pick, strict=True)
        }
        corners.append(_build(_with_ends(row, ends), kind, paper, cid, where, reasoning))
    central = _build(_with_ends(row, {p: t for p, t in found}), kind, paper, cid, where, reasoning)
    refs: dict[str, Ref] = {}
    for c in corners:
        refs.update((r.key, r) for r in c.refs)
    return dataclasses.replace(central, refs=tuple(refs.values()), rounded=tuple(boxes), corners=tuple(corners))


def _with_ends(row: dict[str, object], ends: dict[str, str]) -> dict[str, object]:
    out = dict(row)
    if "params" in row:
        out["params"] = _set_rounded(row["params"], "params", ends)
    for side in ("left", "right"):
        if side in row:
            out[side] = _set_rounded(row[side], side, ends)
    return out


def _build(row: dict[str, object], kind: str, paper: Paper, cid: str, where: str, reasoning: str) -> Claim:
    base = {
        "paper": paper,
        "id": cid,
        "where": _text(row, "where", where),
        "printed": _text(row, "printed", where),
        "statement": _text(row, "statement", where),
        "kind": kind,
        "note": _text(row, "note", where, required=False),
        "quote": _quote(row, where),
        "number": _text(row, "number", where, required=False),
        "reasoning": reasoning,
    }
    if kind == "out-of-scope":
        return Claim(**base, reason=_text(row, "reason", where))  # type: ignore[arg-type]
    if kind == "identity":
        return Claim(**base, check=_text(row, "check", where))  # type: ignore[arg-type]
    if kind == "relation":
        op = row.get("op")
        if op not in OPS:
            raise InvalidArgument(f"{where}: op={fmt_value(op)} must be one of {', '.join(OPS)}")
        left = _side(_subst(row.get("left"), {}, where), f"{where}.left")
        right = _side(_subst(row.get("right"), {}, where), f"{where}.right")
        refs = tuple(x for x in (left, right) if isinstance(x, Ref))
        if not refs:
            raise InvalidArgument(f"{where}: a relation needs at least one quantity side")
        return Claim(**base, op=op, left=left, right=right, refs=refs)  # type: ignore[arg-type]
    params = row.get("params", {})
    if not isinstance(params, dict):
        raise InvalidArgument(f"{where}: params must be a table")
    agg, over = row.get("aggregate"), row.get("over")
    overs: tuple[Ref, ...] = ()
    if (agg is None) != (over is None):
        raise InvalidArgument(f"{where}: aggregate and over go together")
    if agg is None:
        q = make_ref({"quantity": row.get("quantity")}, where, _subst(params, {}, where))
    else:
        if agg not in ("min", "max") or not isinstance(over, list) or not over:
            raise InvalidArgument(f"{where}: aggregate must be min or max over a non-empty list of tables")
        if len(over) > MAX_OVER:
            raise InvalidArgument(f"{where}: over holds at most {MAX_OVER} settings")
        for i, bindings in enumerate(over):
            if not isinstance(bindings, dict):
                raise InvalidArgument(f"{where}.over[{i}] must be a table")
            table = _subst(params, bindings, f"{where}.over[{i}]")
            overs += (make_ref({"quantity": row.get("quantity")}, f"{where}.over[{i}]", table),)
        q = overs[0]
    text = _number_text(row, "value", where) or base["printed"]
    refs = overs or (q,)
    if kind == "bound":
        op = row.get("op")
        if op not in OPS[:4]:
            raise InvalidArgument(f"{where}: op={fmt_value(op)} must be one of {', '.join(OPS[:4])}")
        v = printed_value(text, f"{where}.value")
        one_sided = row.get("one_sided", False)
        if not isinstance(one_sided, bool):
            raise InvalidArgument(f"{where}: one_sided={fmt_value(one_sided)} must be true or false")
        target = Interval(v, v, f"bound {op} {text}")
        return Claim(**base, aggregate=agg, over=overs, target=target, op=op, refs=refs, one_sided=one_sided)  # type: ignore[arg-type]
    rounding = row.get("rounding", "nearest")
    if rounding not in ROUNDINGS:
        raise InvalidArgument(f"{where}: rounding={fmt_value(rounding)} must be one of {', '.join(ROUNDINGS)}")
    step = _number_text(row, "step", where)
    st = printed_value(step, f"{where}.step") if step is not None else None
    target = printed_interval(text, str(rounding), st, f"{where}.printed")
    return Claim(**base, aggregate=agg, over=overs, target=target, refs=refs)  # type: ignore[arg-type]


def parse_claims(text: str, source: str) -> tuple[Claim, ...]:
    """Claims of one TOML claim file.

    Contract: the [paper] table and every claim validated, claim ids unique; a syntax error raises
    InvalidArgument naming ``source``.
    """
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidArgument(f"claims={source} is not valid TOML: {first}") from None
    p = data.get("paper")
    if not isinstance(p, dict):
        raise InvalidArgument(f"claims={source} needs a [paper] table")
    paper = Paper(
        _text(p, "id", f"{source} [paper]"),
        _text(p, "title", f"{source} [paper]"),
        _text(p, "authors", f"{source} [paper]"),
        _text(p, "arxiv", f"{source} [paper]", required=False),
        _text(p, "url", f"{source} [paper]", required=False),
    )
    if not (paper.arxiv or paper.url):
        raise InvalidArgument(f"claims={source} [paper] needs arxiv or url")
    rows = data.get("claim")
    if not isinstance(rows, list) or not rows:
        raise InvalidArgument(f"claims={source} must hold [[claim]] tables")
    claims = tuple(claim_from_dict(r, paper, f"{source} claim {i + 1}") for i, r in enumerate(rows))
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise InvalidArgument(f"claims={source}: id={c.id!r} appears twice")
        seen.add(c.id)
    return claims


def load_claims(path: str | Path) -> tuple[Claim, ...]:
    """Claims of a claim file on disk. Contract: as :func:`parse_claims`; an unreadable, non-UTF-8 or
    over-large (> 1 MiB) file raises InvalidArgument naming the path."""
    text = read_text(path, "claims", MAX_CLAIM_FILE_BYTES)  # a device or a FIFO never ends: refused unread
    return parse_claims(text, str(path))


def shipped_claims(paper: str | None = None) -> tuple[Claim, ...]:
    """The registry shipped with certdp (certdp/claims/*.toml), optionally one paper's.

    Contract: every file parsed and validated; uids unique; ``paper`` must match a paper id or
    its arXiv id (InvalidArgument listing the ids otherwise).
    """
    out: list[Claim] = []
    folder = resources.files("certdp.claims")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.extend(parse_claims(entry.read_text(encoding="utf-8"), entry.name))
    uids = [c.uid for c in out]
    if len(set(uids)) != len(uids):
        raise InvalidArgument("the shipped registry has a duplicate claim uid")
    if paper is None:
        return tuple(out)
    picked = tuple(c for c in out if paper in (c.paper.id, c.paper.arxiv))
    if not picked:
        ids = sorted({c.paper.id for c in out})
        raise InvalidArgument(f"paper={fmt_value(paper)} is not in the registry (papers: {', '.join(ids)})")
    return picked


#: Which status of one printed number's claims wins when they differ (the number is as good as its worst check).
_WORST = ("refuted", "imprecise", "out of scope", "confirmed")


def summarize(claims: Sequence[Claim], statuses: Sequence[str] | None = None) -> dict[str, dict[str, object]]:
    """Counts per category (printed, derived, identity, out of scope), for all claims and per paper.

    Contract: ``{"all": {...}, paper_id: {...}}``; each holds, per category, ``claims`` and (with
    ``statuses``, one per claim) the count of each status. Printed claims are also counted as
    distinct printed ``numbers`` (claims sharing a ``number`` key count once), and their statuses
    count numbers, each taking the worst status among its claims (refuted, imprecise, confirmed).
    """
    out: dict[str, dict[str, object]] = {}
    groups: dict[str, list[tuple[Claim, str | None]]] = {"all": []}
    for i, c in enumerate(claims):
        st = None if statuses is None else statuses[i]
        groups["all"].append((c, st))
        groups.setdefault(c.paper.id, []).append((c, st))
    for name, rows in groups.items():
        rec: dict[str, object] = {}
        for cat in CATEGORIES:
            mine = [(c, st) for c, st in rows if c.category == cat]
            entry: dict[str, int] = {"claims": len(mine)}
            if cat == "printed":
                numbers: dict[tuple[str, str], list[str | None]] = {}
                for c, st in mine:
                    numbers.setdefault((c.paper.id, c.number_key), []).append(st)
                entry["numbers"] = len(numbers)
                if statuses is not None:
                    worst = [next(s for s in _WORST if s in sts) for sts in numbers.values()]
                    entry.update({s: worst.count(s) for s in STATUSES})
            elif statuses is not None:
                entry.update({s: sum(st == s for _, st in mine) for s in STATUSES})
            rec[cat] = entry
        out[name] = rec
    return out


def summary_line(rec: dict[str, object]) -> str:
    """Contract: one line of :func:`summarize`'s counts for one group (statuses when present)."""

    def st(e: dict[str, int]) -> str:
        got = [f"{e[s]} {s}" for s in STATUSES if s in e and e[s] and s != "out of scope"]
        return f" ({', '.join(got)})" if got else ""

    p, d, i, o = (rec[c] for c in CATEGORIES)
    assert isinstance(p, dict) and isinstance(d, dict) and isinstance(i, dict) and isinstance(o, dict)
    return (
        f"{p['numbers']} distinct printed numbers in {p['claims']} claims{st(p)}; "
        f"{d['claims']} derived checks{st(d)}; {i['claims']} identities{st(i)}; {o['claims']} out of scope"
    )
