"""Google dp_accounting ``DpEvent`` descriptions to certdp pairs and back, and their JSON form.

A ``DpEvent`` says which mechanism ran, not what it costs; certdp maps each supported event to the
pair whose CGF it certifies:

=====================================================  ===============================================
dp_accounting event                                    certdp pair
=====================================================  ===============================================
``GaussianDpEvent(noise_multiplier=s)``                ``Gaussian(sigma=s)`` (shift 1)
``LaplaceDpEvent(noise_multiplier=b)``                 ``Laplace(scale=b, shift=1)``
``DiscreteLaplaceDpEvent(noise_parameter=a,            ``DiscreteLaplace(a=a, shift=k)``
sensitivity=k)``
``PoissonSampledDpEvent(q, GaussianDpEvent(s))``       ``SubsampledGaussian(q, s, "both")`` (add or
                                                       remove one, dp_accounting's default relation)
``SelfComposedDpEvent(event, count)``                  ``compose(pair, count)``
``ComposedDpEvent(events)``                            ``compose([...])``; ``NoOpDpEvent`` items dropped
``ZCDpEvent(rho, xi=0)``                               ``ZcdpBound(rho, xi)`` (RDP accounting only)
=====================================================  ===============================================

Anything else (a Poisson-sampled Laplace, a randomized response, ...) raises
:class:`certdp.errors.Unsupported` naming the event. A float field means its exact binary value
(``Fraction(0.1)``, not 1/10), which is exactly what dp_accounting computes with; the inverse,
:func:`to_event`, refuses a parameter that no binary64 float equals (never rounds it).

The JSON form is the layout of dp_accounting's ``DpEvent.to_named_tuple`` as a dict:
``{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier":
1.1}``, nested events as such dicts, ``ComposedDpEvent.events`` as a list of them. What
dp_accounting itself writes is read too: ``json.dumps(event.to_named_tuple())`` gives each event
as a positional list ``["dp_accounting.dp_event", "GaussianDpEvent", 1.1]`` (the fields in
dp_accounting's order), and ``json.dumps(event.to_named_tuple()._asdict())`` a dict whose nested
events are such lists; both mean the dict form above. Every form is read strictly
(:func:`parse_event_json`, :func:`load_event`): one meaning per document, bounded work.
This module never imports dp_accounting except in :func:`to_event`, which builds live events.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from certdp.errors import InvalidArgument, LimitExceeded, Unsupported, fmt_value, invalid
from certdp.fileio import read_capped
from certdp.pairs import (
    Composition,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PrivacyPair,
    SubsampledGaussian,
    ZcdpBound,
    compose,
)
from certdp.pairs.composition import MAX_PARTS
from certdp.pairs.params import Number, exact_str, integer, real

MODULE_NAME = "dp_accounting.dp_event"
#: module_name values accepted in the JSON form (dp_accounting re-exports its events at the top)
MODULE_NAMES = (MODULE_NAME, "dp_accounting")

#: Fields of each supported event class, in dp_accounting's order.
FIELDS: dict[str, tuple[str, ...]] = {
    "GaussianDpEvent": ("noise_multiplier",),
    "LaplaceDpEvent": ("noise_multiplier",),
    "DiscreteLaplaceDpEvent": ("noise_parameter", "sensitivity"),
    "PoissonSampledDpEvent": ("sampling_probability", "event"),
    "SelfComposedDpEvent": ("event", "count"),
    "ComposedDpEvent": ("events",),
    "ZCDpEvent": ("rho", "xi"),
    "NoOpDpEvent": (),
}
#: Fields that may be left out, with dp_accounting's default.
DEFAULTS: dict[tuple[str, str], float] = {("ZCDpEvent", "xi"): 0.0}

#: The supported event class names (NoOpDpEvent only as an item of a composition).
EVENT_TYPES: tuple[str, ...] = tuple(FIELDS)

#: Deepest nesting of events (a SelfComposed or Composed or PoissonSampled level counts one).
MAX_DEPTH = 64
#: Most events (every node, NoOps included) one description may hold: each distinct part costs
#: its own RDP curve (about 0.1 s: 100 distinct subsampled Gaussians took 8-18 s), so 1000 stay
#: within minutes of the default budget (attack review: 3000 ran towards the 900 s budget instead
#: of being refused up front); below certdp.pairs.composition.MAX_PARTS
MAX_EVENTS = min(MAX_PARTS, 1000)
#: Largest count of a SelfComposedDpEvent, and of the product of nested counts.
MAX_COUNT = 10**12
#: Longest JSON document read (bytes).
MAX_JSON_BYTES = 1 << 20
#: Longest JSON integer literal (digits): count <= 10^12 needs 13.
MAX_INT_DIGITS = 30

_INSTALL = "pip install dp-accounting"


# -- reading an event (live, dict or named tuple) ---------------------------------------------------------


class _Budget:
    """Counts the events visited, so a description with a million items is refused early."""

    def __init__(self) -> None:
        self.events = 0

    def visit(self) -> None:
        self.events += 1
        if self.events > MAX_EVENTS:
            raise LimitExceeded(f"the event holds more than {MAX_EVENTS} events: at most {MAX_EVENTS} are accounted")


def _supported_list() -> str:
    return ", ".join(EVENT_TYPES)


def _unsupported(name: str) -> Unsupported:
    return Unsupported(f"{fmt_value(name)} is not supported by certdp (supported: {_supported_list()})")


def _class_of(obj: object) -> tuple[str, Callable[[str], Any], str]:
    """(class name, field getter, kind) of a live event, its dict form or its named-tuple form.

    kind is "live" or "json": a live event holds what dp_accounting computes with (numbers only),
    the JSON form may also hold decimal or ratio strings.
    """
    if isinstance(obj, Mapping) or (isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "class_name")):
        doc = dict(obj) if isinstance(obj, Mapping) else obj._asdict()  # type: ignore[attr-defined]
        return _check_doc(doc), doc.__getitem__, "json"
    cls = type(obj)
    name = cls.__name__
    if name not in FIELDS:
        if name.endswith("DpEvent") or cls.__module__.startswith("dp_accounting"):
            raise _unsupported(name)
        raise invalid("event", repr(obj), "must be a dp_accounting DpEvent or its JSON form (a dict)")
    declared = getattr(cls, "__attrs_attrs__", None)
    if declared is not None:
        # a later dp_accounting may add an optional field that changes the meaning: refuse, never ignore
        got = tuple(a.name for a in declared)
        if got != FIELDS[name]:
            raise Unsupported(
                f"{name} has fields ({', '.join(got)}), certdp knows ({', '.join(FIELDS[name])}): "
                "this dp_accounting version is not supported"
            )
    for field in FIELDS[name]:
        if not hasattr(obj, field):
            raise InvalidArgument(f"{name}.{field} is missing")
    return name, lambda field: getattr(obj, field), "live"


#: How the positional JSON form looks, for messages.
_POSITIONAL = "dp_accounting's to_named_tuple form [module_name, class_name, field values...]"


def _positional(items: list[Any], fields_of: Mapping[str, tuple[str, ...]] = FIELDS) -> dict[str, Any]:
    """The dict form of one event in dp_accounting's named-tuple form as JSON writes it: a list
    ``[module_name, class_name, *fields]`` with the fields in dp_accounting's order (FIELDS).
    Nested events are left as they are (see :func:`_normalized`)."""
    if len(items) < 2 or not isinstance(items[0], str) or not isinstance(items[1], str):
        head = ", ".join(fmt_value(repr(x))[:40] for x in items[:2]) or "nothing"
        raise InvalidArgument(f"an event written as a JSON list must be {_POSITIONAL}; this one starts with {head}")
    module, name = items[0], items[1]
    if module not in MODULE_NAMES:
        raise invalid(f"{fmt_value(name)}.module_name", repr(module), f"must be {' or '.join(MODULE_NAMES)}")
    if name not in fields_of:
        raise _unsupported(name)
    fields = fields_of[name]
    if len(items) != 2 + len(fields):
        raise InvalidArgument(
            f"{name} in {_POSITIONAL} has {len(items) - 2} field values, not {len(fields)} "
            f"({', '.join(fields) or 'none'})"
        )
    return {"module_name": module, "class_name": name, **dict(zip(fields, items[2:], strict=True))}


def _normalized(
    obj: object, depth: int = 0, budget: _Budget | None = None, fields_of: Mapping[str, tuple[str, ...]] = FIELDS
) -> object:
    """The dict form of an event given as JSON-like data (a dict or a positional list, nested in
    any mix, as dp_accounting's to_named_tuple serializes); anything else (a live event, a named
    tuple) unchanged. Only structure is converted: keys and values are checked by from_event."""
    if not isinstance(obj, list | Mapping):
        return obj
    budget = budget or _Budget()
    if depth > MAX_DEPTH:
        raise LimitExceeded(f"the event is nested more than {MAX_DEPTH} levels deep")
    budget.visit()
    doc = _positional(obj, fields_of) if isinstance(obj, list) else dict(obj)
    fields = fields_of.get(doc.get("class_name"), ())  # type: ignore[arg-type]
    if "event" in fields and "event" in doc:
        doc["event"] = _normalized(doc["event"], depth + 1, budget, fields_of)
    if "events" in fields and isinstance(doc.get("events"), list):
        if len(doc["events"]) > MAX_EVENTS:  # the message of _walk's check
            raise LimitExceeded(
                f"{doc['class_name']}.events has {len(doc['events'])} items: at most {MAX_EVENTS} are accounted"
            )
        doc["events"] = [_normalized(e, depth + 1, budget, fields_of) for e in doc["events"]]
    return doc


def _check_doc(doc: dict[str, Any]) -> str:
    """The class name of a dict event after its keys are checked (not its values)."""
    if "class_name" not in doc:
        raise InvalidArgument(
            f"event has no class_name (keys: {_keys(doc)}); attrs.asdict drops it: write "
            "json.dumps(event.to_named_tuple()) or certdp's event_to_dict(event)"
        )
    name = doc["class_name"]
    if not isinstance(name, str):
        raise invalid("class_name", repr(name), "must be a string")
    if "module_name" in doc and doc["module_name"] not in MODULE_NAMES:
        shown = repr(doc["module_name"])
        raise invalid(f"{fmt_value(name)}.module_name", shown, f"must be {' or '.join(MODULE_NAMES)}")
    if name not in FIELDS:
        raise _unsupported(name)
    known = set(FIELDS[name]) | {"class_name", "module_name"}
    unknown = [k for k in doc if k not in known]
    if unknown:
        fields = ", ".join(FIELDS[name]) or "none"
        raise InvalidArgument(f"{name}: unknown field {fmt_value(repr(unknown[0]))} (its fields: {fields})")
    for field in FIELDS[name]:
        if field not in doc:
            if (name, field) in DEFAULTS:
                doc[field] = DEFAULTS[(name, field)]
            else:
                raise InvalidArgument(f"{name}.{field} is missing")
    return name


def _keys(doc: Mapping[str, Any]) -> str:
    keys = ", ".join(str(k)[:40] for k in list(doc)[:10])
    return keys or "none"


def _number(name: str, value: object, kind: str) -> Number:
    """``value`` if it is a number this form may hold (bool is not one), else InvalidArgument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise invalid(name, repr(value) if isinstance(value, bool | str) else value, "must be a number")
    if isinstance(value, str):
        if kind == "live":  # dp_accounting itself would fail on a string
            raise invalid(name, repr(value), "must be a number (a live DpEvent holds floats, not text)")
        return value
    if isinstance(value, int | float | Fraction):
        return value
    # numpy and other registered scalars: exact conversion (a float32 widens exactly)
    if isinstance(value, numbers.Integral):
        return int(value)
    out = float(value)
    if not math.isfinite(out):
        raise invalid(name, value, "must be a finite number")
    return out


