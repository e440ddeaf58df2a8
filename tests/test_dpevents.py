"""Every DpEvent of dp_accounting 0.6, built by dp_accounting itself: certdp's answer or refusal
(the table of docs/integrations.md), and certified answers against independent references
(closed forms and quadrature in mpmath at 50 digits, exact finite sums; dp_accounting's own value
as a band where it is an estimate)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certdp.errors import InvalidArgument, Unsupported
from certdp.integrations.dp_events import ALL_FIELDS, account_event, event_pairs

de = pytest.importorskip("dp_accounting.dp_event")
pld_acc = pytest.importorskip("dp_accounting.pld.pld_privacy_accountant")
rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
from dp_accounting.privacy_accountant import NeighboringRelation  # noqa: E402

AR, R1, RS = "add_or_remove_one", "replace_one", "replace_special"
SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mp(x: Fraction | float) -> mpmath.mpf:
    x = Fraction(x)
    with mpmath.workdps(60):
        return mpmath.mpf(x.numerator) / x.denominator


def inside(ans, ref, slack: float = 1e-40) -> bool:
    with mpmath.workdps(60):
        return _mp(ans.lower) - slack <= ref <= _mp(ans.upper) + slack


# -- the table: every event class, its answer or refusal ---------------------------------------------------

G = de.GaussianDpEvent
TABLE = [
    # (event, relation, status or "refused", words the answer or refusal must contain)
    (lambda: de.NonPrivateDpEvent(), AR, "infinite", "NonPrivateDpEvent"),
    (lambda: de.ComposedDpEvent([G(1.0), de.NonPrivateDpEvent()]), AR, "infinite", "NonPrivateDpEvent"),
    (lambda: G(0.0), AR, "infinite", "noise_multiplier=0"),
    (lambda: de.NoOpDpEvent(), AR, "nothing", "releases nothing"),
    (lambda: de.SelfComposedDpEvent(de.NoOpDpEvent(), 5), AR, "nothing", "releases nothing"),
    (lambda: G(2.0), AR, "certified", ""),
    (lambda: de.LaplaceDpEvent(2.0), R1, "certified", ""),
    (lambda: de.DiscreteLaplaceDpEvent(0.5, 2), AR, "certified", ""),
    (lambda: de.ZCDpEvent(0.1), AR, "certified-upper", "rdp"),
    (lambda: de.RandomizedResponseDpEvent(0.5, 4), R1, "certified", ""),
    (lambda: de.RandomizedResponseDpEvent(0.5, 4), RS, "certified", ""),
    (lambda: de.RandomizedResponseDpEvent(0.0, 4), R1, "infinite", "noise_parameter=0"),
    (lambda: de.RandomizedResponseDpEvent(0.3, 1), R1, "nothing", ""),
    (lambda: de.RandomizedResponseDpEvent(0.5, 4), AR, "refused", "needs relation replace_one or replace_special"),
    (lambda: de.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.75, 0.25]), AR, "certified", ""),
    (lambda: de.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.75, 0.25]), R1, "refused", "under replace_one"),
    (lambda: de.MixtureOfGaussiansDpEvent(2.0, [-1.0, 1.0], [0.5, 0.5]), AR, "refused", "sensitivities >= 0"),
    (lambda: de.PoissonSampledDpEvent(0.25, de.LaplaceDpEvent(2.0)), AR, "certified", ""),
    (lambda: de.PoissonSampledDpEvent(0.25, G(2.0)), AR, "certified", ""),
    (lambda: de.PoissonSampledDpEvent(0.25, G(2.0)), R1, "refused", "Poisson sampling for substitution"),
    (
        lambda: de.PoissonSampledDpEvent(0.25, de.DiscreteLaplaceDpEvent(0.5, 1)),
        AR,
        "refused",
        "would need the pair of DiscreteLaplaceDpEvent under Poisson sampling",
    ),
    (
        lambda: de.PoissonSampledDpEvent(0.25, de.SelfComposedDpEvent(G(2.0), 2)),
        AR,
        "refused",
        "would need the pair of SelfComposedDpEvent",
    ),
    (lambda: de.SampledWithoutReplacementDpEvent(20, 5, G(2.0)), R1, "certified", ""),
    (lambda: de.SampledWithoutReplacementDpEvent(20, 5, de.LaplaceDpEvent(2.0)), R1, "certified", ""),
    (lambda: de.SampledWithoutReplacementDpEvent(20, 5, G(2.0)), AR, "refused", "defined for replace_one"),
    (
        lambda: de.SampledWithoutReplacementDpEvent(20, 5, de.ComposedDpEvent([G(2.0), G(3.0)])),
        R1,
        "refused",
        "would need the pair of ComposedDpEvent under sampling without replacement",
    ),
    (lambda: de.SampledWithReplacementDpEvent(20, 2, G(2.0)), R1, "certified", "reveals the record's count"),
    (lambda: de.SampledWithReplacementDpEvent(20, 5, de.LaplaceDpEvent(2.0)), R1, "certified", "not tight"),
    (lambda: de.SampledWithReplacementDpEvent(20, 5, G(2.0)), AR, "refused", "defined for replace_one"),
    (
        lambda: de.SampledWithReplacementDpEvent(20, 5, de.DiscreteLaplaceDpEvent(0.5, 1)),
        R1,
        "refused",
        "would need the pair of DiscreteLaplaceDpEvent under sampling with replacement",
    ),
    (lambda: de.SingleEpochTreeAggregationDpEvent(2.0, [5, 7]), RS, "certified", ""),
    (lambda: de.SingleEpochTreeAggregationDpEvent(2.0, 5), R1, "refused", "needs replace_special"),
    (lambda: de.RepeatAndSelectDpEvent(G(2.0), 3.0, 1.0), AR, "refused", "Papernot and Steinke"),
    (lambda: de.TruncatedSubsampledGaussianDpEvent(100, 0.1, 12, 2.0), AR, "refused", "truncated Poisson"),
    (lambda: de.UnsupportedDpEvent(), AR, "refused", "placeholder"),
    (lambda: de.ComposedDpEvent([G(2.0), de.UnsupportedDpEvent()]), AR, "refused", "placeholder"),
    (
        lambda: de.ComposedDpEvent(
            [de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.25, de.LaplaceDpEvent(2.0)), 3), G(3.0)]
        ),
        AR,
        "certified",
        "",
    ),
    (lambda: de.SelfComposedDpEvent(de.RandomizedResponseDpEvent(0.5, 3), 3), R1, "certified", ""),
]


@pytest.mark.parametrize("make, relation, status, words", TABLE, ids=[f"{i}" for i in range(len(TABLE))])
def test_every_event_is_answered_or_refused(make, relation, status, words) -> None:
    event = make()
    if status == "refused":
        with pytest.raises(Unsupported, match=words) as info:
            account_event(event, eps=1, relation=relation)
        assert "\n" not in str(info.value)
        return
    ans = account_event(event, eps=1, relation=relation)
    if status == "certified-upper":
        assert ans.status == "certified" and ans.sides == "upper" and words in ans.reason
        assert 0 <= ans.upper <= 1
        return
    assert ans.status == status, ans
    assert words in ans.reason
    if status == "infinite":
        assert ans.upper == 1 and ans.lower is None  # delta(eps) of a non-private event: only <= 1
        eps_ans = account_event(event, delta=1e-5, relation=relation)
        assert eps_ans.lower == eps_ans.upper == math.inf and eps_ans.sides == "stated"
    elif status == "nothing":
        assert ans.lower == ans.upper == 0
    else:
        assert ans.sides == "two-sided" and 0 <= ans.lower <= ans.upper <= 1


def test_the_table_covers_every_event_class_of_dp_accounting() -> None:
    classes = {n for n in dir(de) if n.endswith("DpEvent") and n != "DpEvent"}
    assert classes == set(ALL_FIELDS)
    built = {type(make()).__name__ for make, *_ in TABLE}
    assert built >= classes - {"SelfComposedDpEvent", "ComposedDpEvent"} | {"SelfComposedDpEvent", "ComposedDpEvent"}
    # dp_accounting 0.6 has no (eps, delta) guarantee event: nothing to build
    assert not hasattr(de, "EpsilonDeltaDpEvent")


def test_relation_is_read_from_dp_accountings_enum_and_checked() -> None:
    event = de.RandomizedResponseDpEvent(0.5, 2)
    a = account_event(event, eps=0, relation=NeighboringRelation.REPLACE_ONE)
    b = account_event(event, eps=0, relation=R1)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    with pytest.raises(InvalidArgument, match=r"^relation=bogus must be one of"):
        account_event(event, eps=0, relation="bogus")


def test_directions_are_split_for_two_direction_pairs() -> None:
    comps, _, _ = event_pairs(de.PoissonSampledDpEvent(0.25, de.LaplaceDpEvent(2.0)))
    assert set(comps) == {"remove", "add"}
    comps, _, _ = event_pairs(de.RandomizedResponseDpEvent(0.5, 3), R1)
    assert set(comps) == {"pair"}  # symmetric


def test_mixture_weights_that_do_not_sum_to_one_are_refused() -> None:
    with pytest.raises(InvalidArgument, match=r"sampling_probs=sum 0\.9 must be >= 0 and sum to 1"):
        account_event(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.8, 0.1]), eps=1)
    # 0.81 + 0.18 + 0.01 is not exactly 1 in binary: read, and said so
    ans = account_event(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01]), eps=2)
    assert ans.status == "certified" and any("divided by their exact sum" in n for n in ans.notes)


# -- references -----------------------------------------------------------------------------------------------


def rr_masses(p: Fraction, k: int, relation: str) -> list[list[tuple[Fraction, Fraction]]]:
    """Per direction, the exact (P, Q) masses of one randomized-response step (from the
    mechanism's definition: input bucket 1 - p + p/k, any other p/k)."""
    a, c = 1 - p + p / k, p / k
    if relation == R1:  # inputs x, x': outputs x, x', others
        return [[(a, c), (c, a)] + [(c, c)] * (k - 2)]
    special = [(a, Fraction(1, k))] + [(c, Fraction(1, k))] * (k - 1)
    return [special, [(q, p_) for p_, q in special]]


def composed_delta(masses: list[tuple[Fraction, Fraction]], steps: int, eps: Fraction) -> mpmath.mpf:
    """delta(eps) of the steps-fold product of a finite pair, by enumerating all outcome tuples."""
    with mpmath.workdps(50):
        e = mpmath.exp(_mp(eps))
        total = mpmath.mpf(0)
        for combo in itertools.product(masses, repeat=steps):
            p = math.prod(m[0] for m in combo)
            q = math.prod(m[1] for m in combo)
            total += max(_mp(p) - e * _mp(q), 0)
        return total


@SETTINGS
@given(
    st.sampled_from([Fraction(1, 5), Fraction(1, 2), Fraction(3, 4)]),
    st.integers(2, 4),
    st.integers(1, 3),
    st.sampled_from([R1, RS]),
    st.sampled_from([Fraction(1, 1000), Fraction(1, 20)]),
)
def test_randomized_response_against_exact_enumeration(p, k, steps, relation, target) -> None:
    event = de.SelfComposedDpEvent(de.RandomizedResponseDpEvent(float(p), k), steps)
    ans = account_event(event, delta=target, relation=relation, rel_width="1e-3")

    def exact_delta(eps: Fraction) -> mpmath.mpf:
        return max(composed_delta(m, steps, eps) for m in rr_masses(p, k, relation))

    # delta(eps) is continuous and strictly decreasing where positive, so the true eps(target)
    # lies in [lower, upper] iff delta(lower) >= target >= delta(upper)
    assert ans.sides == "two-sided"
    with mpmath.workdps(60):
        assert exact_delta(Fraction(ans.lower)) >= _mp(target) >= exact_delta(Fraction(ans.upper))
    assert ans.upper - ans.lower <= Fraction(1, 100) * ans.upper + Fraction(1, 10**6)


def _quad_hockey(f, g, eps: Fraction, cuts: list) -> mpmath.mpf:
    """int (f - e^eps g)_+, the sign changes located on a grid and refined (pieces of one sign)."""
    e = mpmath.exp(_mp(eps))

    def h(x):
        return f(x) - e * g(x)

    lo, hi = min(cuts), max(cuts)
    grid = sorted(set(cuts + [lo + (hi - lo) * j / 1000 for j in range(1001)]))
    roots = [mpmath.findroot(h, (a, b), solver="anderson") for a, b in itertools.pairwise(grid) if h(a) * h(b) < 0]
    roots += [x for x in grid if h(x) == 0]  # a root on the grid itself
    pts = sorted(set(cuts + roots))
    return mpmath.fsum(mpmath.quad(h, [a, b]) for a, b in itertools.pairwise(pts) if h((a + b) / 2) > 0)


@SETTINGS
@given(
    st.sampled_from([0.1, 0.25, 0.5, 1.0]),
    st.sampled_from([0.5, 1.0, 2.0]),
    st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 2)]),
)
def test_poisson_sampled_laplace_against_quadrature(q, b, eps) -> None:
    ans = account_event(de.PoissonSampledDpEvent(q, de.LaplaceDpEvent(b)), eps=eps)
    with mpmath.workdps(50):
        qm, bm = _mp(q), _mp(b)

        def lap(x, m):
            return mpmath.exp(-abs(x - m) / bm) / (2 * bm)

        def mix(x):
            return (1 - qm) * lap(x, 0) + qm * lap(x, 1)

        def base(x):
            return lap(x, 0)

        cuts = [-120 * bm, mpmath.mpf(0), mpmath.mpf(1), 1 + 120 * bm]
        ref = max(_quad_hockey(mix, base, eps, cuts), _quad_hockey(base, mix, eps, cuts))
    assert ans.sides == "two-sided" and inside(ans, ref, 1e-30)


