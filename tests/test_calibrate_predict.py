"""The calibration's predicted finish (certdp.calibrate.pld._predicted_finish): floats choose one
claim probe and one refutation probe; whatever it returns must have been proved by those probes.
Here the probes are a synthetic second-order model (eps(k) a power of k, as eps is roughly a power
of sigma; each side off by a multiple of h^2, plus a jump the model does not know), so the exact
answer is known.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.calibrate.pld import _predicted_finish

H = Fraction(1, 2**12)


def _model(target: float, k_star: float, power: float, a_up: float, a_low: float, jump: float):
    """eps(k) = target (k / k_star)^power; up = eps + a_up h^2, low = eps - a_low h^2 - jump h."""
    calls: list[tuple[str, int, Fraction]] = []

    def eps(k: int) -> float:
        return target * (k / k_star) ** power

    def up(k: int, h: Fraction) -> Fraction:
        calls.append(("up", k, h))
        return Fraction(eps(k) + a_up * float(h) ** 2)

    def low(k: int, h: Fraction) -> Fraction:
        calls.append(("low", k, h))
        return Fraction(eps(k) - a_low * float(h) ** 2 - jump * float(h))

    return eps, up, low, calls


@settings(max_examples=200, deadline=None)
@given(
    k_star=st.floats(100000.3, 100000.7),
    start=st.sampled_from([-60000, -3000, -300, -20, 0, 20, 300, 3000, 150000]),
    power=st.floats(-2.0, -0.7),
    a_up=st.floats(1.0, 1e4),
    a_low=st.floats(1.0, 1e4),
    jump=st.sampled_from([0.0, 1e-6, 1e-4]),
    slope_error=st.sampled_from([0.1, 0.8, 1.0, 1.25, 10.0]),
)
def test_whatever_it_returns_was_proved_by_its_probes(
    k_star: float, start: int, power: float, a_up: float, a_low: float, jump: float, slope_error: float
) -> None:
    target = 3.0
    eps, up, low, calls = _model(target, k_star, power, a_up, a_low, jump)
    k0 = 100000 + start
    drop = -power * eps(k0) / k0 * slope_error  # the coarse slope, off by slope_error
    got = _predicted_finish(up, low, k0, 1, H, Fraction(target), drop)
    if got is None:
        return
    k, h_claim, h_miss, miss = got
    assert ("up", k, h_claim) in calls and up(k, h_claim) <= target
    assert h_claim <= H and h_miss <= H
    if miss is not None:
        assert ("low", k - 1, h_miss) in calls and miss == low(k - 1, h_miss) > target
        assert k == math.ceil(k_star)  # claim and refutation proved: the least k with eps(k) <= target
    assert eps(k) <= target


def test_a_clean_second_order_model_is_decided_in_one_estimate() -> None:
    """Both sides exactly second order: the estimate is exact, so the Newton point's two probes,
    one round of four probes and the two decisive ones (each possibly retried once) decide it
    (distinct probes: calibrate_pld caches repeated ones)."""
    target = 3.0
    _, up, low, calls = _model(target, 100000.5, -1.5, 2e3, 5e3, 0.0)
    got = _predicted_finish(up, low, 100003, 1, H, Fraction(target), 1.5 * target / 100003 * 0.9)
    assert got is not None and got[0] == 100001 and got[3] is not None
    assert len(set(calls)) <= 9


def test_a_target_never_met_by_the_claim_probe_gives_none() -> None:
    target = 3.0

    def up(k: int, h: Fraction) -> Fraction:
        return Fraction(4)  # never proves eps <= target

    def low(k: int, h: Fraction) -> Fraction:
        return Fraction(2)

    assert _predicted_finish(up, low, 1000, 1, H, Fraction(target), 1e-4) is None


def test_an_unproved_refutation_returns_the_claim_alone() -> None:
    """The claim proved but the step below not: (k, h_claim, finest spacing tried, None), for the
    caller's refinement to go on from."""
    target = 3.0
    eps, up, model_low, _ = _model(target, 100000.5, -1.5, 2e3, 5e3, 0.0)

    def low(k: int, h: Fraction) -> Fraction:
        # the model at the estimate's step; one step below, too low to prove the violation
        return model_low(k, h) if k == 100001 else Fraction(eps(k) - 1e-3)

    got = _predicted_finish(up, low, 100001, 1, H, Fraction(target), 1.5 * target / 100001)
    assert got is not None
    k, h_claim, h_miss, miss = got
    assert k == 100001 and miss is None and up(k, h_claim) <= target and h_miss < H


def test_the_prediction_usually_decides() -> None:
    """Not a soundness property: on smooth models from starts up to 2.5x off and coarse slopes up
    to 10x off, most runs end with both probes proved (else the prediction only adds probes)."""
    rng = random.Random(7)
    decided = 0
    for _ in range(60):
        power, start = rng.uniform(-2.0, -0.7), rng.choice([-60000, -300, 0, 300, 150000])
        eps, up, low, _ = _model(3.0, 100000.5, power, rng.uniform(1, 1e4), rng.uniform(1, 1e4), 0.0)
        k0 = 100000 + start
        got = _predicted_finish(up, low, k0, 1, H, Fraction(3), -power * eps(k0) / k0 * rng.choice([0.1, 1.0, 10.0]))
        decided += got is not None and got[3] is not None
    assert decided >= 45
