"""Every DpEvent of dp_accounting 0.6, certified or refused with a reason (docs/integrations.md).

:func:`account_event` takes a live ``DpEvent`` (or its dict form) and a neighbouring relation, as
dp_accounting's accountants do (``add_or_remove_one``, their default; ``replace_one``;
``replace_special``), and answers eps(delta) or delta(eps):

* **certified**: [lower, upper] contains the true value of the event under that relation;
  ``sides`` says whether both ends are proved (``two-sided``: the PLD lattice or a closed form on
  a tight pair) or only the upper end (``upper``: an RDP conversion, or a pair that only
  dominates). Pairs with two directions (Poisson sampling, sampling without replacement, the
  mixture of Gaussians, randomized response under replace_special) are split into their
  ``remove`` and ``add`` compositions, each accounted by certdp's one rule
  (certdp.notions.accountant), and the answer is the larger of each end.
* **infinite**: the event contains a ``NonPrivateDpEvent`` (or a noise parameter of 0): eps = inf
  is the stated answer (no finite eps holds for every such mechanism); delta(eps) is at most 1.
* **refused**: :class:`certdp.errors.Unsupported` with one line saying what certdp would need.

The pair of each event and its proof: docs/math.md §12. Conventions: under ``replace_one`` a
Gaussian or Laplace event's noise multiplier is relative to one record's norm bound C, so a
replacement moves the sum by up to 2C (dp_accounting's PLD accountant reads the Gaussian event
the same way; its RDP accountant reads a ``SampledWithoutReplacementDpEvent``'s noise
multiplier relative to the replacement sensitivity 2C, i.e. as half of certdp's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, fmt_value, invalid
from certdp.integrations.dp_accounting import MAX_COUNT, MAX_DEPTH, _Budget, _int, _real, _renamed
from certdp.pairs import (
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PrivacyPair,
    SubsampledGaussian,
    ZcdpBound,
    compose,
)
from certdp.pairs.gaussian_shifts import GaussianShifts
from certdp.pairs.params import real
from certdp.pairs.randomized_response import RandomizedResponse
from certdp.pairs.subsampled_laplace import SubsampledLaplace
from certdp.pairs.symmetrized import Symmetrized

#: the additive-noise events: (pair class, its noise parameter's name)
_ADDITIVE = {"GaussianDpEvent": (Gaussian, "sigma"), "LaplaceDpEvent": (Laplace, "scale")}

RELATIONS = ("add_or_remove_one", "replace_one", "replace_special")

#: Fields of every DpEvent class of dp_accounting 0.6, in its order.
ALL_FIELDS: dict[str, tuple[str, ...]] = {
    "NoOpDpEvent": (),
    "NonPrivateDpEvent": (),
    "UnsupportedDpEvent": (),
    "GaussianDpEvent": ("noise_multiplier",),
    "LaplaceDpEvent": ("noise_multiplier",),
    "DiscreteLaplaceDpEvent": ("noise_parameter", "sensitivity"),
    "RandomizedResponseDpEvent": ("noise_parameter", "num_buckets"),
    "MixtureOfGaussiansDpEvent": ("standard_deviation", "sensitivities", "sampling_probs"),
    "ZCDpEvent": ("rho", "xi"),
    "PoissonSampledDpEvent": ("sampling_probability", "event"),
    "SampledWithoutReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SampledWithReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SingleEpochTreeAggregationDpEvent": ("noise_multiplier", "step_counts"),
    "RepeatAndSelectDpEvent": ("event", "mean", "shape"),
    "TruncatedSubsampledGaussianDpEvent": (
        "dataset_size",
        "sampling_probability",
        "truncated_batch_size",
        "noise_multiplier",
    ),
    "SelfComposedDpEvent": ("event", "count"),
    "ComposedDpEvent": ("events",),
}

#: Why an event class is refused (whatever its parameters): what certdp would need.
REFUSED: dict[str, str] = {
    "UnsupportedDpEvent": "UnsupportedDpEvent is dp_accounting's placeholder for a mechanism without a DP "
    "description: certdp would need the mechanism's dominating pair",
    "RepeatAndSelectDpEvent": "RepeatAndSelectDpEvent: certdp would need the Renyi bound of Papernot and Steinke "
    "(arXiv:2110.03620) as a certified RDP curve; no dominating pair with a loss distribution is known",
    "TruncatedSubsampledGaussianDpEvent": "TruncatedSubsampledGaussianDpEvent: certdp would need the dominating "
    "pair of truncated Poisson sampling (arXiv:2508.15089) with a certified loss distribution",
}

#: The cut label mass of sampling with replacement (over all steps) may be at most delta/TAIL_SHARE
#: for an eps query, and is at most CUT_DELTA for a delta query (it is added to the upper end);
#: per step it is at most MAX_CUT.
TAIL_SHARE = 2**10
CUT_DELTA = Fraction(1, 2**50)
MAX_CUT = Fraction(1, 2**40)

#: Largest dataset size of a sampled event (the rate b/n is exact; this only bounds the integers).
MAX_DATASET = 10**15

#: How far from 1 the float weights of a MixtureOfGaussiansDpEvent may sum (they are then divided
#: by their exact sum: 0.81 + 0.18 + 0.01 is not exactly 1 in binary).
WEIGHT_SLACK = Fraction(1, 2**40)


def relation_name(relation: object) -> str:
    """The relation as one of RELATIONS (dp_accounting's NeighboringRelation enum is read by name).

    Contract: a member of RELATIONS, else InvalidArgument naming the value.
    """
    name = getattr(relation, "name", relation)
    text = str(name).lower() if isinstance(name, str) else None
    if text not in RELATIONS:
        raise invalid("relation", relation, f"must be one of {', '.join(RELATIONS)}")
    return text


@dataclass
class _Walk:
    relation: str
    #: the largest cut label mass per step of sampling with replacement (certdp.pairs.with_replacement)
    cut: Fraction = Fraction(1, 2**64)
    budget: _Budget = field(default_factory=_Budget)
    nonprivate: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _read(obj: object) -> tuple[str, Callable[[str], Any], str]:
    """(class name, field getter, kind) of a live event or its dict form."""
    if isinstance(obj, Mapping):
        doc = dict(obj)
        name = doc.get("class_name")
        if not isinstance(name, str):
            raise invalid("class_name", repr(name), "must be a DpEvent class name")
        if name not in ALL_FIELDS:
            raise Unsupported(f"{fmt_value(name)} is not a DpEvent of dp_accounting 0.6")
        for f in ALL_FIELDS[name]:
            if f not in doc and not (name == "ZCDpEvent" and f == "xi"):
                raise InvalidArgument(f"{name}.{f} is missing")
        return name, lambda f: doc.get(f, 0.0), "json"
    name = type(obj).__name__
    if name not in ALL_FIELDS:
        if name.endswith("DpEvent") or type(obj).__module__.startswith("dp_accounting"):
            raise Unsupported(f"{name} is not a DpEvent of dp_accounting 0.6 that certdp knows")
        raise invalid("event", repr(obj), "must be a dp_accounting DpEvent or its dict form")
    declared = getattr(type(obj), "__attrs_attrs__", None)
    if declared is not None and tuple(a.name for a in declared) != ALL_FIELDS[name]:
        raise Unsupported(f"{name} has fields other than dp_accounting 0.6's: this version is not supported")
    return name, lambda f: getattr(obj, f), "live"


def _floats(name: str, value: object, kind: str) -> list[Fraction]:
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__len__"):
        raise invalid(name, repr(value), "must be a list of numbers")
    if len(value) > 1000:  # type: ignore[arg-type]
        raise LimitExceeded(f"{name} has {len(value)} items, more than 1000")  # type: ignore[arg-type]
    return [_real(f"{name}[{i}]", v, kind) for i, v in enumerate(value)]  # type: ignore[arg-type]


@dataclass(frozen=True)
class Sided:
    """A part whose upper and lower ends come from two pairs (sampling with replacement,
    certdp.pairs.with_replacement): ``upper`` dominates it up to ``tail`` added to delta per
    step; ``lower`` is dominated by the pair of an extremal dataset."""

    upper: PrivacyPair
    lower: PrivacyPair
    tail: Fraction


Items = list[tuple["PrivacyPair | Sided", int]]


def _walk(obj: object, depth: int, mult: int, w: _Walk) -> Items:
    """The (pair, count) items of an event under w.relation; NonPrivate and zero noise are noted
    in w.nonprivate; refusals raise Unsupported (one line)."""
    if depth > MAX_DEPTH:
        raise LimitExceeded(f"the event is nested more than {MAX_DEPTH} levels deep")
    w.budget.visit()
    name, get, kind = _read(obj)
    rel = w.relation
    if name in REFUSED:
        raise Unsupported(REFUSED[name])
    if name == "NoOpDpEvent":
        return []
    if name == "NonPrivateDpEvent":
        w.nonprivate.append("NonPrivateDpEvent")
        return []
    if name == "SelfComposedDpEvent":
        count = _int(f"{name}.count", get("count"), kind, ge=0, le=MAX_COUNT)
        if mult * count > MAX_COUNT:
            raise LimitExceeded(f"nested counts multiply to {fmt_value(mult * count)}, beyond the limit {MAX_COUNT}")
        return [] if count == 0 else _walk(get("event"), depth + 1, mult * count, w)
    if name == "ComposedDpEvent":
        events = get("events")
        if isinstance(events, str | bytes | Mapping) or not isinstance(events, list | tuple):
            raise invalid(f"{name}.events", repr(events), "must be a list of events")
        items: Items = []
        for e in events:
            items += _walk(e, depth + 1, mult, w)
        return items
    if name in _ADDITIVE:  # Gaussian or Laplace noise of multiplier s (0: no noise, not private)
        pair_of, param = _ADDITIVE[name]
        s = _real(f"{name}.noise_multiplier", get("noise_multiplier"), kind, ge=0)
        if s == 0:
            w.nonprivate.append(f"{name}.noise_multiplier=0")
            return []
        shift = 2 if rel == "replace_one" else 1
        return [(_renamed(lambda: pair_of(s, shift), {param: f"{name}.noise_multiplier"}), mult)]
    if name == "DiscreteLaplaceDpEvent":
        a = _real(f"{name}.noise_parameter", get("noise_parameter"), kind, ge=0)
        k = _int(f"{name}.sensitivity", get("sensitivity"), kind, ge=1, le=MAX_COUNT)
        if a == 0:
            w.nonprivate.append(f"{name}.noise_parameter=0")
            return []
        k = 2 * k if rel == "replace_one" else k
        names = {"a": f"{name}.noise_parameter", "shift": f"{name}.sensitivity"}
        return [(_renamed(lambda: DiscreteLaplace(a, k), names), mult)]
    if name == "ZCDpEvent":
        rho = _real(f"{name}.rho", get("rho"), kind, ge=0)
        xi = _real(f"{name}.xi", get("xi"), kind, ge=0)
        if rho == 0 and xi == 0:
            return []
        return [(_renamed(lambda: ZcdpBound(rho, xi), {"rho": f"{name}.rho", "xi": f"{name}.xi"}), mult)]
    if name == "RandomizedResponseDpEvent":
        p = _real(f"{name}.noise_parameter", get("noise_parameter"), kind, ge=0, le=1)
        k = _int(f"{name}.num_buckets", get("num_buckets"), kind, ge=1, le=MAX_COUNT)
        if rel == "add_or_remove_one":
            raise Unsupported(
                f"{name} under add_or_remove_one: randomized response has no absent input; certdp (as dp_accounting) "
                "needs relation replace_one or replace_special"
            )
        if k == 1:  # one bucket: the output is constant
            return []
        if p == 0:
            w.nonprivate.append(f"{name}.noise_parameter=0")
            return []
        names = {"noise": f"{name}.noise_parameter", "buckets": f"{name}.num_buckets"}
        return [(_renamed(lambda: RandomizedResponse(p, k, rel), names), mult)]
    if name == "MixtureOfGaussiansDpEvent":
        if rel == "replace_one":
            raise Unsupported(
                f"{name} under replace_one: the event describes one neighbour against the noise alone; certdp "
                "(as dp_accounting) needs add_or_remove_one or replace_special"
            )
        s = _real(f"{name}.standard_deviation", get("standard_deviation"), kind, ge=0)
        cs = _floats(f"{name}.sensitivities", get("sensitivities"), kind)
        ps = _floats(f"{name}.sampling_probs", get("sampling_probs"), kind)
        if len(cs) != len(ps) or not cs:
            raise InvalidArgument(
                f"{name}.sensitivities has {len(cs)} items and sampling_probs {len(ps)}: they must be equal and > 0"
            )
        if any(c < 0 for c in cs):
            raise Unsupported(
                f"{name}: a negative sensitivity; certdp needs sensitivities >= 0 (norms: Choquette-Choo, Ganesh, "
                "Steinke and Thakurta, arXiv:2310.15526, Cor. 4.7), where the loss is monotone"
            )
        if any(p < 0 for p in ps) or abs(sum(ps) - 1) > WEIGHT_SLACK:
            raise invalid(f"{name}.sampling_probs", f"sum {float(sum(ps))!r}", "must be >= 0 and sum to 1")
        if all(c == 0 or p == 0 for c, p in zip(cs, ps, strict=True)):
            return []  # the neighbour's output has the noise's law
        if s == 0:
            w.nonprivate.append(f"{name}.standard_deviation=0")
            return []
        total = sum(ps)
        if total != 1:
            w.notes.append(f"{name}: sampling_probs divided by their exact sum {float(total)!r}")
        weights = tuple(p / total for p in ps)
        return [
            (_renamed(lambda: GaussianShifts(s, tuple(cs), weights), {"sigma": f"{name}.standard_deviation"}), mult)
        ]
    if name == "PoissonSampledDpEvent":
        q = _real(f"{name}.sampling_probability", get("sampling_probability"), kind, ge=0, le=1)
        if rel == "replace_one":
            raise Unsupported(
                f"{name} under replace_one: certdp would need a proved dominating pair of Poisson sampling for "
                "substitution; use add_or_remove_one"
            )
        return _sampled(name, q, get("event"), depth, mult, w, halve=False)
    if name == "SampledWithoutReplacementDpEvent":
        n = _int(f"{name}.source_dataset_size", get("source_dataset_size"), kind, ge=1, le=MAX_DATASET)
        b = _int(f"{name}.sample_size", get("sample_size"), kind, ge=0, le=MAX_DATASET)
        if b > n:
            raise invalid(f"{name}.sample_size", b, f"must be <= source_dataset_size={n}")
        if rel != "replace_one":
            raise Unsupported(
                f"{name} under {rel}: a fixed batch of a dataset of public size n is defined for replace_one "
                "(as in dp_accounting)"
            )
        note = (
            f"{name}: a replacement moves the sum by up to 2C, C one record's norm bound (the noise "
            "multiplier is relative to C, as dp_accounting's PLD accountant reads it; its RDP accountant reads "
            "it relative to 2C, i.e. as half of certdp's)"
        )
        if note not in w.notes:
            w.notes.append(note)
        return _sampled(name, Fraction(b, n), get("event"), depth, mult, w, halve=True)
    if name == "SampledWithReplacementDpEvent":
        return _with_replacement(name, get, kind, depth, mult, w)
    if name == "SingleEpochTreeAggregationDpEvent":
        if rel == "replace_one":
            raise Unsupported(
                f"{name} under replace_one: certdp (as dp_accounting) needs replace_special (or add_or_remove_one)"
            )
        s = _real(f"{name}.noise_multiplier", get("noise_multiplier"), kind, ge=0)
        raw = get("step_counts")
        counts = raw if isinstance(raw, list | tuple) else [raw]
        if not counts:
            raise InvalidArgument(f"{name}.step_counts is empty")
        steps = [_int(f"{name}.step_counts", c, kind, ge=0, le=MAX_COUNT) for c in counts]
        depth_nodes = max(steps).bit_length()  # ceil(log2(T + 1)): the nodes above a leaf
        if depth_nodes == 0:
            return []
        if s == 0:
            w.nonprivate.append(f"{name}.noise_multiplier=0")
            return []
        # the record's contribution v (norm <= 1) enters D nodes, each with N(0, s^2) noise: the
        # Gaussian pair of shift sqrt(D), i.e. D Gaussians of shift 1 composed (docs/math.md §12.5)
        return [(_renamed(lambda: Gaussian(s), {"sigma": f"{name}.noise_multiplier"}), mult * depth_nodes)]
    raise Unsupported(f"{name} is not supported by certdp")  # pragma: no cover - ALL_FIELDS is exhaustive


def _with_replacement(name: str, get: Callable[[str], Any], kind: str, depth: int, mult: int, w: _Walk) -> Items:
    """The Sided item of a sampled-with-replacement Gaussian or Laplace event (docs/math.md §12.6)."""
    from certdp.pairs.with_replacement import with_replacement

    n = _int(f"{name}.source_dataset_size", get("source_dataset_size"), kind, ge=1, le=MAX_DATASET)
    b = _int(f"{name}.sample_size", get("sample_size"), kind, ge=0, le=MAX_DATASET)
    if w.relation != "replace_one":
        raise Unsupported(
            f"{name} under {w.relation}: a batch drawn from a dataset of public size n is defined for replace_one "
            "(as sampling without replacement)"
        )
    noisy = _sampled_noise(name, get("event"), b == 0, w, "sampling with replacement")
    if noisy is None:
        return []
    inner_name, field_name, s = noisy
    noise = "gaussian" if inner_name == "GaussianDpEvent" else "laplace"
    renames = {"sigma": field_name, "scale": field_name}
    wr = _renamed(lambda: with_replacement(n, b, s, noise, w.cut), renames)
    note = (
        f"{name}: a record enters a batch K ~ Binomial(b, 1/n) times; the upper end reveals K (the pair of "
        "Balle, Barthe and Gaboardi, arXiv:1807.01647, with the mechanism's own group pairs), the lower end is an "
        "extremal dataset's pair: both are proved, but they are not tight (docs/math.md §12.6)"
    )
    if note not in w.notes:
        w.notes.append(note)
    # the upper pair dominates both orders at eps >= 0 only: its symmetrization dominates at every
    # order (docs/math.md §12.3, §12.6)
    return [(Sided(Symmetrized(wr.upper), wr.lower, wr.tail), mult)]


def _sampled_noise(name: str, inner: object, empty: bool, w: _Walk, what: str) -> tuple[str, str, Fraction] | None:
    """(inner class name, its noise field's name, the noise multiplier) of a sampled Gaussian or
    Laplace event; None when it releases nothing (``empty``: no record is sampled) or its noise is 0
    (noted as not private). Unsupported, naming ``what``, for any other inner event."""
    w.budget.visit()
    inner_name, get, kind = _read(inner)
    if empty:
        return None
    if inner_name not in ("GaussianDpEvent", "LaplaceDpEvent"):
        raise Unsupported(
            f"{name} of {inner_name}: certdp has the pairs of {what} for GaussianDpEvent and "
            f"LaplaceDpEvent only; it would need the pair of {inner_name} under {what}"
        )
    field_name = f"{inner_name}.noise_multiplier"
    s = _real(field_name, get("noise_multiplier"), kind, ge=0)
    if s == 0:
        w.nonprivate.append(f"{field_name}=0")
        return None
    return inner_name, field_name, s


def _sampled(name: str, q: Fraction, inner: object, depth: int, mult: int, w: _Walk, *, halve: bool) -> Items:
    """Items of a Poisson-sampled (halve False) or sampled-without-replacement (halve True: the
    replacement moves the sum by 2C, docs/math.md §12.3) Gaussian or Laplace event."""
    what = "Poisson sampling" if not halve else "sampling without replacement"
    noisy = _sampled_noise(name, inner, q == 0, w, what)
    if noisy is None:
        return []
    inner_name, field_name, s = noisy
    scale = s / 2 if halve else s
    # Poisson sampling: both orders of add or remove one. Without replacement: the remove pair
    # dominates both orders of a substitution at eps >= 0 (advanced joint convexity), so its
    # symmetrization dominates at every order (composition needs them all) and gives the upper
    # end; the remove pair itself is the extremal dataset's, the lower end (docs/math.md §12.3)
    d = "remove" if halve else "both"
    if halve and q == 1:
        # a batch of the whole dataset is no sampling: the inner mechanism under replace_one,
        # shift 2C, exactly (the symmetrized q = 1 pair's loss has atoms at its ends, where the
        # lattice's upper end went to 1: n = b = 2, Laplace 1, eps 0 gave [0.632, 1])
        pair_of, param = _ADDITIVE[inner_name]
        return [(_renamed(lambda: pair_of(s, 2), {param: field_name}), mult)]
    if inner_name == "GaussianDpEvent":
        pair = _renamed(lambda: SubsampledGaussian(q, scale, d), {"sigma": field_name, "q": f"{name}.rate"})
    else:
        pair = _renamed(lambda: SubsampledLaplace(q, scale, d), {"scale": field_name, "q": f"{name}.rate"})
    if halve:
        return [(Sided(Symmetrized(pair), pair, Fraction(0)), mult)]
    return [(pair, mult)]


def _directed(pair: PrivacyPair, direction: str) -> PrivacyPair:
    if getattr(pair, "direction", None) != "both":
        return pair
    if isinstance(pair, SubsampledGaussian):
        return SubsampledGaussian(pair.q, pair.sigma, direction)
    if isinstance(pair, RandomizedResponse) and pair.relation == "replace_one":
        return pair  # symmetric
    return pair.directed(direction)  # type: ignore[attr-defined]


def _top(results: Mapping[str, Any]) -> Fraction:
    """The largest upper end over the compositions' results (the event's upper end before any
    cut mass is added)."""
    return max(r.enclosure.upper for r in results.values())


def event_pairs(
    event: object, relation: object = "add_or_remove_one", side: str = "upper", cut: Fraction | None = None
) -> tuple[dict[str, PrivacyPair], list[str], list[str]]:
    """The compositions that certdp accounts for ``event`` under ``relation``, by direction name
    ("remove" and "add" when some part has two directions, else "pair"), with the reasons the
    event is not private (NonPrivateDpEvent, a zero noise) and notes on how it was read.
    ``side``: which pair of a :class:`Sided` part (sampling with replacement) is taken, ``upper``
    (it dominates, up to :func:`event_tail`) or ``lower`` (it is dominated); the other parts are
    the same on both sides. ``cut``: the largest cut label mass per step of those parts (None:
    2^-64).

    Contract: the largest delta curve over the returned compositions is the event's (for tight
    pairs) or above it (docs/math.md §12); an empty dict when the event releases nothing; every
    refusal is Unsupported in one line saying what certdp would need; bad values InvalidArgument
    naming the field; LimitExceeded beyond MAX_DEPTH, MAX_EVENTS or MAX_COUNT.
    """
    if side not in ("upper", "lower"):
        raise invalid("side", side, "must be upper or lower")
    w = _Walk(relation_name(relation))
    if cut is not None:
        w.cut = cut
    walked = _walk(event, 0, 1, w)
    if not walked:
        return {}, w.nonprivate, w.notes
    items = [(getattr(p, side) if isinstance(p, Sided) else p, m) for p, m in walked]
    split = any(_directed(p, "remove") is not p for p, _ in items)
    names = ("remove", "add") if split else ("pair",)
    out: dict[str, PrivacyPair] = {}
    for d in names:
        parts = [(_directed(p, d), n) for p, n in items] if split else items
        out[d] = parts[0][0] if len(parts) == 1 and parts[0][1] == 1 else compose(parts)
    return out, w.nonprivate, w.notes


def event_tail(
    event: object, relation: object = "add_or_remove_one", cut: Fraction | None = None
) -> tuple[Fraction, int]:
    """(the total tail of the event's Sided parts, each per-step tail times its count; the number
    of their steps): the upper compositions of :func:`event_pairs` (same ``cut``) dominate the
    event up to this much added to delta (certdp.pairs.with_replacement).

    Contract: exact; (0, 0) for an event without sampling with replacement."""
    w = _Walk(relation_name(relation))
    if cut is not None:
        w.cut = cut
    walked = _walk(event, 0, 1, w)
    sided = [(p, m) for p, m in walked if isinstance(p, Sided)]
    return sum((p.tail * m for p, m in sided), Fraction(0)), sum(m for _, m in sided)


def load_any_event(path: str | Path, relation: object = "add_or_remove_one") -> dict[str, Any]:
    """Read a DpEvent JSON file of any dp_accounting 0.6 class (:data:`ALL_FIELDS`), in the dict or
    positional form certdp.integrations.dp_accounting.parse_event_json reads (same strict JSON and
    size limits), and check that certdp accounts for it under ``relation``.

    Contract: the event's dict form, which :func:`event_pairs` (hence :func:`account_event`)
    accepts under ``relation``; else one line prefixed ``event=PATH: `` (InvalidArgument for a
    malformed file or value, Unsupported with the refusal's reason, LimitExceeded for size).
    """
    from certdp.integrations.dp_accounting import load_event

    relation_name(relation)  # a bad relation is named before the file is read
    return load_event(path, fields_of=ALL_FIELDS, check=lambda doc: event_pairs(doc, relation))


@dataclass(frozen=True)
class EventAnswer:
    """certdp's answer for one DpEvent (module docstring).

    ``status``: certified, infinite or nothing (the event releases nothing: eps = delta = 0).
    ``lower``/``upper``: the enclosure's ends (exact; math.inf for an infinite eps; lower None when
    no lower end is proved). ``sides``: two-sided or upper. ``reason``: one line.
    """

    quantity: str
    status: str
    lower: Fraction | float | None
    upper: Fraction | float
    sides: str
    reason: str
    directions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def account_event(
    event: object,
    *,
    delta: object = None,
    eps: object = None,
    relation: object = "add_or_remove_one",
    rel_width: object = None,
) -> EventAnswer:
    """eps(delta) (or delta(eps)) of a dp_accounting DpEvent under ``relation``, certified or refused.

    Contract: for status certified, lower <= the event's true value <= upper (lower None: not
    proved); both ends proved when sides is two-sided; infinite for a non-private event (eps =
    inf; delta <= 1); nothing (0, 0) when it releases nothing. Refusals: Unsupported, one line
    (module docstring; the table in docs/integrations.md); proofs in docs/math.md §12 and §10.
    """
    from certdp.notions.accountant import delta as delta_of
    from certdp.notions.accountant import epsilon as epsilon_of

    if (delta is None) == (eps is None):
        raise InvalidArgument("give exactly one of delta and eps")
    quantity = "epsilon" if eps is None else "delta"
    comps, nonprivate, notes = event_pairs(event, relation)
    if nonprivate:
        why = f"not differentially private ({nonprivate[0]})"
        if quantity == "epsilon":
            return EventAnswer(quantity, "infinite", math.inf, math.inf, "stated", f"eps = inf: {why}")
        return EventAnswer(quantity, "infinite", None, Fraction(1), "upper", f"delta <= 1 only: {why}")
    if not comps:
        return EventAnswer(quantity, "nothing", Fraction(0), Fraction(0), "two-sided", "the event releases nothing")
    target = real("delta", delta, gt=0, lt=1) if quantity == "epsilon" else None
    _, sided = event_tail(event, relation)
    tail = Fraction(0)

    def upper_results(pairs: dict[str, PrivacyPair], tail: Fraction) -> dict[str, Any]:
        if quantity == "epsilon":
            assert target is not None
            return {n: epsilon_of(p, target - tail, rel_width=rel_width) for n, p in pairs.items()}  # type: ignore[arg-type]
        return {n: delta_of(p, eps, rel_width=rel_width) for n, p in pairs.items()}  # type: ignore[arg-type]

    if sided:
        # sampling with replacement: the upper ends from the dominating compositions (delta + the
        # cut mass), the lower ends from the dominated ones (certdp.pairs.with_replacement). The
        # cut per step: a share of delta over the steps (eps queries); for delta queries first
        # MAX_CUT per step, kept when the upper end is at least TAIL_SHARE times the cut mass, else
        # CUT_DELTA in all (more labels: a larger lattice, refused at small noise, when the coarser
        # cut's sound answer is kept). Fewer labels keep the lattice small.
        budgets = [target / TAIL_SHARE] if target is not None else [MAX_CUT * sided, CUT_DELTA]
        results: dict[str, Any] | None = None
        for budget in budgets:
            cut = min(budget / sided, MAX_CUT)
            cut_tail, _ = event_tail(event, relation, cut)
            if target is not None and cut_tail * TAIL_SHARE > target:
                raise LimitExceeded(
                    f"delta={fmt_value(delta)}: the cut label mass of sampling with replacement ({float(cut_tail):.3g} "
                    f"over all steps) is above delta/{TAIL_SHARE}; certdp needs a larger delta here"
                )
            try:
                found = upper_results(event_pairs(event, relation, "upper", cut)[0], cut_tail)
            except (LimitExceeded, Unsupported, PrecisionExhausted):
                if results is None:
                    raise
                notes.append(
                    f"the cut label mass {float(tail):.3g} is kept in the upper end: a smaller cut needs more labels, "
                    "beyond the lattice's limits"
                )
                break
            # both cuts give sound upper ends (the pair's delta plus its cut mass): keep the smaller
            if results is None or _top(found) + cut_tail < _top(results) + tail:
                results, tail = found, cut_tail
            if quantity == "epsilon" or _top(found) >= TAIL_SHARE * cut_tail:
                break
        assert results is not None
    else:
        results = upper_results(comps, tail)
    low_comps = event_pairs(event, relation, "lower")[0] if sided else comps
    lowers, uppers, one_sided, upper_routes = [], [], [], []
    for name in comps:
        res = results[name]
        low = res
        if sided:
            # the lower end is optional: a lower pair the accountant cannot take leaves 0, said so
            try:
                if quantity == "epsilon":
                    low = epsilon_of(low_comps[name], target, rel_width=rel_width)  # type: ignore[arg-type]
                else:
                    low = delta_of(low_comps[name], eps, rel_width=rel_width)  # type: ignore[arg-type]
            except (LimitExceeded, Unsupported, PrecisionExhausted) as exc:
                low = None
                one_sided.append(f"{name}: no lower end (the extremal dataset's pair: {str(exc).split(';')[0]})")
        lowers.append(Fraction(0) if low is None else low.enclosure.lower)
        uppers.append(res.enclosure.upper + (tail if quantity == "delta" else 0))
        # the lower end is proved when its own result is two-sided (for a Sided part: the lower pair's)
        if low is not None and low.via not in ("exact", "pld"):
            one_sided.append(f"{name}: {low.via} ({low.lower_from})")
        if sided and res.via not in ("exact", "pld"):
            upper_routes.append(f"{name}: the upper end by the {res.via} conversion of the dominating pair")
    upper = max(uppers)
    if quantity == "delta" and upper > 1:  # delta <= 1 always: a lattice bound above it says nothing more
        upper = Fraction(1)
    sides = "two-sided" if not one_sided else "upper"
    if one_sided:
        reason = "; ".join(one_sided + upper_routes)
    elif sided:
        revealed = any(n.startswith("SampledWithReplacementDpEvent") for n in notes)
        reason = (
            "PLD lattice: the upper end on a symmetric pair that dominates at every order"
            + (" (with replacement: of the pair that reveals the record's count in the batch)" if revealed else "")
            + ", the lower end on an extremal dataset's pair (both proved, not tight)"
        )
        if upper_routes:
            reason += "; " + "; ".join(upper_routes)
    else:
        reason = "PLD lattice / closed form on tight pairs"
    return EventAnswer(quantity, "certified", max(lowers), upper, sides, reason, tuple(comps), tuple(notes))


__all__ = [
    "ALL_FIELDS",
    "REFUSED",
    "RELATIONS",
    "EventAnswer",
    "Sided",
    "account_event",
    "event_pairs",
    "event_tail",
    "load_any_event",
    "relation_name",
]
