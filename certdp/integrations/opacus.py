"""An Opacus-compatible accountant whose epsilon is certified: :class:`CertifiedAccountant`.

It has the interface of Opacus's ``IAccountant`` (``step``, ``get_epsilon``, ``history``,
``__len__``, ``mechanism``, ``state_dict`` / ``load_state_dict``, ``get_optimizer_hook_fn``) and a
certified ``get_noise_multiplier``, so it can stand wherever Opacus expects an accountant:

- ``register()`` adds it to Opacus's accountant registry under the name ``"certdp"``; then
  ``PrivacyEngine(accountant="certdp")`` builds one, and ``make_private_with_epsilon`` and
  ``opacus.accountants.utils.get_noise_multiplier(accountant="certdp")`` use it;
- or pass the object itself: ``engine.accountant = CertifiedAccountant()`` before ``make_private``
  (the engine attaches ``get_optimizer_hook_fn`` to the optimizer, which calls ``step`` once per
  optimizer step, and ``engine.get_epsilon(delta)`` asks the accountant). Constructing one
  registers it when Opacus is already imported, since ``make_private_with_epsilon`` looks the
  accountant up by its name (``get_noise_multiplier(accountant="certdp")``), which failed with
  Opacus's "Unexpected accounting mechanism: certdp" before.

Nothing here imports torch or Opacus: the class is duck-typed, and only :func:`register` imports
``opacus.accountants`` (which imports torch when Opacus is installed normally).

The history has Opacus's format, ``[(noise_multiplier, sample_rate, steps), ...]``, with runs of
equal steps merged, so state dicts move between this accountant and Opacus's own. Each run is
``steps`` Poisson-subsampled Gaussian steps (certdp.pairs.SubsampledGaussian, add/remove
neighbours by default); the history is their composition, with sigma and q changing between runs
(heterogeneous steps). Parameters are taken at their exact binary values.

epsilon: the PLD lattice bounds (certdp.notions.pld.pld_bounds; docs/math.md §10), both ends
proved: the upper end is a sound epsilon, and the lower end a proved violation (no smaller
epsilon holds for this history). When the lattice accountant cannot take the history (more than
its step limit, or a loss range it refuses) the accountant falls back to the RDP conversion
(certdp.notions.epsilon; docs/math.md §3), whose upper end is again sound.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from copy import deepcopy
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from certdp.calibrate import calibrate_epsilon
from certdp.calibrate.pld import calibrate_pld
from certdp.enclose import Enclosure
from certdp.errors import InvalidArgument, Unsupported, fmt_value, invalid
from certdp.notions.accountant import Route, calibration_route, default_route
from certdp.notions.accountant import epsilon as routed_epsilon
from certdp.pairs import DIRECTIONS, PrivacyPair, SubsampledGaussian, compose
from certdp.pairs.params import as_fraction, integer, real

#: The name under which :func:`register` adds the accountant to Opacus's registry.
MECHANISM = "certdp"

#: Working precision of the lattice sums (bits); the bounds' width is set by the lattice, not this.
PLD_PREC = 128

#: Results kept per accountant (one per distinct (history, delta) query).
CACHE_SIZE = 32


@dataclass(frozen=True)
class EpsilonResult:
    """A certified epsilon of an accountant's history at ``delta``.

    ``enclosure`` = [lower, upper]: the upper end is a sound epsilon; with ``via`` "pld" the lower
    end is a proved violation (delta(eps) > delta below it); with "exact" (every step a plain
    Gaussian, q = 1) both ends are the closed form's; with "rdp" it is 0 (the RDP conversion only
    bounds epsilon from above). ``fallback`` says why neither PLD nor the closed form answered
    (empty when one did; a switch at the lattice accountant's limits is also a warning);
    ``seconds`` is the wall time of the computation.
    """

    enclosure: Enclosure
    via: str
    steps: int
    delta: Fraction
    fallback: str = ""
    seconds: float = 0.0

    @property
    def epsilon_upper(self) -> float:
        """Contract: a float >= the sound epsilon (the enclosure's upper end rounded up)."""
        return self.enclosure.upper_float()

    def __repr__(self) -> str:
        return (
            f"EpsilonResult(epsilon in [{self.enclosure.lower_str(12)}, {self.enclosure.upper_str(12)}], "
            f"via={self.via}, steps={self.steps}, delta={fmt_value(self.delta)})"
        )


def _number(name: str, value: object) -> Fraction:
    """The exact value of a history number (floats at their binary value; numpy scalars too)."""
    return as_fraction(name, _unwrap(value))  # type: ignore[arg-type]


def _unwrap(value: object) -> object:
    """A numpy or torch scalar as its exact Python value; anything else as it is."""
    if hasattr(value, "item") and not isinstance(value, int | float | str | Fraction):
        return value.item()
    return value


def _stored(value: object) -> object:
    """What the history keeps: a float when the value is one (as Opacus keeps it), else the value."""
    value = _unwrap(value)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class CertifiedAccountant:
    """Opacus-compatible accountant with certified epsilon (module docstring).

    ``direction``: the neighbouring relation of each step ("both": add/remove, the default;
    "remove" or "add" for one of them, as some accountants report). ``h``: the PLD lattice
    spacing (None: certdp's default; with ``rel_width``, refined until the relative width of
    epsilon is at most it, else PrecisionExhausted; certdp.notions.pld.pld_bounds). ``via``: "pld" (the default,
    falling back to RDP when the lattice accountant refuses the history) or "rdp".

    Contract: :meth:`get_epsilon_interval` encloses the accounted epsilon (module docstring),
    and :meth:`get_epsilon` is at least its upper end, so it is a sound epsilon of the history.
    """

    def __init__(
        self, *, direction: str = "both", h: object = None, via: str = "pld", rel_width: object = None
    ) -> None:
        if direction not in DIRECTIONS:
            raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
        if via not in ("pld", "rdp"):
            raise invalid("via", via, "must be pld or rdp")
        self.direction, self.via = direction, via
        self.h = None if h is None else real("h", h, gt=0, le=1)  # type: ignore[arg-type]
        self.rel_width = None if rel_width is None else real("rel-width", rel_width, gt=0, lt=1)  # type: ignore[arg-type]
        if self.h is not None and self.rel_width is not None:
            raise InvalidArgument("give h or rel_width, not both: an explicit h skips the refinement")
        self.history: list[tuple[Any, Any, int]] = []
        self._cache: OrderedDict[tuple[object, ...], EpsilonResult] = OrderedDict()
        _register_if_loaded()

    # -- the IAccountant interface ------------------------------------------------------------

    @classmethod
    def mechanism(cls) -> str:
        """Contract: the registry name, ``"certdp"`` (Opacus checks it when loading a state dict)."""
        return MECHANISM

    def step(self, *, noise_multiplier: object, sample_rate: object) -> None:
        """Record one optimizer step (merged into the last run when sigma and q are equal).

        Contract: appends (or extends) a history run; raises InvalidArgument, before changing
        the history, for noise_multiplier <= 0 or sample_rate outside (0, 1] (NaN included).
        """
        _number_in("noise_multiplier", noise_multiplier, gt=0)
        _number_in("sample_rate", sample_rate, gt=0, le=1)
        sigma, q = _stored(noise_multiplier), _stored(sample_rate)
        if self.history and self.history[-1][0] == sigma and self.history[-1][1] == q:
            last = self.history[-1]
            self.history[-1] = (last[0], last[1], last[2] + 1)
        else:
            self.history.append((sigma, q, 1))

    def __len__(self) -> int:
        """Contract: the number of optimizer steps recorded (the sum of the runs' steps)."""
        return sum(int(n) for _, _, n in self.history)

    def get_epsilon(self, delta: object, *args: object, **kwargs: object) -> float:
        """The sound certified epsilon of the history at ``delta``, as a float (rounded up).

        Extra arguments that Opacus passes to other accountants (``eps_error``, ``alphas``, ...)
        are accepted and ignored: the certified value needs no tuning.

        Contract: a float >= the upper end of :meth:`get_epsilon_interval` (0.0 for an empty
        history), so the history is (epsilon, delta)-DP.
        """
        return self.certify(delta).epsilon_upper

    def get_epsilon_interval(self, delta: object) -> Enclosure:
        """Contract: the enclosure of :meth:`certify` (its upper end is a sound epsilon)."""
        return self.certify(delta).enclosure

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The step hook Opacus's PrivacyEngine attaches to the DP optimizer.

        Contract: the hook calls ``step(noise_multiplier=optim.noise_multiplier, sample_rate=
        sample_rate * optim.accumulated_iterations)``, exactly as Opacus's own accountants do.
        """

        def hook_fn(optim: Any) -> None:
            self.step(
                noise_multiplier=optim.noise_multiplier,
                sample_rate=sample_rate * optim.accumulated_iterations,
            )

        return hook_fn

    def state_dict(self, destination: Any = None) -> Any:
        """Contract: ``destination`` (a new OrderedDict when None) with a deep copy of the history,
        the mechanism name and the accountant's options (``certdp`` entry)."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["certdp"] = {"direction": self.direction, "via": self.via, "h": self.h, "rel_width": self.rel_width}
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a state dict from :meth:`state_dict` (or Opacus's format with mechanism "certdp").

        Contract: the history (and options) are replaced only when every entry is valid;
        otherwise InvalidArgument (a ValueError, as Opacus raises) names the problem.
        """
        if not state_dict:
            raise InvalidArgument("state_dict is empty: nothing to load into the accountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise InvalidArgument(f"state_dict has no key {key!r}: it cannot be loaded into the accountant")
        if state_dict["mechanism"] != self.mechanism():
            raise InvalidArgument(
                f"mechanism={fmt_value(state_dict['mechanism'])} must be {MECHANISM!r}: the state dict "
                "belongs to another accountant"
            )
        history = list(deepcopy(state_dict["history"]))
        _parts(history, self.direction)  # validated before anything changes
        options = state_dict.get("certdp") or {}
        if not isinstance(options, Mapping):
            raise invalid("state_dict['certdp']", options, "must be a dict of the accountant's options")
        fresh = CertifiedAccountant(
            direction=options.get("direction", self.direction),
            via=options.get("via", self.via),
            h=options.get("h", self.h),
            rel_width=options.get("rel_width", self.rel_width),
        )
        self.direction, self.via, self.h = fresh.direction, fresh.via, fresh.h
        self.rel_width = fresh.rel_width
        self.history = history
        self._cache.clear()

    # -- certified results --------------------------------------------------------------------

    def pair(self) -> PrivacyPair:
        """The privacy pair of the history: the composition of its runs.

        Contract: the Composition of ``steps`` SubsampledGaussian(q, sigma, direction) per run
        (equal runs merged); InvalidArgument naming ``history[i]`` for a malformed entry or an
        empty history.
        """
        parts = _parts(self.history, self.direction)
        if not parts:
            raise InvalidArgument("history is empty: no step has been recorded")
        return compose(parts)

    def certify(self, delta: object) -> EpsilonResult:
        """The certified epsilon of the history at ``delta`` (module docstring: PLD, else RDP).

        A float ``delta`` is read as the smaller of its binary value and its shortest decimal, so
        the epsilon holds for either reading.

        Contract: ``enclosure.upper`` is a sound epsilon of the history's composition at
        ``delta`` (pld_bounds' or epsilon's contract; docs/math.md §10 and §3); with via "pld"
        ``enclosure.lower`` is a proved violation. An empty history gives the exact [0, 0].
        InvalidArgument for delta outside (0, 1).
        """
        d = _delta(delta)
        parts = _parts(self.history, self.direction)
        steps = sum(n for _, n in parts)
        if not parts:
            return EpsilonResult(Enclosure.from_bounds(Fraction(0), Fraction(0), PLD_PREC), "none", 0, d)
        key = (tuple(parts), d, self.via, self.h, self.rel_width)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        start = time.perf_counter()
        pair = compose(parts)
        # the one rule of certdp.notions.accountant (exact for Gaussians, PLD, else RDP with a
        # warning): the CLI and certdp.epsilon choose the same way
        route = default_route(pair) if self.via == "pld" else Route("rdp", "via=rdp was asked for")
        h = self.h if route.via == "pld" else None
        rel_width = self.rel_width if route.via == "pld" else None
        res = routed_epsilon(pair, d, via=None if self.via == "pld" else "rdp", h=h, rel_width=rel_width)
        enc, via = res.enclosure, res.via
        fallback = "" if via in ("pld", "exact") else "; ".join(res.warnings) or res.reason
        for note in res.warnings:
            if note.startswith("RDP answered, not PLD"):
                warnings.warn(f"certdp: {note}", stacklevel=3)
        seconds = round(time.perf_counter() - start, 3)
        result = EpsilonResult(enc, via, steps, d, "" if via == "pld" else fallback, seconds)
        self._cache[key] = result
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return result

    @staticmethod
    def get_noise_multiplier(
        *,
        target_epsilon: object,
        target_delta: object,
        sample_rate: object,
        epochs: object = None,
        steps: object = None,
        step: object = "1e-4",
        direction: str = "both",
        **kwargs: object,
    ) -> float:
        """Certified noise multiplier for ``steps`` (or ``epochs``) Poisson-subsampled Gaussian
        steps to be (target_epsilon, target_delta)-DP: Opacus's ``get_noise_multiplier`` made
        certified. Searched on the ``step`` lattice (default 1e-4) by the PLD calibration
        (certdp.calibrate.pld.calibrate_pld), or by the RDP one beyond its step limit.

        ``epochs`` E means ceil(E/q) steps (Opacus uses int(E/q), which can count one step too
        few); ``epsilon_tolerance`` and Opacus's other tuning arguments are accepted and ignored.

        Contract: the returned float is >= the certified sigma (rounded up to a float), and the
        certified sigma's epsilon upper bound is <= target_epsilon in every direction asked for
        (calibrate_pld's or calibrate_epsilon's contract).
        """
        q = _number_in("sample_rate", sample_rate, gt=0, le=1)
        if (steps is None) == (epochs is None):
            raise InvalidArgument("give exactly one of steps and epochs")
        n = (
            integer("steps", steps, ge=1)  # type: ignore[arg-type]
            if steps is not None
            else math.ceil(_number_in("epochs", epochs, gt=0) / q)
        )
        route = calibration_route(n)
        if route.via == "rdp":
            warnings.warn(f"certdp: {route.reason}", stacklevel=2)
            sigma = calibrate_epsilon(q, n, target_epsilon, target_delta, step=step, direction=direction).sigma  # type: ignore[arg-type]
        else:
            sigma = calibrate_pld(q, n, target_epsilon, target_delta, step=step, direction=direction).sigma  # type: ignore[arg-type]
        return float_up(sigma)


def float_up(x: Fraction) -> float:
    """Contract: the smallest float >= x (x within the float range)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _delta(value: object) -> Fraction:
    """delta as the smaller of a float's binary value and its shortest decimal (1e-5 is both
    1.0000000000000000818e-5 and the 10^-5 its writer meant): the epsilon is then sound for
    either reading, as a smaller delta only raises epsilon."""
    value = _stored(value)  # a numpy scalar becomes its Python float (its repr is not a decimal)
    d = _number_in("delta", value, gt=0, lt=1)
    if isinstance(value, float):
        d = min(d, real("delta", repr(value), gt=0, lt=1))
    return d


def _number_in(name: str, value: object, **bounds: Any) -> Fraction:
    return real(name, _number(name, value), **bounds)  # type: ignore[arg-type]


def _parts(history: object, direction: str) -> list[tuple[PrivacyPair, int]]:
    """The history's runs as (pair, steps), validated entry by entry (Opacus code assigns
    ``history`` directly, so it is checked when used, not only in ``step``)."""
    if not isinstance(history, list | tuple):
        raise invalid("history", type(history).__name__, "must be a list of (noise_multiplier, sample_rate, steps)")
    parts: list[tuple[PrivacyPair, int]] = []
    for i, entry in enumerate(history):
        if not isinstance(entry, list | tuple) or len(entry) != 3:
            raise invalid(f"history[{i}]", entry, "must be a (noise_multiplier, sample_rate, steps) triple")
        sigma = _number_in(f"history[{i}].noise_multiplier", entry[0], gt=0)
        q = _number_in(f"history[{i}].sample_rate", entry[1], gt=0, le=1)
        n = integer(f"history[{i}].steps", _stored(entry[2]), ge=1)  # type: ignore[arg-type]
        parts.append((SubsampledGaussian(q=q, sigma=sigma, direction=direction), n))
    return parts


def _register_if_loaded() -> None:
    """Register with Opacus's registry when ``opacus.accountants`` is already imported (never
    importing it: that would import torch), unless some accountant already holds the name.

    ``engine.accountant = CertifiedAccountant()`` then ``make_private_with_epsilon`` asks the
    registry for ``accountant.mechanism()``; without this it raised Opacus's "Unexpected
    accounting mechanism: certdp".
    """
    accountants = sys.modules.get("opacus.accountants")
    if accountants is None or not hasattr(accountants, "register_accountant"):
        return
    try:
        accountants.register_accountant(MECHANISM, CertifiedAccountant)
    except ValueError:  # already registered (by register(), or the user's own class): keep it
        return
    if hasattr(accountants, "IAccountant"):
        accountants.IAccountant.register(CertifiedAccountant)


def register(accountants: Any = None) -> None:
    """Add :class:`CertifiedAccountant` to Opacus's accountant registry as ``"certdp"``, and
    declare it a virtual subclass of ``IAccountant`` (``isinstance`` checks then pass).

    ``accountants``: the ``opacus.accountants`` module (None: imported here, which imports torch
    when Opacus is installed normally). Registering again replaces the entry.

    Contract: afterwards ``create_accountant("certdp")`` of that module returns a
    CertifiedAccountant; Unsupported (one line, with the install command) when Opacus is
    missing or too old to have a registry.
    """
    if accountants is None:
        try:
            import opacus.accountants as accountants
        except ImportError as exc:
            raise Unsupported(f"register needs Opacus ({exc}): pip install opacus") from None
    if not hasattr(accountants, "register_accountant"):
        raise Unsupported(
            "this Opacus has no accountant registry (Opacus >= 1.5 has one): set engine.accountant = "
            "CertifiedAccountant() instead"
        )
    accountants.register_accountant(MECHANISM, CertifiedAccountant, force=True)
    accountants.IAccountant.register(CertifiedAccountant)