def _real(name: str, value: object, kind: str, **bounds: Fraction | int) -> Fraction:
    return real(name, _number(name, value, kind), **bounds)  # type: ignore[arg-type]


def _int(name: str, value: object, kind: str, *, ge: int, le: int) -> int:
    n = integer(name, _number(name, value, kind), ge=ge)
    if n > le:
        raise LimitExceeded(f"{name}={fmt_value(value)} exceeds the limit {fmt_value(le)}")
    return n


def _renamed(build: Callable[[], PrivacyPair], names: dict[str, str]) -> PrivacyPair:
    """``build()``, with a pair's parameter names in its error replaced by the event's field names."""
    try:
        return build()
    except InvalidArgument as exc:
        message = str(exc)
        for param, field in names.items():
            if message.startswith(f"{param}="):
                raise type(exc)(field + message[len(param) :]) from None
        raise


Items = list[tuple[PrivacyPair, int]]


def _walk(obj: object, depth: int, mult: int, budget: _Budget) -> Items:
    """The (pair, count) items of an event, each count multiplied by ``mult``; [] for a NoOp."""
    if depth > MAX_DEPTH:
        raise LimitExceeded(f"the event is nested more than {MAX_DEPTH} levels deep")
    budget.visit()
    name, get, kind = _class_of(obj)
    if name == "NoOpDpEvent":
        return []
    if name == "GaussianDpEvent":
        s = _real(f"{name}.noise_multiplier", get("noise_multiplier"), kind, gt=0)
        return [(_renamed(lambda: Gaussian(s), {"sigma": f"{name}.noise_multiplier"}), mult)]
    if name == "LaplaceDpEvent":
        b = _real(f"{name}.noise_multiplier", get("noise_multiplier"), kind, gt=0)
        return [(_renamed(lambda: Laplace(b, 1), {"scale": f"{name}.noise_multiplier"}), mult)]
    if name == "DiscreteLaplaceDpEvent":
        a = _real(f"{name}.noise_parameter", get("noise_parameter"), kind, gt=0)
        k = _int(f"{name}.sensitivity", get("sensitivity"), kind, ge=1, le=MAX_COUNT)
        names = {"a": f"{name}.noise_parameter", "shift": f"{name}.sensitivity"}
        return [(_renamed(lambda: DiscreteLaplace(a, k), names), mult)]
    if name == "ZCDpEvent":
        rho = _real(f"{name}.rho", get("rho"), kind, gt=0)
        xi = _real(f"{name}.xi", get("xi"), kind, ge=0)
        return [(_renamed(lambda: ZcdpBound(rho, xi), {"rho": f"{name}.rho", "xi": f"{name}.xi"}), mult)]
    if name == "PoissonSampledDpEvent":
        q = _real(f"{name}.sampling_probability", get("sampling_probability"), kind, gt=0, le=1)
        inner = get("event")
        inner_name = _class_of(inner)[0]
        if inner_name != "GaussianDpEvent":
            raise Unsupported(
                f"{name} of {inner_name} is not supported by certdp (Poisson sampling of a GaussianDpEvent only)"
            )
        ((gauss, _),) = _walk(inner, depth + 1, 1, budget)
        names = {"q": f"{name}.sampling_probability", "sigma": "GaussianDpEvent.noise_multiplier"}
        sigma = gauss.sigma  # type: ignore[attr-defined]
        return [(_renamed(lambda: SubsampledGaussian(q, sigma, "both"), names), mult)]
    if name == "SelfComposedDpEvent":
        count = _int(f"{name}.count", get("count"), kind, ge=1, le=MAX_COUNT)
        if mult * count > MAX_COUNT:
            raise LimitExceeded(f"nested counts multiply to {fmt_value(mult * count)}, beyond the limit {MAX_COUNT}")
        items = _walk(get("event"), depth + 1, mult * count, budget)
        if not items:
            raise InvalidArgument(f"{name}.event is a NoOpDpEvent: nothing to account")
        return items
    assert name == "ComposedDpEvent"
    events = get("events")
    if isinstance(events, str | bytes | Mapping) or not isinstance(events, list | tuple):
        raise invalid(f"{name}.events", repr(events), "must be a list of events")
    if len(events) > MAX_EVENTS:
        raise LimitExceeded(f"{name}.events has {len(events)} items: at most {MAX_EVENTS} are accounted")
    items = []
    for event in events:
        items += _walk(event, depth + 1, mult, budget)
    if not items:
        raise InvalidArgument(f"{name}.events holds no private event (NoOpDpEvent only, or none): nothing to account")
    return items


