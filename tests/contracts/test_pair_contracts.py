"""One contract suite for every privacy pair (dp_accounting's PrivacyAccountantTest idea).

For each pair: the CGF and KL enclosures contain an independent mpmath reference at 60 digits
(quadrature or brute-force sum of the definition) over hypothesis-drawn parameters; the
default enclosure is tight (relative width <= 1e-15); D_alpha grows with alpha; arguments are
validated up front with one-line messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certdp
from certdp.errors import InvalidArgument
from tests import refs


def dec(lo: str, hi: str, places: int = 3) -> st.SearchStrategy[str]:
    return st.decimals(Decimal(lo), Decimal(hi), places=places, allow_nan=False, allow_infinity=False).map(str)


@dataclass
class Case:
    name: str
    params: st.SearchStrategy[dict[str, Any]]
    build: Callable[..., certdp.PrivacyPair]
    ts: st.SearchStrategy[str]
    cgf_ref: Callable[..., Any]
    kl_ref: Callable[..., Any]
    bad: list[tuple[dict[str, Any], str]]


CASES = [
    Case(
        "gaussian",
        st.fixed_dictionaries({"sigma": dec("0.2", "20"), "shift": dec("0.1", "3")}),
        lambda sigma, shift: certdp.Gaussian(sigma, shift),
        dec("0.01", "15", 2),
        lambda p, t: refs.gaussian_cgf(p["sigma"], p["shift"], t),
        lambda p: refs.gaussian_kl(p["sigma"], p["shift"]),
        [
            ({"sigma": 0}, "sigma=0 must be > 0"),
            ({"sigma": -1}, "sigma=-1 must be > 0"),
            ({"sigma": float("nan")}, "sigma=nan must be a finite number"),
            ({"sigma": 1, "shift": 0}, "shift=0 must be != 0"),
        ],
    ),
    Case(
        "laplace",
        st.fixed_dictionaries({"scale": dec("0.2", "5"), "shift": dec("0.01", "3")}),
        lambda scale, shift: certdp.Laplace(scale, shift),
        dec("0.01", "15", 2),
        lambda p, t: refs.laplace_cgf(p["scale"], p["shift"], t),
        lambda p: refs.laplace_kl(p["scale"], p["shift"]),
        [
            ({"scale": 0}, "scale=0 must be > 0"),
            ({"scale": "abc"}, "scale=abc must be a number (ASCII digits, e.g. 0.01, 1e-5 or 1/3)"),
            ({"scale": 1, "shift": float("inf")}, "shift=inf must be a finite number"),
        ],
    ),
    Case(
        "discrete-laplace",
        st.fixed_dictionaries({"a": dec("0.2", "3"), "shift": st.integers(1, 4)}),
        lambda a, shift: certdp.DiscreteLaplace(a, shift),
        dec("0.01", "15", 2),
        lambda p, t: refs.discrete_laplace_cgf(p["a"], p["shift"], t),
        lambda p: refs.discrete_laplace_kl(p["a"], p["shift"]),
        [
            ({"a": 0}, "a=0 must be > 0"),
            ({"a": 1, "shift": "1.5"}, "shift=1.5 must be an integer"),
            ({"a": 1, "shift": 0}, "shift=0 must be >= 1"),
        ],
    ),
    Case(
        "discrete-gaussian",
        st.fixed_dictionaries({"sigma": dec("0.05", "4"), "shift": st.integers(1, 3)}),
        lambda sigma, shift: certdp.DiscreteGaussian(sigma, shift),
        dec("0.01", "10", 2),
        lambda p, t: refs.discrete_gaussian_cgf(p["sigma"], p["shift"], t),
        lambda p: refs.discrete_gaussian_kl(p["sigma"], p["shift"]),
        [({"sigma": 0}, "sigma=0 must be > 0"), ({"sigma": 1, "shift": 2.5}, "shift=2.5 must be an integer")],
    ),
]

CASES.append(
    Case(
        "gaussian-mixture",
        st.fixed_dictionaries({"m": dec("0", "3", 2), "shift": dec("0.01", "2", 3)}),
        lambda m, shift: certdp.GaussianMixture(m, shift),
        dec("0.05", "8", 2),
        lambda p, t: refs.mixture_cgf(p["m"], p["shift"], t),
        lambda p: refs.mixture_kl(p["m"], p["shift"]),
        [({"m": -1}, "m=-1 must be >= 0"), ({"m": 1, "shift": 0}, "shift=0 must be != 0")],
    )
)

CASES.append(
    Case(
        "student-t",
        st.fixed_dictionaries({"nu": dec("1", "40", 2), "shift": dec("-2", "3", 3).filter(lambda v: Decimal(v) != 0)}),
        lambda nu, shift: certdp.StudentT(nu, shift),
        dec("0.05", "10", 2),
        lambda p, t: refs.student_t_cgf(p["nu"], p["shift"], t),
        lambda p: refs.student_t_kl(p["nu"], p["shift"]),
        [
            ({"nu": "0.5"}, "nu=0.5 must be >= 1"),
            ({"nu": float("nan")}, "nu=nan must be a finite number"),
            ({"nu": 3, "shift": 0}, "shift=0 must be != 0"),
        ],
    )
)

CASES.append(
    Case(
        "generalized-gaussian",
        st.fixed_dictionaries({"beta": dec("1", "2", 3), "shift": dec("-2", "2", 3).filter(lambda v: Decimal(v) != 0)}),
        lambda beta, shift: certdp.GeneralizedGaussian(beta, shift),
        dec("0.05", "6", 2),
        lambda p, t: refs.ggauss_cgf(p["beta"], p["shift"], t),
        lambda p: refs.ggauss_kl(p["beta"], p["shift"]),
        [
            ({"beta": "0.9"}, "beta=0.9 must be >= 1"),
            ({"beta": "2.5"}, "beta=2.5 must be <= 2"),
            ({"beta": "1.5", "shift": 0}, "shift=0 must be != 0"),
        ],
    )
)

SUB_DIRECTIONS = ("remove", "add", "both")


def _sub_ref(p: dict[str, Any], t: str) -> Any:
    with mp.workdps(refs.DPS):  # alpha = t + 1 exactly enough: at 15 digits it shifts K visibly
        alpha = mp.mpf(t) + 1
    if p["direction"] == "both":
        return max(
            refs.subsampled_cgf(p["q"], p["sigma"], alpha, "remove"),
            refs.subsampled_cgf(p["q"], p["sigma"], alpha, "add"),
        )
    return refs.subsampled_cgf(p["q"], p["sigma"], alpha, p["direction"])


def _sub_kl(p: dict[str, Any]) -> Any:
    if p["direction"] == "both":
        return max(refs.subsampled_kl(p["q"], p["sigma"], "remove"), refs.subsampled_kl(p["q"], p["sigma"], "add"))
    return refs.subsampled_kl(p["q"], p["sigma"], p["direction"])


CASES.append(
    Case(
        "subsampled-gaussian",
        st.fixed_dictionaries(
            {"q": dec("0.001", "1", 3), "sigma": dec("0.05", "5", 2), "direction": st.sampled_from(SUB_DIRECTIONS)}
        ),
        lambda q, sigma, direction: certdp.SubsampledGaussian(q, sigma, direction),
        st.one_of(st.integers(1, 24).map(str), dec("0.05", "12", 2)),  # exact sums and integrals
        _sub_ref,
        _sub_kl,
        [
            ({"q": 0, "sigma": 1}, "q=0 must be > 0"),
            ({"q": "1.5", "sigma": 1}, "q=1.5 must be <= 1"),
            ({"q": "0.1", "sigma": 0}, "sigma=0 must be > 0"),
            ({"q": "0.1", "sigma": 1, "direction": "up"}, "direction=up must be one of remove, add, both"),
        ],
    )
)

IDS = [c.name for c in CASES]

# The references are 60-digit quadratures (0.3-2 s each): three fifths of the profile's examples
# keep the suite in CI's time budget; CERTDP_EXAMPLES=200 (tests/conftest.py) scales them up too.
REFERENCE_EXAMPLES = settings(max_examples=max(1, settings.default.max_examples * 3 // 5))

# Large orders: one representative pair per case (the limit max_t() depends on the parameters).
# A t beyond the pair's max_t() is skipped with the limit named; so is a t where the reference's
# cost is prohibitive (named too).
LARGE_T = ("1e2", "1e4", "1e6")
LARGE_T_PARAMS: dict[str, dict[str, Any]] = {
    "gaussian": {"sigma": "0.7", "shift": "1.3"},
    "laplace": {"scale": "1.5", "shift": "0.4"},
    "discrete-laplace": {"a": "0.8", "shift": 2},
    "discrete-gaussian": {"sigma": "1.5", "shift": 1},
    "gaussian-mixture": {"m": "0.5", "shift": "0.3"},
    "student-t": {"nu": "3.5", "shift": "0.5"},
    "generalized-gaussian": {"beta": "1.5", "shift": "0.5"},
    "subsampled-gaussian": {"q": "0.3", "sigma": "2", "direction": "both"},
}
REFERENCE_COST_LIMIT = {"discrete-gaussian": 10**4}  # the brute-force sum has ~6 r t terms


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cgf_contains_reference(case: Case) -> None:
    @REFERENCE_EXAMPLES
    @given(case.params, case.ts)
    def check(p: dict[str, Any], t: str) -> None:
        pair = case.build(**p)
        enc = certdp.cgf(pair, t)
        ref = case.cgf_ref(p, t)
        assert refs.contains(enc, ref), (pair.describe(), t, str(enc), ref)

    check()


@pytest.mark.parametrize("t", LARGE_T)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cgf_contains_reference_at_large_orders(case: Case, t: str) -> None:
    p = LARGE_T_PARAMS[case.name]
    pair = case.build(**p)
    limit = pair.max_t()
    if limit is not None and Decimal(t) > Decimal(limit.numerator) / Decimal(limit.denominator):
        pytest.skip(f"t={t} is beyond {pair.describe()}'s max_t() = {float(limit):g}")
    if Decimal(t) > REFERENCE_COST_LIMIT.get(case.name, Decimal("inf")):
        pytest.skip(f"t={t}: the {case.name} reference's cost grows with t (limit {REFERENCE_COST_LIMIT[case.name]:g})")
    enc = certdp.cgf(pair, t)
    ref = case.cgf_ref(p, t)
    assert refs.contains(enc, ref, slack=1e-40), (pair.describe(), t, str(enc), ref)
    assert enc.rel_width() <= 1e-15, (pair.describe(), t, str(enc))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kl_contains_reference(case: Case) -> None:
    @REFERENCE_EXAMPLES
    @given(case.params)
    def check(p: dict[str, Any]) -> None:
        pair = case.build(**p)
        enc = certdp.kl(pair)
        assert refs.contains(enc, case.kl_ref(p)), (pair.describe(), str(enc))

    check()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_default_enclosure_is_tight(case: Case) -> None:
    @given(case.params, case.ts)
    def check(p: dict[str, Any], t: str) -> None:
        enc = certdp.cgf(case.build(**p), t)
        assert enc.rel_width() <= 1e-15, (p, t, str(enc))

    check()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_renyi_divergence_grows_with_order(case: Case) -> None:
    @given(case.params, case.ts, case.ts)
    def check(p: dict[str, Any], t1: str, t2: str) -> None:
        pair = case.build(**p)
        lo, hi = sorted((Decimal(t1), Decimal(t2)))
        d_lo = certdp.rdp(pair, lo + 1)
        d_hi = certdp.rdp(pair, hi + 1)
        assert d_lo.lower <= d_hi.upper  # D_alpha is nondecreasing in alpha
        assert d_lo.lower >= -d_lo.width  # and nonnegative

    check()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_parameters_raise_one_line_errors(case: Case) -> None:
    for kwargs, message in case.bad:
        with pytest.raises(InvalidArgument) as info:
            case.build(**{**_defaults(case), **kwargs})
        assert str(info.value) == message


def _defaults(case: Case) -> dict[str, Any]:
    return {
        "gaussian": {"sigma": 1, "shift": 1},
        "laplace": {"scale": 1, "shift": 1},
        "gaussian-mixture": {"m": 1, "shift": 1},
        "student-t": {"nu": 3, "shift": 1},
        "generalized-gaussian": {"beta": "1.5", "shift": 1},
        "discrete-laplace": {"a": 1, "shift": 1},
        "discrete-gaussian": {"sigma": 1, "shift": 1},
        "subsampled-gaussian": {"q": "0.1", "sigma": 1, "direction": "both"},
    }[case.name]


def test_pairs_are_frozen_and_hashable() -> None:
    pair = certdp.Gaussian(1, 1)
    with pytest.raises(AttributeError):
        pair.sigma = 2  # type: ignore[misc]
    assert hash(pair) == hash(certdp.Gaussian("1", "1.0"))
    assert certdp.SubsampledGaussian("0.01", "1").params() == {"q": "0.01", "sigma": "1", "direction": "both"}
