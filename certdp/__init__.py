"""certdp: certified differential-privacy accounting.

Every number certdp calls certified is an :class:`Enclosure` computed in Arb ball arithmetic.

>>> import certdp
>>> pair = certdp.compose(certdp.SubsampledGaussian(q="0.01", sigma="1.0"), 500)
>>> res = certdp.epsilon(pair, delta="1e-5")
>>> float(res.sound) > 0
True
"""

__version__ = "0.1.0"

from certdp.enclose import Enclosure, Target, Verdict, certainly_le, certainly_lt, le, lt, workprec
from certdp.errors import (
    CertdpError,
    CertificateInvalid,
    InvalidArgument,
    LimitExceeded,
    PrecisionExhausted,
    Undecided,
    Unsupported,
)
from certdp.notions import (
    ConversionResult,
    RhoResult,
    cgf,
    classic_zcdp_epsilon,
    delta,
    epsilon,
    gap,
    kl,
    rdp,
    rho,
    rho_detail,
)
from certdp.pairs import (
    Composition,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    GaussianMixture,
    GeneralizedGaussian,
    Laplace,
    PrivacyPair,
    StudentT,
    SubsampledGaussian,
    compose,
)

__all__ = [
    "CertdpError",
    "CertificateInvalid",
    "Composition",
    "ConversionResult",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Enclosure",
    "Gaussian",
    "GaussianMixture",
    "GeneralizedGaussian",
    "InvalidArgument",
    "Laplace",
    "LimitExceeded",
    "PrecisionExhausted",
    "PrivacyPair",
    "RhoResult",
    "StudentT",
    "SubsampledGaussian",
    "Target",
    "Undecided",
    "Unsupported",
    "Verdict",
    "__version__",
    "certainly_le",
    "certainly_lt",
    "cgf",
    "classic_zcdp_epsilon",
    "compose",
    "delta",
    "epsilon",
    "gap",
    "kl",
    "le",
    "lt",
    "rdp",
    "rho",
    "rho_detail",
    "workprec",
]
