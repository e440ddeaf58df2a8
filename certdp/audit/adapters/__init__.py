"""Adapters: one per peer accountant, each an optional extra (``pip install "certdp[audit]"``).

An adapter imports its peer lazily (when it is built, never when certdp is imported), names the
missing package in one line when it is absent (PeerMissing), and answers the questions of a case
(certdp.audit.cases) with :class:`PeerValue` rows: the peer's float, what it is (which reference
it must be held against), and the wall time of the call that produced it. A peer that raises
gives a row with ``value`` NaN and the error, which the audit reports as inconclusive.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import importlib.metadata
import inspect
import io
import logging
import math
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

from certdp.audit.cases import Case
from certdp.errors import BudgetExhausted, InvalidArgument, Unsupported

#: Peer name -> (adapter module, the pip package that provides the peer).
PEERS: dict[str, tuple[str, str]] = {
    "dp_accounting": ("certdp.audit.adapters.dp_accounting", "dp-accounting"),
    "prv": ("certdp.audit.adapters.prv", "prv-accountant"),
    "opacus": ("certdp.audit.adapters.opacus", "opacus"),
    "autodp": ("certdp.audit.adapters.autodp", "autodp"),
    "riskcal": ("certdp.audit.adapters.riskcal", "riskcal"),
    "pld_accounting": ("certdp.audit.adapters.pld_accounting", "pld-accounting"),
    "random_allocation": ("certdp.audit.adapters.random_allocation", "random-allocation"),
}


class PeerMissing(Unsupported):
    """A peer's package is not installed (or cannot be imported)."""


@dataclass(frozen=True)
class PeerValue:
    """One number a peer reported. ``kind`` names the reference it is held against (rdp, eps-rdp,
    eps-pld, delta-pld, sigma-rdp, sigma-pld, eps-allocation: certdp.audit.reference); ``order`` (rdp),
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
    #: an estimate by design (dp_accounting's optimistic PLD, the PRV point estimate, Opacus's GDP
    #: accountant), not a guarantee: below the truth it is judged ``estimate``, which does not fail
    #: the audit
    estimate: bool = False
    #: the peer call that produced the value: {"function": name, "args": {...}, "defaults": {...}}
    #: (:meth:`Adapter.replay` runs it again)
    call: dict[str, object] | None = None
    #: what the peer promises: "upper" (value >= the truth: every accountant's guarantee) or
    #: "lower" (value <= the truth: the lower end of a peer's two-sided band), judged mirrored
    #: (certdp.audit.verdict.judge_lower)
    side: str = "upper"


#: How many call_peer calls are running (a record they capture is not counted again outside).
_calls_open = 0


class _Capture(logging.Handler):
    def __init__(self, outside_calls: bool = False) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.outside_calls = outside_calls

    def emit(self, record: logging.LogRecord) -> None:
        if self.outside_calls and _calls_open:
            return  # call_peer's own handler has it, and reports it
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _captured_logs(outside_calls: bool = False) -> Iterator[_Capture]:
    """Log records of WARNING and above, on the root logger and on absl's (whose messages would
    otherwise reach stderr through Python's last-resort handler), collected instead of printed;
    with ``outside_calls``, only those logged outside a :func:`call_peer`."""
    handler = _Capture(outside_calls)
    root = logging.getLogger()
    root.addHandler(handler)
    absl = logging.getLogger("absl")
    absl.addHandler(handler)
    absl_propagate = absl.propagate
    absl.propagate = False
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        absl.removeHandler(handler)
        absl.propagate = absl_propagate


#: Most distinct messages a PeerOutput keeps (the rest are counted under one entry).
MAX_DISTINCT_MESSAGES = 50
_OTHER = "(other messages)"


class PeerOutput:
    """What peers said while they ran (warnings, log messages, stderr lines): a count per distinct
    message (its first line, at most 200 characters)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, message: str) -> None:
        """Contract: counts one occurrence of ``message`` (its first line; blank ones are skipped;
        past MAX_DISTINCT_MESSAGES distinct messages a new one counts under "(other messages)")."""
        lines = str(message).strip().splitlines()
        if not lines or not lines[0].strip():
            return
        line = lines[0].strip()[:200]
        if line not in self.counts and len(self.counts) >= MAX_DISTINCT_MESSAGES:
            line = _OTHER
        self.counts[line] += 1

    def merge(self, other: PeerOutput, peer: str) -> None:
        """Contract: other's counts added here, each message prefixed ``peer: ``."""
        for message, n in other.counts.items():
            self.counts[f"{peer}: {message}"] += n

    @property
    def total(self) -> int:
        """Contract: the number of messages counted."""
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, int]:
        """Contract: message -> count, the most frequent first."""
        return dict(self.counts.most_common())

    def summary(self) -> str:
        """Contract: one line saying how often the peers warned and their most frequent message
        ("" when they said nothing)."""
        if not self.counts:
            return ""
        top, n = self.counts.most_common(1)[0]
        distinct = len(self.counts)
        return (
            f"peers warned {self.total} time{'s' * (self.total != 1)} ({distinct} distinct "
            f"message{'s' * (distinct != 1)}, counted under peer_warnings in --json); the most "
            f"frequent ({n}x): {top}"
        )