@SETTINGS
@given(
    st.sampled_from([0.5, 1.0, 2.0]),
    st.sampled_from([([0.0, 1.0], [0.75, 0.25]), ([0.0, 1.0, 2.0], [0.5, 0.25, 0.25]), ([0.5, 1.5], [0.5, 0.5])]),
    st.sampled_from([Fraction(1, 4), Fraction(1)]),
)
@pytest.mark.slow
def test_mixture_of_gaussians_against_quadrature(sigma, mixture, eps) -> None:
    cs, ps = mixture
    ans = account_event(de.MixtureOfGaussiansDpEvent(sigma, cs, ps), eps=eps)
    with mpmath.workdps(50):
        s = _mp(sigma)

        def mix(x):
            return mpmath.fsum(_mp(p) * mpmath.npdf(x, _mp(c), s) for c, p in zip(cs, ps, strict=True))

        def base(x):
            return mpmath.npdf(x, 0, s)

        cuts = [-40 * s, 2 + 40 * s]
        ref = max(_quad_hockey(mix, base, eps, cuts), _quad_hockey(base, mix, eps, cuts))
    assert ans.sides == "two-sided" and inside(ans, ref, 1e-30)


@pytest.mark.parametrize("steps, sigma", [([5, 7], 2.0), (1, 0.75), ([1, 2, 3, 4, 100], 5.0)])
def test_tree_aggregation_is_the_gaussian_of_its_depth(steps, sigma) -> None:
    eps = Fraction(1, 2)
    ans = account_event(de.SingleEpochTreeAggregationDpEvent(sigma, steps), eps=eps, relation=RS)
    depth = max(steps if isinstance(steps, list) else [steps]).bit_length()
    assert depth == math.ceil(math.log2(max(steps if isinstance(steps, list) else [steps]) + 1))
    with mpmath.workdps(50):
        mu, e = mpmath.sqrt(depth) / _mp(sigma), _mp(eps)
        ref = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
    assert ans.sides == "two-sided" and inside(ans, ref)