def from_event(event: object) -> PrivacyPair:
    """The certdp pair of a dp_accounting DpEvent, live or in its JSON form (module docstring).

    ``event`` is a live ``DpEvent`` (read by class name and attributes: dp_accounting is not
    imported), its dict form (:func:`event_to_dict`, :func:`parse_event_json`) or its
    ``to_named_tuple`` form, live or as ``json.loads`` gives it back (positional lists). Floats
    are taken at their exact binary value; in the dict form a decimal or ratio string (``"1.1"``,
    ``"1/3"``) is read as the exact rational, a certdp extension that dp_accounting does not read.
    A single event gives its pair; SelfComposed and Composed give a
    :class:`certdp.pairs.Composition` (equal pairs merged, NoOpDpEvent items dropped).

    Contract: a pair whose CGF is the one of the described mechanism (an upper bound for
    ZCDpEvent, which describes a guarantee); InvalidArgument one line naming the field and value
    (``GaussianDpEvent.noise_multiplier=0 must be > 0``) or saying there is nothing to account
    (only NoOpDpEvent); LimitExceeded beyond MAX_DEPTH levels, MAX_EVENTS events or a count (or
    product of nested counts) above MAX_COUNT; Unsupported naming an event class certdp does not
    map, with the supported ones.
    """
    event = _normalized(event)
    name = _class_of(event)[0]
    items = _walk(event, 0, 1, _Budget())
    if not items:
        raise InvalidArgument(f"{name}: nothing to account (the event releases nothing)")
    if name in ("SelfComposedDpEvent", "ComposedDpEvent"):
        return compose(items)
    ((pair, _),) = items
    return pair


