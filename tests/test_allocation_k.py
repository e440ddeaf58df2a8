"""Random allocation with k > 1 (each record in k of the t steps of an epoch): the upper bound of
certdp.notions.allocation_dp through the reduction of docs/math.md §9.8 ("k > 1"), and the lower
bound of certdp.notions.allocation_k_lower (an additive statistic's laws).

Independent references:
* t <= 6: Monte Carlo of the exact k-of-t pair (P = mixture over the C(t, k) subsets S of
  N(1_S/sigma, I_t), Q = N(0, I_t)), from bounded integrands (remove: E_P (1 - c/Lambda)_+; add:
  E_Q (1 - c Lambda)_+, c = e^eps, Lambda = dP/dQ summed over every subset), with a 99.9%
  confidence interval: its lower end must stay below the certified upper end;
* the same Monte Carlo refutes a plausible wrong reduction (k compositions of 1-of-ceil(t/k)), so
  the check above can fail;
* k = t: every step uses the record, the pair is one Gaussian of mu = sqrt(t E)/sigma (closed
  form in mpmath), and the reduction is exact there;
* the lower end: the same Monte Carlo (its upper confidence end must stay above the certified
  lower end, at one and two epochs), the Gaussian closed form at k = t, and the certified k = 1
  enclosure (the statistic is the likelihood ratio there).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
from decimal import Decimal
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.cli import main
from certdp.errors import InvalidArgument
from certdp.notions.allocation_dp import allocation_delta_bounds, allocation_eps_bounds, k_reduction

#: two-sided 99.9% normal quantile
Z999 = 3.2905
SAMPLES = 200_000


def dec(lo: str, hi: str, places: int = 2) -> st.SearchStrategy[Fraction]:
    return st.decimals(Decimal(lo), Decimal(hi), places=places).map(lambda d: Fraction(str(d)))


def mc_delta(t: int, k: int, sigma: float, eps: float, direction: str, n: int, seed: int) -> tuple[float, float]:
    """Monte Carlo estimate of delta(eps) of one epoch of the exact k-of-t pair and its standard error."""
    rng = np.random.default_rng(seed)
    subsets = np.array([[1.0 if i in s else 0.0 for i in range(t)] for s in itertools.combinations(range(t), k)])
    x = rng.standard_normal((n, t))
    if direction == "remove":  # draw under P: a uniform k-subset shifted by 1/sigma
        x += subsets[rng.integers(len(subsets), size=n)] / sigma
    a = x @ subsets.T / sigma - k / (2 * sigma**2)  # log of each subset's likelihood ratio
    top = a.max(axis=1)
    log_lam = top + np.log(np.exp(a - top[:, None]).mean(axis=1))
    c = math.exp(eps)
    v = (
        np.clip(1 - c * np.exp(-log_lam), 0, None)
        if direction == "remove"
        else np.clip(1 - c * np.exp(log_lam), 0, None)
    )
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(n))


@settings(max_examples=4, derandomize=True)
@given(
    tk=st.sampled_from([(4, 2), (5, 2), (6, 2), (5, 3), (6, 3), (6, 4)]),
    sigma=dec("0.8", "1.5"),
    eps=dec("0", "1.2"),
    direction=st.sampled_from(["remove", "add"]),
)
@pytest.mark.slow
def test_reduction_upper_bounds_monte_carlo_of_the_k_of_t_pair(tk, sigma, eps, direction):
    t, k = tk
    enc = allocation_delta_bounds(sigma, t, 1, eps, k=k, direction=direction, rel_width=None)
    est, se = mc_delta(t, k, float(sigma), float(eps), direction, SAMPLES, seed=7)
    assert est - Z999 * se <= float(enc.upper), (t, k, sigma, eps, direction, est, se, float(enc.upper))
    assert float(enc.lower) <= est + Z999 * se, (t, k, sigma, eps, direction, est, se, float(enc.lower))


@pytest.mark.slow
def test_monte_carlo_refutes_a_wrong_reduction():
    """k compositions of 1-of-ceil(t/k) (not a bound when k does not divide t): the Monte Carlo
    of the test above proves it too small, so that test has the power to catch a wrong reduction."""
    t, k, sigma, eps = 5, 2, Fraction(4, 5), Fraction(1)
    for direction in ("remove", "add"):
        wrong = allocation_delta_bounds(sigma, math.ceil(t / k), k, eps, direction=direction, rel_width=None)
        est, se = mc_delta(t, k, float(sigma), float(eps), direction, SAMPLES, seed=11)
        assert est - Z999 * se > float(wrong.upper), (direction, est, se, float(wrong.upper))
        right = allocation_delta_bounds(sigma, t, 1, eps, k=k, direction=direction, rel_width=None)
        assert est - Z999 * se <= float(right.upper)


def _gauss_delta(mu: mp.mpf, e: mp.mpf) -> mp.mpf:
    return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


def _mp(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


@settings(max_examples=25, deadline=None)
@given(
    t=st.integers(2, 12),
    epochs=st.integers(1, 50),
    sigma=dec("0.3", "20"),
    eps=dec("0", "8"),
    direction=st.sampled_from(["remove", "add", "both"]),
)
def test_k_equal_t_is_one_gaussian_both_ends(t, epochs, sigma, eps, direction):
    """k = t = M: every record is in every step, so the run is exactly the Gaussian of
    mu^2 = t E / sigma^2 (in both directions), and both ends are proved and refined to rel_width
    (they were [statistic, reduction] before, wide). Reference: 60-digit mpmath."""
    mp.mp.dps = 60
    mu = mp.sqrt(t * epochs) / _mp(sigma)
    exact = _gauss_delta(mu, _mp(eps))
    enc = allocation_delta_bounds(sigma, t, epochs, eps, k=t, direction=direction, rel_width=Fraction(1, 100))
    assert _mp(enc.lower) <= exact <= _mp(enc.upper)
    assert enc.upper == 0 or (enc.upper - enc.lower) <= Fraction(1, 100) * enc.upper
    red = k_reduction(t, epochs, t)
    assert red.equal and not red.one_sided and "k=M" in red.note()


@settings(max_examples=25, deadline=None)
@given(
    t=st.integers(2, 12),
    epochs=st.integers(1, 50),
    sigma=dec("0.3", "20"),
    log10_delta=st.integers(-12, -2),
    direction=st.sampled_from(["remove", "add", "both"]),
)
def test_k_equal_t_eps_is_the_gaussians_within_rel_width(t, epochs, sigma, log10_delta, direction):
    """eps(delta) at k = t: delta(lower) >= delta >= delta(upper) of the Gaussian (60-digit signs,
    no root finder), and the relative width is at most the default 1e-3."""
    mp.mp.dps = 60
    delta = Fraction(1, 10**-log10_delta)
    mu = mp.sqrt(t * epochs) / _mp(sigma)
    enc = allocation_eps_bounds(sigma, t, epochs, delta, k=t, direction=direction)
    assert _gauss_delta(mu, _mp(enc.upper)) <= _mp(delta)
    assert enc.lower == 0 or _gauss_delta(mu, _mp(enc.lower)) >= _mp(delta)
    assert enc.upper == 0 or (enc.upper - enc.lower) <= Fraction(1, 1000) * enc.upper


def test_k_below_t_stays_wide_and_above_the_k_equal_t_run():
    """1 < k < M is not the reduced run (the reduction only bounds it from above): it keeps the
    statistic's lower end, below the reduced run's exact value here (M = 3, k = 2: reduced run 1
    step, 2 epochs, a Gaussian)."""
    enc = allocation_eps_bounds(1, 3, 1, Fraction(1, 10**5), k=2)
    reduced = allocation_eps_bounds(1, 1, 2, Fraction(1, 10**5))
    red = k_reduction(3, 1, 2)
    assert red.one_sided and not red.equal
    assert enc.upper == reduced.upper and 0 < enc.lower < reduced.lower


def test_cli_k_equal_m_is_labelled_exact_and_two_sided():
    """k = M on the command line: via exact, both ends from the closed form, one_sided false, the
    note and the reduced run name the equal run; the bounds contain the Gaussian (60 digits)."""
    setting = ["--steps", "4", "--epochs", "3", "--k", "4", "--sigma", "2"]
    code, out, err = run_cli(["eps", "random-allocation", *setting, "--delta", "1e-6", "--json"])
    assert code == 0, err
    rec = json.loads(out)
    assert rec["via"] == "exact" and rec["one_sided"] is False and rec["k"] == 4
    assert rec["lower_from"] == rec["upper_from"] and "sqrt(M*E)/sigma" in rec["upper_from"]
    assert rec["reduced"] == {"steps": 1, "epochs": 12} and "k=M=4" in rec["via_note"]
    mp.mp.dps = 60
    mu = mp.sqrt(12) / 2
    assert _gauss_delta(mu, mp.mpf(rec["upper"])) <= mp.mpf("1e-6") <= _gauss_delta(mu, mp.mpf(rec["lower"]))


def test_k_1_is_unchanged_and_two_sided():
    default = allocation_delta_bounds(1, 3, 1, Fraction(1, 2), rel_width=None)
    one = allocation_delta_bounds(1, 3, 1, Fraction(1, 2), k=1, rel_width=None)
    assert (one.lower, one.upper) == (default.lower, default.upper)
    assert 0 < one.lower <= one.upper
    red = k_reduction(3, 1, 1)
    assert not red.one_sided and red.note() == "" and (red.reduced_steps, red.reduced_epochs) == (3, 1)


def test_eps_upper_is_the_reduced_pairs():
    enc = allocation_eps_bounds(1, 7, 2, Fraction(1, 10**5), k=3, direction="remove")
    reduced = allocation_eps_bounds(1, 2, 6, Fraction(1, 10**5), direction="remove")  # floor(7/3) = 2, 3 * 2
    assert 0 < enc.lower <= enc.upper and enc.upper == reduced.upper and reduced.lower > 0


@pytest.mark.parametrize(("k", "msg"), [("0", "k=0 must be >= 1"), ("7", "k=7 must be <= steps=6"), ("2.5", "k=2.5")])
def test_bad_k_refused(k, msg):
    with pytest.raises(InvalidArgument, match=msg.replace(".", r"\.")):
        allocation_delta_bounds(1, 6, 1, 1, k=k)
    for argv in (
        ["eps", "random-allocation", "--steps", "6", "--sigma", "1", "--k", k, "--delta", "1e-5"],
        ["delta", "random-allocation", "--steps", "6", "--sigma", "1", "--k", k, "--eps", "1"],
        ["calibrate", "random-allocation", "--steps", "6", "--k", k, "--epsilon", "1", "--delta", "1e-5"],
    ):
        code, out, err = run_cli(argv)
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and msg in lines[0], err


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_json_says_where_each_end_comes_from():
    base = ["random-allocation", "--steps", "6", "--epochs", "2", "--sigma", "1"]
    code, out, err = run_cli(["eps", *base, "--k", "2", "--delta", "1e-5", "--json"])
    assert code == 0, err
    rec = json.loads(out)
    assert rec["one_sided"] is False and rec["k"] == 2 and Fraction(rec["lower"]) > 0
    assert Fraction(rec["lower"]) <= Fraction(rec["upper"])
    assert rec["reduced"] == {"steps": 3, "epochs": 4}
    assert "additive statistic" in rec["lower_from"] and "arXiv:2502.08202" in rec["via_note"]
    assert "not refined" in rec["rel_width_target"] and "may be wide" in rec["via_note"]
    reduced = allocation_eps_bounds(1, 3, 4, Fraction(1, 10**5))
    assert Fraction(rec["upper"]) >= reduced.upper and Fraction(rec["upper"]) - reduced.upper < Fraction(1, 10**12)
    code, out, err = run_cli(["delta", *base, "--eps", "1", "--json"])
    assert code == 0, err
    rec = json.loads(out)
    assert rec["one_sided"] is False and rec["k"] == 1 and Fraction(rec["lower"]) > 0


@pytest.mark.slow
def test_calibrate_k_claims_and_bounds_the_least_sigma():
    code, out, err = run_cli(
        ["calibrate", "random-allocation", "--steps", "6", "--k", "2", "--epsilon", "2", "--delta", "1e-5", "--json"]
    )
    assert code == 0, err
    rec = json.loads(out)
    assert rec["k"] == 2 and rec["reduced"] == {"steps": 3, "epochs": 2}
    # the claim is the reduced pair's: its delta at sigma is <= delta, so an enclosure's lower end is too
    assert Fraction(rec["delta_upper"]) <= Fraction(1, 10**5)
    sigma = Fraction(rec["sigma"])
    assert allocation_delta_bounds(sigma, 3, 2, 2, rel_width=Fraction(1, 100)).lower <= Fraction(1, 10**5)
    # the violation comes from the k-of-6 pair's own lower end: recomputed through the eps/delta route
    viol = rec["sigma_violated"]
    assert viol is not None and rec["one_sided"] is False, rec
    assert Fraction(viol) < sigma and rec["proved_interval"]["lower_open"] == viol
    assert allocation_delta_bounds(Fraction(viol), 6, 1, 2, k=2, rel_width=None).lower > Fraction(1, 10**5)
    assert rec["miss_reason"] is None or "k > 1" in rec["miss_reason"]


@pytest.mark.slow
def test_calibration_at_small_delta_brackets_the_least_sigma():
    """delta = 1e-11 (attack/closing-note item: the claim stayed far above the least sigma): the
    claim and the violation are checked against the eps query, a separate route through the
    lattices: at the claim eps(delta) <= 4 must be possible (lower end <= 4), at the violation
    eps(delta) > 4 (upper end > 4)."""
    code, out, err = run_cli(
        ["calibrate", "random-allocation", "--steps", "10", "--epsilon", "4", "--delta", "1e-11", "--json"]
    )
    assert code == 0, err
    rec = json.loads(out)
    sigma, viol = Fraction(rec["sigma"]), rec["sigma_violated"]
    assert Fraction(rec["delta_upper"]) <= Fraction(1, 10**11) and viol is not None
    assert (sigma - Fraction(viol)) / sigma <= Fraction(1, 10), rec  # the interval is at most 10% wide
    delta = Fraction(1, 10**11)
    at_claim = allocation_eps_bounds(sigma, 10, 1, delta, rel_width=Fraction(1, 100))
    at_viol = allocation_eps_bounds(Fraction(viol), 10, 1, delta, rel_width=Fraction(1, 100))
    assert at_claim.lower <= 4 < at_viol.upper, (float(at_claim.lower), float(at_viol.upper))


@pytest.mark.slow
def test_calibration_climbs_past_a_low_float_root():
    """M = 1, E = 10 (one Gaussian of mu = sqrt(10)/sigma), eps = 4, delta = 1e-11: the float root
    lay 36 steps below the least sigma, each a proved violation, and 8 steps up found no claim
    (attack review). The claim and the violation against the closed form (mpmath, 50 digits). On
    the lattice (closed_form=False, as a certificate asks): the closed form calibrates M = 1 now."""
    from certdp.calibrate.random_allocation_dp import calibrate_eps_delta

    res = calibrate_eps_delta(1, 10, 4, Fraction(1, 10**11), closed_form=False)
    assert res.bounds == "lattice"
    mp.mp.dps = 50

    def delta_at(sigma: Fraction):
        mu = mp.sqrt(10) / (mp.mpf(sigma.numerator) / sigma.denominator)
        return mp.ncdf(-4 / mu + mu / 2) - mp.e**4 * mp.ncdf(-4 / mu - mu / 2)

    assert delta_at(res.sigma) <= mp.mpf("1e-11")
    assert res.sigma_violated is not None and delta_at(res.sigma_violated) > mp.mpf("1e-11")
    assert res.sigma - res.sigma_violated <= 10 * res.step


@pytest.mark.slow
def test_a_budget_spent_in_the_k_violation_search_keeps_the_proved_claim(monkeypatch):
    """Attack review: a --max-seconds budget that ran out while the k > 1 violation was searched
    discarded the proved claim (exit 3). The claim is kept, one-sided, and the reason says why;
    the search is made to run out deterministically (no wall clock)."""
    import certdp.calibrate.random_allocation_dp as rad
    from certdp.errors import BudgetExhausted

    def runs_out(*args, **kwargs):
        raise BudgetExhausted("max_seconds=5 ran out after 5.0 s while the k > 1 violation search; no certified answer")

    monkeypatch.setattr(rad, "_k_violation", runs_out)
    res = rad.calibrate_eps_delta(4, 1, 1, Fraction(1, 10**3), k=2)
    assert res.sigma_violated is None and res.delta_lower_at_miss is None and res.k == 2
    assert "ran out" in res.miss_reason and "claim was proved" in res.miss_reason
    # the claim is the reduced pair's (2 steps, 2 epochs), proved at delta <= 1e-3
    assert res.delta_upper.upper <= Fraction(1, 10**3)
    assert allocation_delta_bounds(res.sigma, 2, 2, 1, rel_width=Fraction(1, 100)).lower <= Fraction(1, 10**3)


def test_width_advice_never_names_a_rel_width_of_1() -> None:
    """Attack review: bounds [0, upper] (relative width 1) were met with "a rel_width of 1 accepts
    them", which the CLI refuses (rel-width must be < 1)."""
    from certdp.notions.allocation_dp import _not_reached

    msg = str(_not_reached("epsilon", Fraction(1, 1000), (Fraction(0), Fraction(1, 3)), "x"))
    assert "no rel_width below 1 accepts them" in msg and "a rel_width of 1 accepts" not in msg
    msg = str(_not_reached("epsilon", Fraction(1, 1000), (Fraction(1, 4), Fraction(1, 3)), "x"))
    assert "a rel_width of 0.25 accepts them" in msg


def test_a_failed_reduction_keeps_the_errors_fields():
    """The k > 1 error (the reduced run's failure, with the setting and what the statistic proves)
    is the same type with the same fields: the exit code and the JSON error record read
    achieved_width and max_prec from it (a copy by hand once dropped max_prec)."""
    from certdp.errors import PrecisionExhausted
    from certdp.notions.allocation_dp import _with_k_lower

    red = k_reduction(6, 1, 2)
    exc = PrecisionExhausted("rel_width=0.001 not reached", achieved_width=0.25, max_prec=512)
    out = _with_k_lower(exc, red, None, Fraction(1, 10**5), ("remove",))
    assert type(out) is PrecisionExhausted and (out.achieved_width, out.max_prec) == (0.25, 512)
    assert str(out).startswith("k=2 of steps=6, epochs=1") and "rel_width=0.001 not reached" in str(out)
