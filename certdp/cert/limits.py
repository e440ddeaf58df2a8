"""Work limits of the certificate verifier, in one place (documented in docs/certificates.md).

A certificate is untrusted input: anyone can write one without a key, and the verifier
recomputes what it claims. So before any recomputation the verifier refuses a file outside
these limits (certdp.errors.LimitExceeded, exit code 2). They are set so that no file within
them makes ``certdp verify`` run much longer (~2x) or use much more memory (< 2 GiB) than the
largest committed certificate (certificates/README.md gives the measured figures).

Why each limit exists:
- file size, nesting depth, integer digits, decimal length and exponent: parsing and exact
  arithmetic on the parsed numbers stay cheap (a 1e999 exponent or a 100,000-digit integer
  would not);
- random allocation: the step lattice has cap/h cells (fewer when tail cells widen: a Python
  loop), the epoch sum lives on l_max M / h lattice points, its longest polynomial product is
  certdp.notions.tv_certified.longest_product, the log grid has log(l_max / l_min) / eta points
  and the epoch power has at most E (log(1/l_min) / eta + 2) coefficients; peak memory is
  estimated from the longest product as power_two_scale forms it (largest_product: at small
  sigma every partial sum is as long as the lattice, ~600 bytes per coefficient) and the ball
  lists (cap/h + l_max M/h points, ~80 bytes each), and must stay under MAX_MEMORY (1.5 GiB);
- PLD lattices: cells per step, precision and steps are bounded up front; the length of every
  polynomial product of the powers is checked before it is formed (MAX_PLD_PRODUCT);
- RDP orders: the recomputation costs about (number of orders) x (precision / 64) units, each
  growing mildly with the order (review round 3, one 2-core machine shared with another job:
  128 orders 64..191 at 1024 bits took 154 s wall, 8 orders near 2048 at 1024 bits 10 s), so
  both count x prec/64 (MAX_RDP_COUNT_WORK: the default 75 orders at up to 1024 bits, about
  half that worst case) and sum(orders) x prec/64 (MAX_RDP_ORDER_SUM_WORK) are bounded.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.errors import LimitExceeded

if TYPE_CHECKING:
    from certdp.notions.tv_certified import LatticeGrid

#: bytes read from a certificate file; a larger file (or an endless one, /dev/zero) is refused
MAX_FILE_BYTES = 1 << 20
#: nesting depth of JSON arrays and objects (format v1 needs 6)
MAX_DEPTH = 16
#: every JSON integer must be an exact binary64 integer (I-JSON, RFC 7493): |n| < 2^53
MAX_ABS_INT = (1 << 53) - 1
#: characters of a decimal string (exact binary64 grid values need about 60 significant digits)
MAX_DECIMAL_CHARS = 200
#: |exponent| of a decimal string written with e notation
MAX_DECIMAL_EXPONENT = 40

#: random allocation: steps M per epoch and epochs E
MAX_RA_STEPS = 2000
MAX_RA_EPOCHS = 1000
#: random allocation: cells of the step lattice (one Python-level Arb evaluation each, and a
#: float solve on the lower side), points of the epoch-sum lattice l_max M / h (Python-level
#: loops of step iii), the longest polynomial product of the epoch sum and of the epoch power
#: (about 0.35 KB of memory per coefficient at 128 bits), and log-grid points
MAX_STEP_CELLS = 1 << 18
MAX_SUM_POINTS = 1 << 22
#: measured (review round 2): a scheme-3 grid at an estimate of 3.89M peaked at 2.08 GB, and the
#: committed M = 250, E = 10 certificate needs 3.68M (0.9 GB: its fine parts are pruned shorter)
MAX_PRODUCT = 3_700_000
#: schemes 1 and 2 form full-length products in every squaring (scheme 3 only in its fine bulk):
#: review measured 3.1 GB at a 4.1M-coefficient estimate, so they get half the limit
MAX_PRODUCT_FULL = 1 << 21
MAX_LOG_POINTS = 1 << 18
#: random allocation: lattice points cap/h of one step value (one ball each, whatever the cells;
#: review found 2^24 of them took 3.8 GB) and the epoch power's product length (it is formed
#: about 2 log2(E) times)
MAX_STEP_POINTS = 1 << 21
MAX_POWER_PRODUCT = 1 << 21
#: random allocation: estimated peak memory of one certified bound, in bytes:
#: MEMORY_BASE + MEMORY_PER_COEFF x max(largest epoch-sum product, epoch-power product)
#: + MEMORY_PER_POINT x (step-lattice points cap/h + epoch-sum points l_max M/h).
#: Measured (review round 3, peak RSS of one tv_bound at 128 bits): at small sigma (M = 7,
#: sigma = 0.4027, h = 2^-9: every partial sum is as long as the lattice) the products drive it:
#: 2.24 GB at a 3.27M-coefficient product (lower side) and 1.41 GB at 2.20M (upper side) with
#: 2.81M lattice points; the committed M = 250, E = 10 certificate (0.92 GB) has short products
#: (0.79M) and long ball lists (4.83M points). The fit through those is ~600 bytes per product
#: coefficient and ~80 per lattice point over a ~65 MB process; docs/certificates.md has the table.
MEMORY_BASE = 64 << 20
MEMORY_PER_COEFF = 600
MEMORY_PER_POINT = 80
MAX_MEMORY = 3 << 29  # 1.5 GiB: the 2 GiB promise with margin for the fit's error
#: random allocation: working precision of a lattice bound
MAX_LATTICE_PREC = 128  # memory per coefficient grows with it; review: 256 bits doubled it
#: random allocation: smallest h and eta (powers of two) and the largest cap
MIN_GRID_SPACING = Fraction(1, 1 << 40)
MAX_CAP = 10**6

#: subsampled Gaussian: compositions, number of RDP orders, largest order
MAX_SG_STEPS = 10**8
MAX_ORDERS = 128
MAX_ORDER = 2048
#: precision of an RDP recomputation: start (recorded) and the verifier's ceiling
MAX_RDP_PREC = 1024
#: RDP recomputation work: len(orders) x max(prec, 64)/64 and sum(orders) x max(prec, 64)/64
MAX_RDP_COUNT_WORK = 75 * 16
MAX_RDP_ORDER_SUM_WORK = 1 << 18

#: PLD lattice checks (pld-upper, pld-lower): cells per step (one Python-level Arb tail evaluation
#: each), spacing h (a power of two) and offset granularity, working precision, pruning floor
#: 2^-bits, and compositions. The powers are guarded at run time instead of estimated: a product
#: longer than MAX_PLD_PRODUCT coefficients (fixed-point integers, ~50 bytes each) raises LimitExceeded
#: before it is formed (the committed DP-SGD certificates need under 300k). Attack round (issue 15):
#: 2^19 cells at 256 bits and 2^-400 pruning took 117 s and 4 GB for one direction, so cells,
#: precision and products were cut to what certdp writes (at most 90k cells, 128 bits).
MAX_PLD_CELLS = 1 << 18  # certdp.notions.pld_lattice.MAX_CELLS
#: a split lattice (fine bulk, coarse tails): the fine grid from lo to hi, on which its one-step
#: pmf is a polynomial (zeros between the tail points); the products stay bounded by MAX_PLD_PRODUCT
MAX_PLD_SPLIT_RANGE = 1 << 22
MIN_PLD_H = Fraction(1, 1 << 20)  # the work is bounded by MAX_PLD_CELLS and MAX_PLD_PRODUCT, not by h
MAX_PLD_H = Fraction(1, 1 << 4)
PLD_OFFSET_BITS = 40  # the offset is a multiple of h 2^-40
MIN_PLD_PREC, MAX_PLD_PREC = 64, 128
#: the least recorded precision each method's recomputation runs at: below it the enclosure code
#: cannot even represent the inputs exactly (an RDP check at 16 bits), so such a check is
#: "precision exhausted" (exit 3), not malformed
MIN_CHECK_PREC = {
    "rdp-orders": 53,
    "lattice-upper": 53,
    "lattice-lower": 53,
    "pld-upper": MIN_PLD_PREC,
    "pld-lower": MIN_PLD_PREC,
    "hockey-upper": 53,
    "hockey-lower": 53,
}
MIN_PRUNE_BITS, MAX_PRUNE_BITS = 40, 200
MAX_PLD_STEPS = 10**6  # certdp.notions.pld.MAX_STEPS: the products are capped by MAX_PLD_PRODUCT
MAX_PLD_PRODUCT = 1 << 22  # certdp.notions.pld.MAX_REFINE_PRODUCT: 0.5 GB at 10^6 steps
#: a merged pld-lower check (method lower = merged) sizes its units for its threshold: Q's
#: integers carry ceil(threshold / ln 2) + 2 extra bits, so the threshold is bounded (as
#: certdp.notions.cost.MERGED_MAX_EPS bounds the accountant's merged rounds)
MAX_MERGED_THRESHOLD = 40

#: random allocation's epsilon checks (hockey-upper, hockey-lower): the largest target epsilon
#: (certdp.notions.allocation_dp.MAX_EPS: the remove side needs epoch ratios up to e^eps), and the
#: margin above it up to which the check's lattice is kept (allocation_dp.CERT_EPS_MARGIN)
MAX_HOCKEY_EPS = Fraction(30)
HOCKEY_EPS_MARGIN = 1

#: noise scale sigma, and the calibration step between claim and refutation
MIN_SIGMA = Fraction(1, 1000)
MAX_SIGMA = Fraction(10**4)
MIN_STEP = Fraction(1, 10**12)
MAX_STEP = Fraction(1, 10)  # as calibrate allows: a larger step would say little about sigma


def refuse(field: str, value: object, limit: str) -> LimitExceeded:
    """Contract: the one-line error ``field=value exceeds the verifier limit ...``."""
    return LimitExceeded(f"{field}={value} exceeds the verifier limit {limit} (certdp.cert.limits)")


def at_most(field: str, value: int | Fraction, limit: int | Fraction) -> None:
    """Raise LimitExceeded unless ``value <= limit``.

    Contract: returns only if value <= limit.
    """
    if not value <= limit:
        raise refuse(field, value, f"<= {limit}")


def calibration_step(step: object) -> Fraction:
    """The calibration step between claim and refutation, validated against [MIN_STEP, MAX_STEP].

    Contract: the exact step, or InvalidArgument (``step=... must be ...``) / LimitExceeded
    (below MIN_STEP: a certificate records step >= MIN_STEP, and a bisection takes
    log2(sigma/step) probes) naming the value.
    """
    from certdp.errors import fmt_value
    from certdp.pairs.params import real

    st = real("step", step, gt=0, le=MAX_STEP)  # type: ignore[arg-type]
    if st < MIN_STEP:
        raise LimitExceeded(f"step={fmt_value(step)} is below {fmt_value(MIN_STEP)}, the smallest calibration step")
    return st


def recordable(name: str, value: object) -> None:
    """Refuse, before any work, an input a certificate could not record: the certificate writes
    every parameter as an exact decimal of at most MAX_DECIMAL_CHARS characters (so 1/3, or a
    delta of 1e-300 written out in 302 digits, cannot be recorded; sigma = k step is recordable
    when step is).

    Contract: returns only if ``value`` has a finite decimal expansion of at most
    MAX_DECIMAL_CHARS characters; else InvalidArgument naming ``name`` and the value.
    """
    from certdp.errors import InvalidArgument, fmt_value
    from certdp.pairs.params import as_fraction, decimal_str

    try:
        text = decimal_str(as_fraction(name, value), name)  # type: ignore[arg-type]
    except InvalidArgument as exc:
        raise InvalidArgument(f"{exc}: a certificate (--out) records exact decimals") from None
    if len(text) > MAX_DECIMAL_CHARS:
        raise InvalidArgument(
            f"{name}={fmt_value(value)} takes {len(text)} decimal characters; a certificate (--out) records at "
            f"most {MAX_DECIMAL_CHARS}"
        )


def grid_work(steps: int, epochs: int, sigma: float, grid: LatticeGrid, side: str, where: str = "grid") -> None:
    """Raise LimitExceeded when a certified TV run on ``grid`` (certdp.notions.tv_certified.tv_bound)
    would exceed the work limits above. The verifier applies it to every certificate grid; the
    producers (``certdp tv --method certified``, ``certdp calibrate random-allocation``) apply it
    before they compute, so they never start a run that would not finish or not verify.

    Contract: returns only if every work estimate of the run is within its limit (float estimates
    of array lengths; they choose what to refuse and never enter a certified number).
    """
    from certdp.notions.tv_certified import largest_product, longest_product, step_cells

    at_most(f"{where} epoch-sum points l_max M/h", math.ceil(grid.l_max * steps / grid.h), MAX_SUM_POINTS)
    span = math.log(grid.l_max / grid.l_min) / grid.eta
    at_most(f"{where} log-grid points log(l_max/l_min)/eta", math.ceil(span), MAX_LOG_POINTS)
    product = 2 * epochs * (math.ceil(-math.log(grid.l_min) / grid.eta) + 2)
    at_most(f"{where} epoch-power product 2 E (log(1/l_min)/eta + 2)", product, MAX_POWER_PRODUCT)
    at_most(f"{where} step lattice points cap/h", math.ceil(grid.cap / grid.h), MAX_STEP_POINTS)
    at_most(f"{where} step cells", step_cells(sigma, grid, MAX_STEP_CELLS), MAX_STEP_CELLS)
    cap_product = MAX_PRODUCT if grid.scheme == 3 else MAX_PRODUCT_FULL
    at_most(f"{where} epoch-sum product", longest_product(steps, sigma, grid, side), cap_product)
    points = math.ceil(grid.cap / grid.h) + math.ceil(grid.l_max * steps / grid.h)
    memory = MEMORY_BASE + MEMORY_PER_COEFF * max(largest_product(steps, sigma, grid, side), product)
    memory += MEMORY_PER_POINT * points
    at_most(f"{where} estimated memory (bytes; certdp.cert.limits.MAX_MEMORY)", memory, MAX_MEMORY)


def hockey_work(
    steps: int, epochs: int, sigma: float, grid: LatticeGrid, side: str, threshold: Fraction, where: str = "grid"
) -> None:
    """Raise LimitExceeded when a hockey-upper / hockey-lower check on ``grid`` would exceed the
    work limits beyond those of :func:`grid_work` (which bounds the rest of the run: the same
    epoch-sum lattice as a TV bound): its epoch power is kept up to log tau = threshold +
    HOCKEY_EPS_MARGIN, about E log(1/l_min)/eta + (threshold + 1)/eta coefficients (formed about
    2 log2(E) times; a lower-side check may also form the down lattice's power over the whole log
    grid, 2 E log(l_max/l_min)/eta), which must stay within MAX_POWER_PRODUCT and, in the memory estimate of
    :func:`grid_work`, within MAX_MEMORY.

    Contract: returns only if the float estimates are within the limits (they choose what to
    refuse and never enter a certified number).
    """
    from certdp.notions.tv_certified import largest_product

    top = math.ceil(float(threshold + HOCKEY_EPS_MARGIN) / grid.eta) + 2
    product = 2 * (epochs * (math.ceil(-math.log(grid.l_min) / grid.eta) + 2) + top)
    if side == "lower":  # a refutation may also build the down lattice, its power over the whole range
        product = max(product, 2 * epochs * (math.ceil(math.log(grid.l_max / grid.l_min) / grid.eta) + 2))
    at_most(f"{where} epoch-power product 2 (E (log(1/l_min)/eta + 2) + (eps + 1)/eta + 2)", product, MAX_POWER_PRODUCT)
    points = math.ceil(grid.cap / grid.h) + math.ceil(grid.l_max * steps / grid.h)
    memory = MEMORY_BASE + MEMORY_PER_COEFF * max(largest_product(steps, sigma, grid, side), product)
    memory += MEMORY_PER_POINT * points
    at_most(f"{where} estimated memory (bytes; certdp.cert.limits.MAX_MEMORY)", memory, MAX_MEMORY)