# -- writing an event ---------------------------------------------------------------------------------------


def _exact_float(name: str, value: Fraction) -> float:
    """The float equal to ``value``, or InvalidArgument: a DpEvent's float field cannot carry it."""
    f = float(value)
    if Fraction(f) != value:
        # p/q and the nearest float's exact decimal: "1.1" and "1.1" would not show why they differ
        shown = f"{value.numerator}/{value.denominator}" if value.denominator.bit_length() < 200 else value
        raise invalid(
            name,
            shown,
            f"is not a binary64 float (the nearest is {exact_str(Fraction(f))}), so a DpEvent float field "
            "cannot carry it (certdp never rounds a privacy parameter); pass a float-valued parameter",
        )
    return f


def _head(class_name: str) -> dict[str, Any]:
    return {"module_name": MODULE_NAME, "class_name": class_name}


def _pair_dict(pair: PrivacyPair) -> dict[str, Any]:
    """The event dict of a non-composed pair."""
    if isinstance(pair, Gaussian) and pair.shift == 1:
        return {**_head("GaussianDpEvent"), "noise_multiplier": _exact_float("sigma", pair.sigma)}
    if isinstance(pair, Laplace) and pair.shift == 1:
        return {**_head("LaplaceDpEvent"), "noise_multiplier": _exact_float("scale", pair.scale)}
    if isinstance(pair, DiscreteLaplace):
        return {
            **_head("DiscreteLaplaceDpEvent"),
            "noise_parameter": _exact_float("a", pair.a),
            "sensitivity": pair.shift,
        }
    if isinstance(pair, SubsampledGaussian) and pair.direction == "both":
        gauss = {**_head("GaussianDpEvent"), "noise_multiplier": _exact_float("sigma", pair.sigma)}
        return {**_head("PoissonSampledDpEvent"), "sampling_probability": _exact_float("q", pair.q), "event": gauss}
    if isinstance(pair, ZcdpBound):
        return {**_head("ZCDpEvent"), "rho": _exact_float("rho", pair.rho), "xi": _exact_float("xi", pair.xi)}
    why = {
        Gaussian: " (GaussianDpEvent has sensitivity 1: use Gaussian(sigma/|shift|), the same CGF)",
        Laplace: " (LaplaceDpEvent has sensitivity 1: use Laplace(scale/|shift|), the same CGF)",
        SubsampledGaussian: " (PoissonSampledDpEvent is add-or-remove: direction both)",
    }.get(type(pair), "")
    raise Unsupported(f"{pair.describe()} has no dp_accounting DpEvent{why}")


