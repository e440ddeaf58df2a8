"""certdp: certified differential-privacy accounting.

Every number certdp calls certified is an :class:`Enclosure` computed in Arb ball arithmetic.

>>> import certdp
>>> pair = certdp.compose(certdp.SubsampledGaussian(q="0.01", sigma="1.0"), 500)
>>> res = certdp.epsilon(pair, delta="1e-5")  # the one rule: PLD lattice bounds here
>>> res.via, res.enclosure.lower <= res.enclosure.upper
('pld', True)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> the module that defines it. ``import certdp`` imports none of them (nor flint):
#: each is imported on first use (module ``__getattr__``), so ``certdp --version`` and ``--help``
#: start fast; ``certdp.epsilon`` and ``from certdp import Gaussian`` work as before.
_EXPORTS: dict[str, str] = {
    "Enclosure": "certdp.enclose",
    "Target": "certdp.enclose",
    "Verdict": "certdp.enclose",
    "certainly_le": "certdp.enclose",
    "certainly_lt": "certdp.enclose",
    "le": "certdp.enclose",
    "lt": "certdp.enclose",
    "workprec": "certdp.enclose",
    "CertdpError": "certdp.errors",
    "CertificateInvalid": "certdp.errors",
    "InvalidArgument": "certdp.errors",
    "LimitExceeded": "certdp.errors",
    "PrecisionExhausted": "certdp.errors",
    "Undecided": "certdp.errors",
    "Unsupported": "certdp.errors",
    "ConversionResult": "certdp.notions",
    "EpsDeltaResult": "certdp.notions",
    "RhoResult": "certdp.notions",
    "cgf": "certdp.notions",
    "classic_zcdp_epsilon": "certdp.notions",
    "delta": "certdp.notions",
    "epsilon": "certdp.notions",
    "gap": "certdp.notions",
    "kl": "certdp.notions",
    "rdp": "certdp.notions",
    "rho": "certdp.notions",
    "rho_detail": "certdp.notions",
    "Composition": "certdp.pairs",
    "DiscreteGaussian": "certdp.pairs",
    "DiscreteLaplace": "certdp.pairs",
    "Gaussian": "certdp.pairs",
    "GaussianMixture": "certdp.pairs",
    "GeneralizedGaussian": "certdp.pairs",
    "Laplace": "certdp.pairs",
    "PrivacyPair": "certdp.pairs",
    "StudentT": "certdp.pairs",
    "SubsampledGaussian": "certdp.pairs",
    "compose": "certdp.pairs",
}

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, eagerly
    from certdp.enclose import (
        Enclosure,
        Target,
        Verdict,
        certainly_le,
        certainly_lt,
        le,
        lt,
        workprec,
    )
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
        EpsDeltaResult,
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
    "EpsDeltaResult",
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


def __getattr__(name: str) -> Any:
    """Contract: the public name ``name`` (imported from its module on first use, then cached in
    this module), or the submodule ``certdp.<name>``; AttributeError otherwise."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):  # dunder probes (doctest's __test__, copy's __deepcopy__) are not submodules
        try:
            return importlib.import_module(f"certdp.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"certdp.{name}":
                raise  # the submodule exists but one of its own imports is missing
    raise AttributeError(f"module 'certdp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
