"""Every refuted claim is argued: it quotes its source, its note says why the words as written are
false, and an independent recomputation (mpmath, 50 digits, written here from the formulas, sharing
no code with certdp) lands outside the printed number's interval on the same side as certdp's
certified enclosure. A new refutation in the committed report without a recomputation here fails."""

import json
from fractions import Fraction
from pathlib import Path

from mpmath import binomial, exp, log, mp, mpf, ncdf

from certdp.claims import shipped_claims

REPORT = Path(__file__).resolve().parents[2] / "claims_report" / "report.json"


def _abadi_ma_e400():
    """Moments accountant at q = 0.01, sigma = 4, T = 40000, delta = 1e-5 with the exact log moments
    of the Poisson-subsampled Gaussian at integer orders (binomial expansion), classic conversion."""
    q, s, t, d = mpf("0.01"), mpf(4), 40000, mpf("1e-5")
    best = None
    for a in range(2, 65):  # every integer order up to 64: the paper's lambda <= 32 is inside
        moment = sum(binomial(a, k) * (1 - q) ** (a - k) * q**k * exp((k * k - k) / (2 * s * s)) for k in range(a + 1))
        eps = t * log(moment) / (a - 1) + log(1 / d) / (a - 1)
        best = eps if best is None else min(best, eps)
    return best


def _autodp_ana_gm_2():
    """delta(eps = 2) of the Gaussian mechanism (sensitivity 1) at the printed sigma (and at the float
    it prints, whose exact value differs by under an ulp)."""
    out = []
    for s in (
        mpf("2.6529219041434144"),
        mpf(Fraction(2.6529219041434144).numerator) / Fraction(2.6529219041434144).denominator,
    ):
        out.append(ncdf(1 / (2 * s) - 2 * s) - exp(2) * ncdf(-1 / (2 * s) - 2 * s))
    return max(out), min(out)


#: uid -> (recomputation, the side of the printed interval it must fall on)
REFERENCES = {
    "abadi-2016:ma-E400": (lambda: (_abadi_ma_e400(),) * 2, "above"),
    "autodp:ana-gm-2-1e-8": (_autodp_ana_gm_2, "above"),
}


def _refuted():
    return {c["id"]: c for c in json.loads(REPORT.read_text())["claims"] if c["status"] == "refuted"}


def test_every_refutation_has_an_independent_recomputation():
    assert set(_refuted()) == set(REFERENCES)


def test_refutations_quote_their_source_and_argue():
    claims = {c.uid: c for c in shipped_claims()}
    for uid in REFERENCES:
        c = claims[uid]
        assert c.category == "printed", uid  # a refutation is of words the source prints, never a derived check
        assert c.quote and c.quote in c.note, uid  # the note quotes the source's own words
        assert "As written" in c.note, uid


def test_recomputations_agree_with_the_certified_refutation():
    mp.dps = 50
    refuted = _refuted()
    claims = {c.uid: c for c in shipped_claims()}
    for uid, (recompute, side) in REFERENCES.items():
        hi, lo = recompute()
        c, rec = claims[uid], refuted[uid]
        if c.kind == "value":
            edge = c.target.upper
        else:  # a bound "q <= v" is refuted when q > v
            edge = c.target.lower
        assert side == "above"
        assert Fraction(str(lo)) > edge, (uid, lo, edge)  # the recomputation refutes on its own
        cert = rec["certified"]
        # and lies in (or within 1e-12 relative of) certdp's certified enclosure
        assert Fraction(cert["lower"]) * (1 - Fraction(1, 10**12)) <= Fraction(str(hi)), uid
        assert Fraction(str(lo)) <= Fraction(cert["upper"]) * (1 + Fraction(1, 10**12)), uid