def pair_to_dict(pair: PrivacyPair) -> dict[str, Any]:
    """The JSON form of the DpEvent of ``pair`` (the inverse of :func:`from_event`), computed
    without dp_accounting: floats as Python floats (JSON numbers), counts as ints.

    A Composition of one part (p, n) gives SelfComposedDpEvent(p's event, n), n = 1 included (so
    that reading it back gives a Composition again, not the bare pair); several parts give a
    ComposedDpEvent of the parts' events, each wrapped in a SelfComposedDpEvent when its count
    exceeds 1.

    Contract: from_event(pair_to_dict(pair)) == pair for every pair it accepts; InvalidArgument
    when a parameter is not exactly a binary64 float (``sigma=0.333... is not exactly a binary64
    float ...``: never rounded); Unsupported for pairs with no DpEvent (Student-t, a shifted
    Gaussian, a one-direction subsampled Gaussian, ...).
    """
    if not isinstance(pair, PrivacyPair):
        raise invalid("pair", repr(pair), "must be a certdp privacy pair")
    if not isinstance(pair, Composition):
        return _pair_dict(pair)

    def part(p: PrivacyPair, n: int, wrap_one: bool = False) -> dict[str, Any]:
        inner = _pair_dict(p)
        if n == 1 and not wrap_one:
            return inner
        return {**_head("SelfComposedDpEvent"), "event": inner, "count": n}

    if len(pair.parts) == 1:
        return part(*pair.parts[0], wrap_one=True)
    return {**_head("ComposedDpEvent"), "events": [part(p, n) for p, n in pair.parts]}


