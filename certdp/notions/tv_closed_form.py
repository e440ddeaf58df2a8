"""Closed-form total-variation and attack bounds for random allocation (arXiv:2610.09651 §3).

All results are certified enclosures (docs/math.md §8 and §9.2). With x = chi^2 of one epoch:
c_E = (1 + x)^E - 1 is chi^2 of E epochs; U(c) = sqrt(c)/2 (c <= 1), c/(1+c) (c >= 1) bounds
TV (arXiv:2610.09651 eq. (10), tight; docs/math.md §8); the best balanced membership attack has accuracy 1/2 + TV/2.
"""

from __future__ import annotations

from fractions import Fraction

from certdp.enclose import DEFAULT_TARGET, Ball, Enclosure, Target, phi, phi_inv_upper, refine, to_ball
from certdp.pairs import RandomAllocation
from certdp.pairs.params import Number, integer, real


def _lambda(lam: Number) -> Fraction:
    return real("tv", lam, gt=0, lt=1)


def c_of_lambda(lam: Number) -> Fraction:
    """The chi^2 level whose U equals lambda: 4 lambda^2 (lambda <= 1/2) or lambda/(1-lambda). Exact.

    Contract: exact; U(c_of_lambda(l)) = l (docs/math.md §8; proofs_checks ``ra_u_continuity``).
    """
    v = _lambda(lam)
    return 4 * v * v if v <= Fraction(1, 2) else v / (1 - v)


def _u_exact_end(c: Ball) -> Ball:
    """U at an exact point c >= 0 (the branch is decided exactly)."""
    return c.sqrt() / 2 if c <= 1 else c / (1 + c)


def u_of_c(c: Ball) -> Ball:
    """U(c) over the ball c: U is increasing and continuous (both branches give 1/2 at c = 1), so
    the hull of U at the two exact ends contains U(c) for every c in the ball.

    Contract: contains U(c) for every c >= 0 in the ball (U increasing, continuous; tight:
    proofs_checks ``ra_u_tight``, ``ra_u_continuity``).
    """
    lo = c.lower().max(to_ball(0))
    return _u_exact_end(lo).union(_u_exact_end(c.upper()))


def chi2_epochs_ball(pair: RandomAllocation) -> Ball:
    """c_E = expm1(E log1p(x)), x = (e^{1/sigma^2}-1)/M.

    Contract: contains c_E (docs/math.md §9.2).
    """
    return (pair.epochs * pair.chi2_one_epoch().log1p()).expm1()


