"""Registered quantities: the certdp computations a claim file may name.

Each quantity is a function of its parameters (and of the intervals of the quantities it depends
on) that returns a certified :class:`~certdp.claims.interval.Interval`; its ``uses`` names the
certdp function(s) it calls, so a claim file names the computation behind every number. Only
registered names can be called: a claim file cannot run arbitrary code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.claims.interval import Interval
from certdp.errors import InvalidArgument, fmt_value
from certdp.pairs.params import as_fraction

if TYPE_CHECKING:
    from certdp.claims.model import Ref


class Args:
    """The parameters of one computation, with its dependencies' intervals resolved."""

    def __init__(self, ref: Ref, resolved: dict[str, Interval]) -> None:
        self.ref = ref
        self._resolved = resolved

    def _raw(self, name: str, default: object) -> object:
        v = self.ref.get(name, default)
        if v is None:
            raise InvalidArgument(f"{self.ref.name}: parameter {name} is required")
        return v

    def frac(self, name: str, default: object = None) -> Fraction:
        """Contract: the exact rational value of a numeric parameter."""
        v = self._raw(name, default)
        if not isinstance(v, str):
            raise InvalidArgument(f"{self.ref.name}: {name}={fmt_value(v)} must be a number")
        return as_fraction(name, v)

    def int(self, name: str, default: object = None) -> int:
        """Contract: an exact integer parameter (InvalidArgument otherwise)."""
        v = self.frac(name, default)
        if v.denominator != 1:
            raise InvalidArgument(f"{self.ref.name}: {name}={v} must be an integer")
        return int(v)

    def text(self, name: str, default: object = None) -> str:
        """Contract: a text parameter."""
        v = self._raw(name, default)
        if not isinstance(v, str):
            raise InvalidArgument(f"{self.ref.name}: {name}={fmt_value(v)} must be text")
        return v

    def list(self, name: str) -> tuple[str, ...]:
        """Contract: a list parameter (its canonical strings)."""
        v = self._raw(name, None)
        if not isinstance(v, tuple):
            raise InvalidArgument(f"{self.ref.name}: {name}={fmt_value(v)} must be a list")
        return v  # type: ignore[return-value]

    def has(self, name: str) -> bool:
        """Contract: True when the parameter is given."""
        return self.ref.get(name) is not None

    def interval(self, name: str) -> Interval:
        """Contract: a nested quantity's certified interval, or the point interval of a number."""
        v = self._raw(name, None)
        from certdp.claims.model import Ref

        if isinstance(v, Ref):
            return self._resolved[v.key]
        return Interval.point(self.frac(name))

    def ends(self, name: str) -> tuple[Fraction, Fraction]:
        """Contract: both ends of :meth:`interval` (InvalidArgument when one is not certified)."""
        x = self.interval(name)
        if x.lower is None or x.upper is None:
            raise InvalidArgument(f"{self.ref.name}: {name} is certified on one side only ({x.text()})")
        return x.lower, x.upper

    def dep(self, ref: Ref) -> Interval:
        """Contract: the interval of an implicit dependency (declared by the quantity's ``deps``)."""
        return self._resolved[ref.key]


@dataclass(frozen=True)
class Quantity:
    """A registered computation: ``fn(args) -> Interval``; ``uses`` names the certdp function(s);
    ``params`` the accepted parameters, ``required`` those that must be given; ``deps(ref)`` lists
    implicit dependencies (computed first, possibly in another process)."""

    name: str
    fn: Callable[[Args], Interval]
    uses: str
    params: tuple[str, ...]
    required: tuple[str, ...]
    deps: Callable[[Ref], list[Ref]] | None = None
    #: parameters in which the quantity is monotone (either way, the others fixed): a rounded
    #: printed input may stand there, its range then bounded by the values at the input's two ends
    monotone: tuple[str, ...] = ()


QUANTITIES: dict[str, Quantity] = {}


def quantity(
    name: str,
    uses: str,
    params: tuple[str, ...],
    required: tuple[str, ...] | None = None,
    deps: Callable[[Ref], list[Ref]] | None = None,
    monotone: tuple[str, ...] = (),
) -> Callable[[Callable[[Args], Interval]], Callable[[Args], Interval]]:
    """Register ``fn`` under ``name`` (unique). Contract: the registry maps name to the function;
    ``monotone`` lists the parameters the quantity is monotone in (the proof beside each use)."""

    def wrap(fn: Callable[[Args], Interval]) -> Callable[[Args], Interval]:
        if name in QUANTITIES:
            raise ValueError(f"quantity {name} is registered twice")
        QUANTITIES[name] = Quantity(name, fn, uses, params, params if required is None else required, deps, monotone)
        return fn

    return wrap


def all_deps(ref: Ref) -> list[Ref]:
    """Contract: the nested and the implicit dependencies of ``ref`` (one level)."""
    q = QUANTITIES[ref.name]
    return ref.deps() + (q.deps(ref) if q.deps else [])


def compute(ref: Ref, resolved: dict[str, Interval]) -> Interval:
    """Evaluate ``ref`` given its dependencies' intervals. Contract: the quantity's certified interval."""
    return QUANTITIES[ref.name].fn(Args(ref, resolved))


# registration (import order is irrelevant; each module registers its own names)
from certdp.claims.quantities import (  # noqa: E402, F401
    accounting,
    acs,
    allocation,
    dpsgd,
    generic,
    information_gap,
    zcdp_gdp,
)