def _dp_event_module() -> Any:
    try:
        # an optional peer: imported when needed, never by import certdp
        from dp_accounting import dp_event
    except ImportError as exc:
        raise Unsupported(f"to_event needs dp_accounting ({exc.__class__.__name__}): {_INSTALL}") from None
    return dp_event


def _live(doc: dict[str, Any], module: Any) -> Any:
    """The live event of a dict this module wrote (trusted: every value already checked)."""
    kwargs: dict[str, Any] = {}
    for field in FIELDS[doc["class_name"]]:
        value = doc[field]
        if field == "event":
            value = _live(value, module)
        elif field == "events":
            value = [_live(v, module) for v in value]
        kwargs[field] = value
    return getattr(module, doc["class_name"])(**kwargs)


def to_event(pair: PrivacyPair) -> Any:
    """The live dp_accounting DpEvent of ``pair`` (the inverse of :func:`from_event`; layout as
    :func:`pair_to_dict`). Imports dp_accounting when called.

    Contract: from_event(to_event(pair)) == pair; to_event(from_event(e)) == e for a canonical
    event e (a base event, a SelfComposedDpEvent of one, a ComposedDpEvent of at least two distinct
    items, each a base event or a SelfComposedDpEvent with count > 1); the errors of
    :func:`pair_to_dict`, and Unsupported with the pip command when dp_accounting is missing.
    """
    doc = pair_to_dict(pair)
    return _live(doc, _dp_event_module())


def event_to_dict(event: object) -> dict[str, Any]:
    """The JSON form of a live DpEvent (or of a dict or named-tuple form, normalized): the layout
    of dp_accounting's ``to_named_tuple`` as nested dicts and lists, with ``module_name`` set to
    ``dp_accounting.dp_event`` and the event's own values (floats stay floats).

    Contract: from_event(event_to_dict(e)) == from_event(e), and json.dumps of the result is
    read back by :func:`parse_event_json`; the errors of :func:`from_event` (the event is
    validated first, so only events certdp can account are written).
    """
    event = _normalized(event)
    from_event(event)  # validates values, depth and size before anything is written

    def walk(obj: object) -> dict[str, Any]:
        name, get, _ = _class_of(obj)
        out = _head(name)
        for field in FIELDS[name]:
            value = get(field)
            if field == "event":
                value = walk(value)
            elif field == "events":
                value = [walk(v) for v in value]
            elif isinstance(value, numbers.Real) and not isinstance(value, int | float):
                value = int(value) if isinstance(value, numbers.Integral) else float(value)  # numpy scalars
            out[field] = value
        return out

    return walk(event)


# -- strict JSON --------------------------------------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidArgument(f"duplicate key {fmt_value(repr(key))} (two readers could see two different events)")
        out[key] = value
    return out