def chi2_epochs(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains c_E = (1 + (e^{1/sigma^2}-1)/M)^E - 1 (docs/math.md §9.2; proofs_checks
    ``ra_chi2_one_epoch``, ``ra_product_epochs``, ``ra_c_e_bounds``)."""
    return refine(lambda: chi2_epochs_ball(pair), target, what="chi2")


def log1p_chi2_epochs(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains log(1 + c_E) = E log1p((e^{1/sigma^2}-1)/M) (docs/math.md §9.2): the
    size of a c_E beyond the range of an Enclosure (sigma = 0.001 gives c_E ~ e^1000000)."""
    return refine(lambda: pair.epochs * pair.chi2_one_epoch().log1p(), target, what="log1p_chi2")


def tv_upper_closed_form(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains U(c_E) < 1 (upper end capped at 1); its upper end is a certified upper bound on TV(P^E, Q^E)
    (arXiv:2610.09651 Thm 3.3; docs/math.md §8 and §9.2; proofs_checks
    ``ra_u_cauchy_schwarz``, ``ra_u_tight``)."""
    return _at_most_1(refine(lambda: u_of_c(chi2_epochs_ball(pair)), target, what="tv_upper"))


def _at_most_1(enc: Enclosure) -> Enclosure:
    """``enc`` with its upper end capped at 1, for a quantity known to be < 1 (U(c) = c/(1+c) and
    1/2 + U/2): an end above 1 is ball rounding only (sigma = 0.001 gave 1.0000000000000000002)."""
    if enc.upper <= 1:
        return enc
    return Enclosure.from_bounds(min(enc.lower, Fraction(1)), Fraction(1), enc.prec_bits)


def attack_accuracy_upper(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains 1/2 + U(c_E)/2 < 1 (upper end capped at 1); its upper end bounds every
    balanced membership attack."""
    return _at_most_1(refine(lambda: (1 + u_of_c(chi2_epochs_ball(pair))) / 2, target, what="accuracy"))


def tpr_upper(pair: RandomAllocation, fpr: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains a + sqrt(c_E a (1 - a)); the upper end bounds the TPR of every test with
    false-positive rate a in (0, 1/2] (arXiv:2610.09651 Prop. B.2; docs/math.md §8; proofs_checks
    ``ra_tpr_bound``)."""
    a = real("fpr", fpr, gt=0, le=Fraction(1, 2))

    def compute() -> Ball:
        ab = to_ball(a)
        return ab + (chi2_epochs_ball(pair) * ab * (1 - ab)).sqrt()

    return refine(compute, target, what="tpr")


def sigma_closed_form(steps: Number, epochs: Number, lam: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains sigma(M, E, lambda) = [ln(1 + M((1 + c_lambda)^{1/E} - 1))]^{-1/2}
    (proofs_checks ``ra_sigma_closed_form``), the
    noise at which U(c_E) = lambda (arXiv:2610.09651 Cor. 3.4; docs/math.md §9.2)."""
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    c = c_of_lambda(lam)

    def compute() -> Ball:
        inner = (to_ball(c).log1p() / e).expm1()  # (1+c)^{1/E} - 1
        return 1 / (m * inner).log1p().sqrt()

    return refine(compute, target, what="sigma")


def epochs_closed_form(steps: Number, sigma: Number, lam: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains E* = ln(1 + c_lambda)/ln(1 + (e^{1/sigma^2} - 1)/M): U(c_E) <= lambda
    exactly when E <= E* (c_E increases with E). Proof: solve c_E = c_lambda (proofs_checks
    ``ra_solve_e_m``)."""
    pair = RandomAllocation(steps, sigma, 1)
    c = c_of_lambda(lam)
    return refine(lambda: to_ball(c).log1p() / pair.chi2_one_epoch().log1p(), target, what="epochs")


def steps_closed_form(epochs: Number, sigma: Number, lam: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains M* = (e^{1/sigma^2} - 1)/((1 + c_lambda)^{1/E} - 1): U(c_E) <= lambda
    exactly when M >= M*. Proof: solve c_E = c_lambda for M (proofs_checks ``ra_solve_e_m``)."""
    e = integer("epochs", epochs, ge=1)
    s = real("sigma", sigma, gt=0)
    c = c_of_lambda(lam)

    def compute() -> Ball:
        return (1 / to_ball(s) ** 2).expm1() / (to_ball(c).log1p() / e).expm1()

    return refine(compute, target, what="steps")


def gdp_limit_mu(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains mu = sqrt((E/M)(e^{1/sigma^2} - 1)) (proofs_checks ``ra_gdp_limit``), the
    GDP limit as E/M -> r (arXiv:2610.09651 Thm 3.5; docs/math.md §9.4). A limit: it carries NO finite-M guarantee."""
    return refine(lambda: (pair.epochs * pair.chi2_one_epoch()).sqrt(), target, what="mu")


def gdp_limit_tv(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains 2 Phi(mu/2) - 1 for the GDP-limit mu (proofs_checks ``ra_gdp_limit``,
    ``gdp_delta_formula``). NO finite-M guarantee (a limit)."""
    return refine(lambda: 2 * phi((pair.epochs * pair.chi2_one_epoch()).sqrt() / 2) - 1, target, what="tv")


def sigma_gdp_limit(steps: Number, epochs: Number, lam: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains the sigma at which the GDP limit meets lambda:
    mu_lambda = 2 Phi^{-1}((1+lambda)/2) and sigma = [ln(1 + (M/E) mu_lambda^2)]^{-1/2}.
    The second (limit-based) multiplier: NO finite-M guarantee (proofs_checks ``ra_gdp_limit``)."""
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    v = _lambda(lam)

    def compute() -> Ball:
        mu = 2 * phi_inv_upper(to_ball((1 - v) / 2))
        return 1 / (to_ball(Fraction(m, e)) * mu * mu).log1p().sqrt()

    return refine(compute, target, what="sigma")


def pinsker_d2_tv_upper(pair: RandomAllocation, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains sqrt(D_2/2), D_2 = E ln(1 + x) = ln(1 + c_E): Pinsker with KL <= D_2
    (Mahloujifar et al., see arXiv:2610.09651 App. B.2; docs/math.md §8; proofs_checks
    ``ra_pinsker_d2``). For comparison; looser than U(c_E)."""
    return refine(lambda: (pair.epochs * pair.chi2_one_epoch().log1p() / 2).sqrt(), target, what="tv_upper")


def sigma_pinsker_d2(steps: Number, epochs: Number, lam: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Contract: contains the sigma at which sqrt(D_2/2) = lambda:
    sigma = [ln(1 + M expm1(2 lambda^2 / E))]^{-1/2} (proofs_checks ``ra_pinsker_d2``)."""
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    v = _lambda(lam)
    return refine(lambda: 1 / (m * (to_ball(2 * v * v) / e).expm1()).log1p().sqrt(), target, what="sigma")
