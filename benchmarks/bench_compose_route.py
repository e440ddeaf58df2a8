"""Two routes to the n-fold composition of one step's lattice pmf, on the real pmf of the
CIFAR-10 setting (q = 256/50000, sigma = 1.1, 9766 steps, the remove direction, at the spacing the
default eps query ends on, h = 2^-14 x 11/8), side by side from one run:

- certdp's route: exact fixed-point binary powering (certdp.notions.pld_fixed.compose_fixed:
  FLINT fmpz_poly products, rounded down after each, about 2 log2(n) of them);
- the route dp_accounting takes in floats, in ball arithmetic: one ball DFT (python-flint's
  acb.dft) of the pmf padded to the composed length, the pointwise n-th powers, one inverse DFT.
  Its coefficients would still need the aliasing (wrap-around) mass bounded by the tail bounds
  and the absolute error of the small coefficients; this script only times it.

Run: python benchmarks/bench_compose_route.py

Measured (2026-12-05, `python benchmarks/bench_compose_route.py`, load ~3 from other jobs on the
2-core machine; the ratio is from one run): one-step cells 27,269, composed length 108,135, DFT
length 2^17; fixed-point powering 0.99 s, ball DFT route at 128 bits 1.67 s (forward 0.49,
powers 0.53, inverse 0.65): the DFT route is 1.7x slower on the plain lattice timed here, and
pld_bounds composes the split lattice (fine bulk, coarse tail: certdp.notions.pld_split), which
took about 0.5 s per side in the same setting (profile of `pld_bounds`), i.e. ~3x less than the
DFT route, before the DFT route's aliasing and small-coefficient bounds. certdp keeps the
product route.
"""

from __future__ import annotations

import time
from fractions import Fraction

from flint import acb, ctx

from certdp.enclose import workprec
from certdp.notions.pld import resolution
from certdp.notions.pld_fixed import compose_fixed
from certdp.notions.pld_lattice import lattice_for, upper_lattice_pmf
from certdp.pairs import SubsampledGaussian

Q, SIGMA, STEPS, DELTA = "256/50000", "1.1", 9766, Fraction(1, 10**5)
H = Fraction(11, 8 * 2**14)


def main() -> None:
    pair = SubsampledGaussian(Q, SIGMA, "remove")
    floor, tail_bits = resolution(DELTA, STEPS)
    with workprec(128):
        pmf = upper_lattice_pmf(pair, lattice_for(pair, H, tail_bits))
        t0 = time.perf_counter()
        composed = compose_fixed("upper", [(pmf, STEPS)], floor)
        t_fixed = time.perf_counter() - t0
    length = len(composed.coeffs)
    size = 1 << (length - 1).bit_length()
    ctx.prec = 128
    masses = [acb(c.mid().str(30, radius=False)) for c in pmf.coeffs] + [acb(0)] * (size - len(pmf.coeffs))
    t0 = time.perf_counter()
    spectrum = acb.dft(masses)
    t1 = time.perf_counter()
    powered = [z**STEPS for z in spectrum]
    t2 = time.perf_counter()
    acb.dft(powered, inverse=True)
    t3 = time.perf_counter()
    t_dft = t3 - t0
    print(f"one-step cells {len(pmf.coeffs)}, composed length {length}, DFT length 2^{size.bit_length() - 1}")
    print(f"fixed-point powering (certdp): {t_fixed:.2f} s")
    print(
        f"ball DFT route at 128 bits: {t_dft:.2f} s (forward {t1 - t0:.2f}, powers {t2 - t1:.2f}, "
        f"inverse {t3 - t2:.2f}); DFT / fixed = {t_dft / t_fixed:.1f}"
    )


if __name__ == "__main__":
    main()
