"""Adapters: one per peer accountant, each an optional extra (``pip install "certdp[audit]"``).

An adapter imports its peer lazily (when it is built, never when certdp is imported), names the
missing package in one line when it is absent (PeerMissing), and answers the questions of a case
(certdp.audit.cases) with :class:`PeerValue` rows: the peer's float, what it is (which reference
it must be held against), and the wall time of the call that produced it. A peer that raises
gives a row with ``value`` NaN and the error, which the audit reports as inconclusive.
"""

from __future__ import annotations

import abc
import importlib
import importlib.metadata
import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.audit.cases import Case
from certdp.errors import InvalidArgument, Unsupported

#: Peer name -> (adapter module, the pip package that provides the peer).
PEERS: dict[str, tuple[str, str]] = {
    "dp_accounting": ("certdp.audit.adapters.dp_accounting", "dp-accounting"),
    "prv": ("certdp.audit.adapters.prv", "prv-accountant"),
    "opacus": ("certdp.audit.adapters.opacus", "opacus"),
    "autodp": ("certdp.audit.adapters.autodp", "autodp"),
    "riskcal": ("certdp.audit.adapters.riskcal", "riskcal"),
}


class PeerMissing(Unsupported):
    """A peer's package is not installed (or cannot be imported)."""


@dataclass(frozen=True)
class PeerValue:
    """One number a peer reported. ``kind`` names the reference it is held against (rdp, eps-rdp,
    eps-pld, delta-pld, sigma-rdp, sigma-pld: certdp.audit.reference); ``order`` (rdp),
    ``orders`` and ``conversion`` (eps-rdp, sigma-rdp: the peer's own orders and RDP-to-DP
    conversion, "cks" or "basic") make that reference the SAME quantity; ``seconds`` is the wall
    time of the peer call; ``error`` is set (and value NaN) when the peer raised."""

    peer: str
    method: str
    kind: str
    value: float
    seconds: float
    order: Fraction | None = None
    orders: tuple[Fraction, ...] = field(default=())
    conversion: str = ""
    error: str = ""
    note: str = ""
    #: an estimate by design (dp_accounting's optimistic PLD, the PRV point estimate), not a
    #: guarantee: its verdict is reported, but an UNSOUND estimate does not fail the audit
    estimate: bool = False


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def call_peer(fn: Callable[[], float]) -> tuple[float, float, str, str]:
    """Run one peer call: (value, seconds, error, note). The peer's warnings and log messages are
    captured (not printed) and the first one becomes the note; an exception becomes ``error``.

    Contract: never raises for a peer failure (a KeyboardInterrupt still propagates); value is NaN
    exactly when error is set."""
    handler = _Capture()
    root = logging.getLogger()
    root.addHandler(handler)
    absl = logging.getLogger("absl")
    absl.addHandler(handler)
    absl_propagate = absl.propagate
    absl.propagate = False
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value, error = float(fn()), ""
            except Exception as exc:  # a peer's own failure is a finding, not a certdp error
                value, error = math.nan, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        seconds = time.perf_counter() - start
        root.removeHandler(handler)
        absl.removeHandler(handler)
        absl.propagate = absl_propagate
    notes = [str(w.message).splitlines()[0] for w in caught] + handler.messages
    note = notes[0][:200] if notes else ""
    return value, seconds, error, note


class Adapter(abc.ABC):
    """Base of the peer adapters. Subclasses set ``name`` and ``package`` (the pip and
    importlib.metadata name), import the peer in ``__init__`` (PeerMissing when absent), and
    implement :meth:`evaluate`.

    Contract: ``evaluate(case)`` returns PeerValue rows only (peer failures are rows, not raises).
    """

    name = ""
    package = ""
    #: how the peer was loaded (Opacus: with or without torch)
    path = "import"

    def version(self) -> str:
        """Contract: the installed distribution's version string (importlib.metadata)."""
        try:
            return importlib.metadata.version(self.package)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"

    @abc.abstractmethod
    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the peer's answers to ``case``'s checks (each subclass lists them)."""

    def value(self, method: str, kind: str, fn: Callable[[], float], **extra: object) -> PeerValue:
        """Contract: a PeerValue from one :func:`call_peer` of ``fn``."""
        value, seconds, error, note = call_peer(fn)
        given = str(extra.pop("note", ""))
        note = "; ".join(n for n in (given, note) if n)
        return PeerValue(self.name, method, kind, value, seconds, error=error, note=note, **extra)  # type: ignore[arg-type]


def require(module: str, peer: str, package: str) -> object:
    """Import ``module`` for ``peer``, or raise PeerMissing naming the pip package (one line).

    Contract: the imported module, or PeerMissing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerMissing(
            f"peer={peer} needs the package {package} ({exc.__class__.__name__}: {exc}); "
            f'install it with: pip install "certdp[audit]" (or pip install {package})'
        ) from None


def load_adapter(name: str) -> Adapter:
    """The adapter of peer ``name`` (one of PEERS), its peer imported.

    Contract: an Adapter; InvalidArgument for an unknown name, PeerMissing when the peer's package
    cannot be imported."""
    if name not in PEERS:
        raise InvalidArgument(f"peer={name!r} must be one of {', '.join(PEERS)}")
    module, _ = PEERS[name]
    return importlib.import_module(module).ADAPTER()  # type: ignore[no-any-return]


def exact_orders(values: object) -> tuple[Fraction, ...]:
    """Contract: a peer's float orders as exact rationals of the decimals they print (repr), so that
    1.1 is 11/10 as the peer's author meant, within the verdict's float slack of the binary value."""
    return tuple(Fraction(repr(float(v))) for v in values)  # type: ignore[attr-defined]