# -- dp_accounting's own values as bands --------------------------------------------------------------------


def _dp_eps(accountant, event, delta: float) -> float:
    accountant.compose(event)
    return accountant.get_epsilon(delta)


def _rr10() -> object:
    return de.SelfComposedDpEvent(de.RandomizedResponseDpEvent(0.5, 3), 10)


def _rr10_listed() -> object:
    # dp_accounting 0.6's PLD accountant composes a randomized response once whatever the count
    # of a SelfComposedDpEvent around it (no self_compose(count) in that branch): give it the
    # ten steps as a list, which it composes one by one
    return de.ComposedDpEvent([de.RandomizedResponseDpEvent(0.5, 3)] * 10)


@pytest.mark.parametrize(
    "make, theirs_make, relation",
    [
        (lambda: de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.1, de.LaplaceDpEvent(1.0)), 20), None, AR),
        (_rr10, _rr10_listed, R1),
        (lambda: de.SelfComposedDpEvent(de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.9, 0.1]), 10), None, AR),
    ],
)
def test_pld_events_agree_with_dp_accountings_pld(make, theirs_make, relation) -> None:
    delta = 1e-5
    ans = account_event(make(), delta=delta, relation=relation, rel_width="1e-3")
    rel = getattr(NeighboringRelation, relation.upper())
    accountant = pld_acc.PLDAccountant(rel, value_discretization_interval=1e-4)
    theirs = _dp_eps(accountant, (theirs_make or make)(), delta)
    # dp_accounting's pessimistic PLD is an estimate above the true eps, close to it
    assert float(ans.lower) <= theirs * (1 + 1e-6)
    assert abs(theirs - float(ans.upper)) <= 1e-2 * theirs


