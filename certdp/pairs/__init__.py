"""Privacy pairs: frozen, validated descriptions with certified CGFs (docs/math.md §4)."""

from certdp.pairs.additive import Gaussian, Laplace
from certdp.pairs.base import PrivacyPair
from certdp.pairs.composition import Composition, compose
from certdp.pairs.discrete import DiscreteGaussian, DiscreteLaplace
from certdp.pairs.gaussian_shifts import GaussianShifts
from certdp.pairs.generalized_gaussian import GeneralizedGaussian
from certdp.pairs.mixture import GaussianMixture
from certdp.pairs.random_allocation import RandomAllocation
from certdp.pairs.randomized_response import RandomizedResponse
from certdp.pairs.student_t import StudentT
from certdp.pairs.subsampled import DIRECTIONS, SubsampledGaussian
from certdp.pairs.subsampled_laplace import SubsampledLaplace
from certdp.pairs.zcdp_bound import ZcdpBound

#: CLI mechanism name -> pair class.
MECHANISMS: dict[str, type[PrivacyPair]] = {
    cls.mechanism: cls
    for cls in (
        Gaussian,
        Laplace,
        GaussianMixture,
        StudentT,
        GeneralizedGaussian,
        DiscreteLaplace,
        DiscreteGaussian,
        SubsampledGaussian,
        RandomAllocation,
    )
}

__all__ = [
    "DIRECTIONS",
    "MECHANISMS",
    "Composition",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "GaussianMixture",
    "GaussianShifts",
    "GeneralizedGaussian",
    "Laplace",
    "PrivacyPair",
    "RandomAllocation",
    "RandomizedResponse",
    "StudentT",
    "SubsampledGaussian",
    "SubsampledLaplace",
    "ZcdpBound",
    "compose",
]