def _json_int(text: str) -> int:
    # digits first: int() of a 100,000-digit literal is quadratic (and refused by Python >= 3.11)
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidArgument(f"integer {text[:24]}... has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise invalid("number", text, "is beyond the float range")
    return value


def _json_constant(text: str) -> None:
    raise invalid("number", text, "is not JSON (NaN and Infinity are refused)")


def _json_depth(doc: Any) -> int:
    """Deepest nesting of arrays and objects (iterative: a deep document cannot recurse here)."""
    deepest, stack = 0, [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_event_json(
    text: str | bytes,
    *,
    fields_of: Mapping[str, tuple[str, ...]] | None = None,
    check: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """Parse and validate the JSON form of a DpEvent (see the module docstring).

    Strict: UTF-8, at most MAX_JSON_BYTES bytes, unique keys, no NaN or Infinity, integers of at
    most MAX_INT_DIGITS digits, an object or dp_accounting's positional list (its
    ``json.dumps(event.to_named_tuple())``) at the top, nested events in either form. A JSON
    number is read as the Python float dp_accounting would hold; a string such as ``"1.1"`` or
    ``"1/3"`` as the exact rational (a certdp extension: dp_accounting cannot read such a
    document). The event is then validated fully, as :func:`from_event` reads it (class names,
    fields, values, nesting and size). ``fields_of`` and ``check`` (None: FIELDS and
    :func:`from_event`) widen the classes read, for a reader of more events
    (certdp.integrations.dp_events.load_any_event).

    Contract: the parsed event in the dict form (positional lists converted), with ``from_event``
    known to accept it; else InvalidArgument (malformed, a duplicate key, an unknown or missing
    field, a bad value, a positional list of the wrong length), LimitExceeded (too large or too
    deep) or Unsupported (an event class certdp does not map), each one line.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not isinstance(data, bytes | bytearray):
        raise invalid("text", repr(text), "must be str or bytes")
    if len(data) > MAX_JSON_BYTES:
        raise LimitExceeded(f"the event JSON has {len(data)} bytes, beyond the limit of {MAX_JSON_BYTES}")
    try:
        decoded = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgument("the event JSON is not UTF-8 text") from None
    try:
        doc = json.loads(
            decoded,
            object_pairs_hook=_no_duplicates,
            parse_int=_json_int,
            parse_float=_json_float,
            parse_constant=_json_constant,
        )
    except RecursionError:  # the C parser counts its recursion: a bracket bomb stops here
        raise LimitExceeded(f"the event JSON is nested more than {2 * MAX_DEPTH + 2} levels deep") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise InvalidArgument(f"the event is not valid JSON ({exc.msg} at {where})") from None
    # an event level is an object and (for ComposedDpEvent) a list: two JSON levels per event level
    if _json_depth(doc) > 2 * MAX_DEPTH + 2:
        raise LimitExceeded(f"the event JSON is nested more than {2 * MAX_DEPTH + 2} levels deep")
    if not isinstance(doc, dict | list):
        raise InvalidArgument(f"the event JSON must be an object or a list ({_POSITIONAL}), not {type(doc).__name__}")
    doc = _normalized(doc, fields_of=FIELDS if fields_of is None else fields_of)
    (from_event if check is None else check)(doc)  # type: ignore[arg-type]
    return doc  # type: ignore[return-value]


def load_event(
    path: str | Path,
    *,
    fields_of: Mapping[str, tuple[str, ...]] | None = None,
    check: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """Read and validate a DpEvent JSON file (:func:`parse_event_json`).

    Contract: as :func:`parse_event_json`, every error prefixed ``event=PATH: ``; a file larger
    than MAX_JSON_BYTES is refused without reading it whole.
    """
    data = read_capped(path, "event", MAX_JSON_BYTES)  # regular files only: /dev/zero is refused unread
    try:
        return parse_event_json(data, fields_of=fields_of, check=check)
    except (InvalidArgument, Unsupported) as exc:
        raise type(exc)(f"event={fmt_value(str(path))}: {exc}") from None


__all__ = [
    "EVENT_TYPES",
    "event_to_dict",
    "from_event",
    "load_event",
    "pair_to_dict",
    "parse_event_json",
    "to_event",
]