def test_dp_accountings_pld_drops_the_count_of_a_self_composed_randomized_response() -> None:
    # the peer's behaviour the band test above works around (so that a fixed dp_accounting shows)
    one = _dp_eps(pld_acc.PLDAccountant(NeighboringRelation.REPLACE_ONE), de.RandomizedResponseDpEvent(0.5, 3), 1e-5)
    ten = _dp_eps(pld_acc.PLDAccountant(NeighboringRelation.REPLACE_ONE), _rr10(), 1e-5)
    ours = account_event(_rr10(), delta=1e-5, relation=R1, rel_width="1e-3")
    assert ten == pytest.approx(one) and float(ours.lower) > 5 * ten


def test_sampling_without_replacement_is_below_dp_accountings_rdp() -> None:
    # dp_accounting's RDP reads the noise multiplier against the replacement sensitivity 2C:
    # certdp's sigma is twice that (module docstring of certdp.integrations.dp_events)
    n, b, sigma, delta = 1000, 10, 1.0, 1e-5
    event = de.SelfComposedDpEvent(de.SampledWithoutReplacementDpEvent(n, b, de.GaussianDpEvent(sigma)), 100)
    ans = account_event(event, delta=delta, relation=R1, rel_width="1e-3")
    theirs_event = de.SelfComposedDpEvent(de.SampledWithoutReplacementDpEvent(n, b, de.GaussianDpEvent(sigma / 2)), 100)
    rdp = _dp_eps(rdp_acc.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE), theirs_event, delta)
    # RDP is an upper bound of the true eps, which certdp's enclosure contains
    assert float(ans.lower) <= rdp
    assert ans.sides == "two-sided"
