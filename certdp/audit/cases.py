"""Audit cases: frozen, serializable descriptions of what to ask each accountant (dp_accounting's
DpEvent style: a case says *what* is asked, the adapters and references evaluate it).

Every case is a Poisson-subsampled Gaussian (DP-SGD: sampling rate ``q``, noise multiplier
``sigma``, ``steps`` compositions; q = 1 is the plain Gaussian), with the questions in ``checks``:

* ``rdp``: the Renyi divergence of the composition at each of ``orders``;
* ``eps-rdp``: epsilon at ``delta`` from each peer's RDP accountant (its own orders and conversion);
* ``eps-pld``: epsilon at ``delta`` from each peer's PLD / PRV / GDP accountant;
* ``delta-pld``: delta at ``eps`` from the same (eps = 0: the membership-attack advantage, TV);
* ``sigma``: the noise multiplier each peer calibrates to (``eps``, ``delta``) (no ``sigma`` given).

A case whose check is ``eps-allocation`` is instead a random-allocation (balls-and-bins) Gaussian:
each record is used in exactly 1 of the ``steps`` steps of each of ``epochs`` epochs, chosen
uniformly at random (Feldman and Shenfeld, arXiv:2502.08202); it asks epsilon at ``delta`` (add
and remove neighbours, the larger). It has no ``q`` and no other check.

A case file is TOML (``[[case]]`` tables) or JSON (``{"case": [...]}`` or a list); numbers may be
written as numbers or strings (``"1e-5"``), and a TOML float is read as the decimal it was
written as (0.01 is 1/100, not the binary float nearest to it).
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path

from certdp.errors import InvalidArgument, fmt_value
from certdp.fileio import read_text
from certdp.pairs.params import exact_str, integer, real

CHECKS = ("rdp", "eps-rdp", "eps-pld", "delta-pld", "sigma", "eps-allocation")
#: The check of a random-allocation case (the only check such a case may have).
ALLOCATION = "eps-allocation"
#: Orders compared by ``rdp`` when a case names none: fractional and integer, small and large.
DEFAULT_ORDERS = ("1.5", "2", "2.5", "3", "4.5", "8", "16", "32")
#: Most steps a case may compose (the RDP path handles any count; PLD references stop earlier).
MAX_CASE_STEPS = 10**9
#: Range of noise multipliers a case may give (the subsampled Gaussian pair's own domain starts at
#: 1e-4; beyond 1e6 every quantity is 0 to far below any peer's float resolution).
MIN_CASE_SIGMA = Fraction(1, 10**4)
MAX_CASE_SIGMA = Fraction(10**6)
#: Smallest delta a case may ask about (below, every peer's float delta underflows anyway).
MIN_CASE_DELTA = Fraction(1, 10**300)
#: The peers a case may name in ``peers`` (the keys of certdp.audit.adapters.PEERS).
PEER_NAMES = ("dp_accounting", "prv", "opacus", "autodp", "riskcal", "pld_accounting", "random_allocation")
#: Most orders one case may list.
MAX_CASE_ORDERS = 64
_FIELDS = {
    "id",
    "q",
    "sigma",
    "steps",
    "epochs",
    "k",
    "delta",
    "eps",
    "orders",
    "checks",
    "pld_vdi",
    "prv_eps_error",
    "peers",
    "note",
}


@dataclass(frozen=True)
class Case:
    """One audit question set about DP-SGD; every field is exact (Fraction) and validated.

    ``sigma`` is None exactly for a calibration case (checks == ("sigma",)). ``pld_vdi`` is the
    value-discretization interval asked of dp_accounting's PLD (None: its default);
    ``prv_eps_error`` the eps_error asked of the PRV accountants (Opacus, prv_accountant; None:
    0.01, Opacus's default); ``peers`` the only peers asked (empty: every peer of the run).
    ``epochs`` and ``k`` are read only by a random-allocation case (check ``eps-allocation``:
    each record in k of the ``steps`` steps of each epoch), whose ``q`` is k/steps: the chance
    that a record is used in a given step (it is not written out).
    """

    id: str
    q: Fraction
    steps: int
    checks: tuple[str, ...]
    sigma: Fraction | None = None
    delta: Fraction | None = None
    eps: Fraction | None = None
    orders: tuple[Fraction, ...] = field(default=())
    pld_vdi: Fraction | None = None
    note: str = ""
    prv_eps_error: Fraction | None = None
    peers: tuple[str, ...] = field(default=())
    epochs: int = 1
    k: int = 1

    @property
    def allocation(self) -> bool:
        """Contract: True for a random-allocation case (check ``eps-allocation``)."""
        return ALLOCATION in self.checks

    def to_dict(self) -> dict[str, object]:
        """Contract: exact decimal strings that :func:`case_from_dict` reads back to an equal Case."""
        out: dict[str, object] = {"id": self.id}
        if not self.allocation:
            out["q"] = exact_str(self.q)
        out.update(steps=self.steps, checks=list(self.checks))
        if self.allocation:
            out["epochs"] = self.epochs
            if self.k > 1:
                out["k"] = self.k
        for name in ("sigma", "delta", "eps", "pld_vdi", "prv_eps_error"):
            value = getattr(self, name)
            if value is not None:
                out[name] = exact_str(value)
        if self.orders:
            out["orders"] = [exact_str(o) for o in self.orders]
        if self.peers:
            out["peers"] = list(self.peers)
        if self.note:
            out["note"] = self.note
        return out

    def label(self) -> str:
        """Contract: a short human description (no enclosure)."""
        alloc = f"random allocation epochs={self.epochs}" + (f" k={self.k}" if self.k > 1 else "")
        parts = [alloc] if self.allocation else [f"q={exact_str(self.q)}"]
        if self.sigma is not None:
            parts.append(f"sigma={exact_str(self.sigma)}")
        parts.append(f"steps={self.steps}")
        if self.delta is not None:
            parts.append(f"delta={exact_str(self.delta)}")
        if self.eps is not None:
            parts.append(f"eps={exact_str(self.eps)}")
        return " ".join(parts)


def _number(value: object) -> object:
    # a float from TOML/JSON stands for the decimal that was written: repr is its shortest decimal
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return value


def _choices(field: str, value: object, allowed: tuple[str, ...], what: str, nonempty: bool) -> tuple[str, ...]:
    """A list field whose entries come from ``allowed``, validated, duplicates dropped in order
    (the checks and peers of a case)."""
    if isinstance(value, str) or not isinstance(value, list) or (nonempty and not value):
        kind = f"a non-empty list of {', '.join(allowed)}" if nonempty else f"a list of {what} ({', '.join(allowed)})"
        raise InvalidArgument(f"{field}={fmt_value(value)} must be {kind}")
    for item in value:
        if item not in allowed:
            raise InvalidArgument(f"{field}: {fmt_value(item)} must be one of {', '.join(allowed)}")
    return tuple(dict.fromkeys(value))


def case_from_dict(raw: object, where: str) -> Case:
    """A validated Case from one parsed table; ``where`` names it in errors (``case 3``).

    Contract: returns only cases whose fields satisfy the module docstring's rules; anything else
    raises InvalidArgument naming the case, the field and the value.
    """
    if not isinstance(raw, dict):
        raise InvalidArgument(f"{where}={fmt_value(raw)} must be a table of case fields")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise InvalidArgument(f"{where}: field {unknown[0]!r} is not a case field ({', '.join(sorted(_FIELDS))})")
    cid = raw.get("id", where.replace(" ", "-"))
    if not isinstance(cid, str) or not cid or len(cid) > 80:
        raise InvalidArgument(f"{where}: id={fmt_value(cid)} must be a non-empty string of at most 80 characters")
    name = lambda f: f"{cid}.{f}"  # noqa: E731 - error messages name the case and the field

    def opt_real(f: str, **bounds: object) -> Fraction | None:
        return None if raw.get(f) is None else real(name(f), _number(raw[f]), **bounds)  # type: ignore[arg-type]

    allocation = isinstance(raw.get("checks"), list) and ALLOCATION in raw["checks"]
    if "steps" not in raw or ("q" not in raw and not allocation):
        raise InvalidArgument(f"{where}: q and steps are required")
    steps = integer(name("steps"), _number(raw["steps"]), ge=1)  # type: ignore[arg-type]
    if steps > MAX_CASE_STEPS:
        raise InvalidArgument(f"{name('steps')}={steps} must be <= {MAX_CASE_STEPS}")
    if allocation:
        _allocation_fields(raw, name)
        epochs = integer(name("epochs"), _number(raw.get("epochs", 1)), ge=1)  # type: ignore[arg-type]
        k = integer(name("k"), _number(raw.get("k", 1)), ge=1)  # type: ignore[arg-type]
        if k > steps:
            raise InvalidArgument(f"{name('k')}={k} must be <= steps={steps}")
        q = Fraction(k, steps)  # random allocation uses a record in a given step with chance k/steps
        if steps * epochs > MAX_CASE_STEPS:
            raise InvalidArgument(f"{name('epochs')}={epochs}: steps x epochs must be <= {MAX_CASE_STEPS}")
    else:
        for only in ("epochs", "k"):
            if only in raw:
                raise InvalidArgument(f"{name(only)} is read only by a random-allocation case (check {ALLOCATION!r})")
        q = real(name("q"), _number(raw["q"]), gt=0, le=1)  # type: ignore[arg-type]
        epochs = k = 1
    sigma = opt_real("sigma", ge=MIN_CASE_SIGMA, le=MAX_CASE_SIGMA)
    delta = opt_real("delta", ge=MIN_CASE_DELTA, lt=1)
    eps = opt_real("eps", ge=0, le=10**4)
    vdi = opt_real("pld_vdi", gt=0, le=1)
    prv_eps_error = opt_real("prv_eps_error", gt=0, le=1)
    default_checks = ["rdp", "eps-rdp"] if sigma is not None else ["sigma"]
    checks = _choices(name("checks"), raw.get("checks", default_checks), CHECKS, "checks", nonempty=True)
    orders_raw = raw.get("orders", list(DEFAULT_ORDERS) if "rdp" in checks else [])
    if isinstance(orders_raw, str) or not isinstance(orders_raw, list) or len(orders_raw) > MAX_CASE_ORDERS:
        raise InvalidArgument(
            f"{name('orders')}={fmt_value(orders_raw)} must be a list of at most {MAX_CASE_ORDERS} orders"
        )
    orders = tuple(real(name("orders"), _number(o), gt=1, le=10**4) for o in orders_raw)  # type: ignore[arg-type]
    peers = _choices(name("peers"), raw.get("peers", []), PEER_NAMES, "peers", nonempty=False)
    note = raw.get("note", "")
    if not isinstance(note, str):
        raise InvalidArgument(f"{name('note')}={fmt_value(note)} must be a string")
    # each check's inputs, named when missing
    needs = {"rdp": ("sigma",), "eps-rdp": ("sigma", "delta"), "eps-pld": ("sigma", "delta")}
    needs.update({"delta-pld": ("sigma", "eps"), "sigma": ("eps", "delta"), ALLOCATION: ("sigma", "delta")})
    given = {"sigma": sigma, "delta": delta, "eps": eps}
    for c in checks:
        for f in needs[c]:
            if given[f] is None:
                raise InvalidArgument(f"{name(f)} is required by the check {c!r}")
    if "sigma" in checks and sigma is not None:
        raise InvalidArgument(
            f"{name('sigma')}={fmt_value(raw['sigma'])}: a calibration case (check 'sigma') has no sigma"
        )
    if "sigma" in checks and len(checks) > 1:
        raise InvalidArgument(f"{name('checks')}: 'sigma' (a calibration) cannot be combined with other checks")
    if "rdp" in checks and not orders:
        raise InvalidArgument(f"{name('orders')} must list at least one order for the check 'rdp'")
    return Case(cid, q, steps, checks, sigma, delta, eps, orders, vdi, note, prv_eps_error, peers, epochs, k)


def _allocation_fields(raw: dict[str, object], name: Callable[[str], str]) -> None:
    """Refuse the fields a random-allocation case does not read, and any other check beside it
    (the Poisson checks are quantities of another sampling scheme)."""
    checks = raw["checks"]
    if checks != [ALLOCATION]:
        raise InvalidArgument(
            f"{name('checks')}: {ALLOCATION!r} (random allocation) cannot be combined with other checks"
        )
    for f in ("q", "orders", "pld_vdi", "prv_eps_error", "eps"):
        if f in raw:
            raise InvalidArgument(
                f"{name(f)}={fmt_value(raw[f])} is not read by a random-allocation case (each record is used in k "
                "of the steps of each epoch)"
            )


class _DuplicateKey(Exception):
    """A JSON object names one key twice (the key is the message)."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key[:40])
        out[key] = value
    return out


def parse_cases(text: str, fmt: str, source: str) -> tuple[Case, ...]:
    """Cases from the text of a TOML or JSON case file (``fmt`` "toml" or "json").

    Contract: every case validated (:func:`case_from_dict`), ids unique; a syntax error or an empty
    file raises InvalidArgument naming ``source``.
    """
    try:
        data: object = tomllib.loads(text) if fmt == "toml" else json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:  # TOML refuses duplicates itself; JSON's last key would win silently
        raise InvalidArgument(
            f"cases={source}: duplicate key {fmt_value(repr(str(exc)))} (two readers could see two different cases)"
        ) from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidArgument(f"cases={source} is not valid {fmt.upper()}: {first}") from None
    rows = data.get("case") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows:
        raise InvalidArgument(
            f'cases={source} must hold a non-empty list of cases ([[case]] tables, or {{"case": [...]}})'
        )
    cases = tuple(case_from_dict(row, f"case {i + 1}") for i, row in enumerate(rows))
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise InvalidArgument(f"cases={source}: id={c.id!r} appears twice")
        seen.add(c.id)
    return cases


#: Largest case file read (a training-config list, not a data set).
MAX_CASE_FILE_BYTES = 1 << 20


def load_cases(path: str | Path) -> tuple[Case, ...]:
    """Cases from a ``.toml`` or ``.json`` file (by suffix; anything else is tried as TOML).

    Contract: as :func:`parse_cases`; an unreadable, over-large (> 1 MiB) or non-UTF-8 file, or one that is not a
    regular file (/dev/zero, a FIFO, /proc), raises InvalidArgument naming the path (certdp.fileio).
    """
    p = Path(path)
    # the path as given: Path("") is ".", which would be refused as a directory, not as no path
    text = read_text(path, "cases", MAX_CASE_FILE_BYTES)  # regular files only: /dev/zero is refused unread
    return parse_cases(text, "json" if p.suffix.lower() == ".json" else "toml", str(path))


def default_suite() -> tuple[Case, ...]:
    """The default audit suite (certdp/audit/default_suite.toml).

    Contract: the packaged suite, validated like any case file.
    """
    text = resources.files("certdp.audit").joinpath("default_suite.toml").read_text(encoding="utf-8")
    return parse_cases(text, "toml", "default suite")