#: The capture_peer_output collectors open now (call_peer reports every message to each).
_COLLECTORS: list[PeerOutput] = []


@contextlib.contextmanager
def capture_peer_output() -> Iterator[PeerOutput]:
    """Collect, instead of printing, what peers say inside: the messages :func:`call_peer` captured
    (every one, not only the note), and warnings, log records and ``sys.stderr`` writes made
    outside a peer call (while an adapter imports its peer, say).

    Contract: nothing the peers warn, log or write to sys.stderr inside reaches the terminal; the
    yielded PeerOutput counts each message once per occurrence."""
    out = PeerOutput()
    stderr = io.StringIO()
    _COLLECTORS.append(out)
    try:
        with (
            _captured_logs(outside_calls=True) as handler,
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stderr(stderr),
        ):
            warnings.simplefilter("always")
            try:
                yield out
            finally:
                for w in caught:
                    out.add(str(w.message))
                for message in handler.messages:
                    out.add(message)
                for line in stderr.getvalue().splitlines():
                    out.add(line)
    finally:
        _COLLECTORS.remove(out)


def call_peer(fn: Callable[[], float]) -> tuple[float, float, str, str]:
    """Run one peer call: (value, seconds, error, note). The peer's warnings and log messages are
    captured (not printed) and the first one becomes the note (every one is counted by an open
    :func:`capture_peer_output`); an exception becomes ``error``.

    Contract: never raises for a peer failure (a KeyboardInterrupt still propagates); value is NaN
    exactly when error is set."""
    global _calls_open
    start = time.perf_counter()
    _calls_open += 1
    try:
        with _captured_logs() as handler, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value, error = float(fn()), ""
            except BudgetExhausted:  # certdp's budget ran out during the call: not the peer's failure
                raise
            except Exception as exc:  # a peer's own failure is a finding, not a certdp error
                value, error = math.nan, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        _calls_open -= 1
        seconds = time.perf_counter() - start
    notes = [str(w.message).splitlines()[0] for w in caught] + handler.messages
    for collector in _COLLECTORS:
        for message in notes:
            collector.add(message)
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

    def run(self, function: str, args: dict[str, object]) -> float:
        """Contract: the peer's value of ``function`` (a name in the adapter's :attr:`functions`)
        called with exactly ``args``; InvalidArgument naming an unknown function."""
        raise InvalidArgument(f"function={function!r} is not a recorded call of peer {self.name}")

    #: What each recorded function calls, in the peer's own API (for a reproduction outside certdp).
    API: ClassVar[dict[str, str]] = {}
    #: Parameters of a function's peer callable that the call sets under another argument name
    #: (so that they are not listed among the peer's defaults).
    SETS: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: The peer functions :meth:`run` knows: name -> the peer callable whose signature defaults
    #: complete the record (None when the call passes every argument itself); set per instance.
    functions: dict[str, Callable[..., object] | None]

    def ask(self, method: str, kind: str, function: str, args: dict[str, object], **extra: object) -> PeerValue:
        """Contract: a PeerValue from one :func:`call_peer` of ``run(function, args)``, with the call
        recorded (function, every argument passed, and the peer's defaults of the others) so that
        :meth:`replay` repeats it."""
        fn = getattr(self, "functions", {}).get(function)
        call = {
            "function": function,
            "api": type(self).API.get(function, ""),
            "args": dict(args),
            "defaults": peer_defaults(fn, {**args, **dict.fromkeys(type(self).SETS.get(function, ()))}),
        }
        return self.value(method, kind, lambda: self.run(function, dict(args)), call=call, **extra)

    def replay(self, call: dict[str, object]) -> float:
        """Contract: the value of a recorded call (PeerValue.call, or a report row's ``call``) run
        again; InvalidArgument when the record is not a call of this peer."""
        function, args = call.get("function"), call.get("args")
        if not isinstance(function, str) or not isinstance(args, dict):
            raise InvalidArgument(f"call={call!r} must hold a function name and an args object")
        return float(self.run(function, dict(args)))


def peer_defaults(fn: Callable[..., object] | None, passed: dict[str, object]) -> dict[str, str]:
    """Contract: the default of every parameter of ``fn`` that ``passed`` does not set, as repr
    strings (what the peer used for the arguments the audit left out); {} without ``fn`` or a
    signature."""
    if fn is None:
        return {}
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {
        p.name: repr(p.default) for p in params if p.default is not inspect.Parameter.empty and p.name not in passed
    }


def environment() -> dict[str, str]:
    """Contract: what a rerun must match to reproduce the peers' floats: the python, numpy and
    scipy versions, the platform and machine, and numpy's CPU features in use (SIMD paths change
    FFT roundoff)."""
    import platform

    env = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for dist in ("numpy", "scipy"):
        try:
            env[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            env[dist] = "not installed"
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features  # numpy >= 2
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features  # type: ignore[no-redef]
        except ImportError:
            features = {}
    env["numpy_cpu_features"] = " ".join(sorted(k for k, on in features.items() if on))
    return env


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
