"""The one error tree of certdp.

Every error certdp raises on purpose derives from :class:`CertdpError`. The CLI maps
``InvalidArgument``/``Unsupported`` to exit 2 and ``PrecisionExhausted``/``Undecided`` to exit 3.
Messages are one line and name the parameter and its value, e.g. ``sigma=-1 must be > 0``.
"""

from __future__ import annotations


class CertdpError(Exception):
    """Base class of every certdp error."""


class InvalidArgument(CertdpError, ValueError):
    """An argument is out of its domain (raised before any computation)."""


class LimitExceeded(InvalidArgument):
    """A request exceeds a documented work limit and is refused before the work is done
    (e.g. a certificate whose recomputation would take hours; see certdp.cert.limits)."""


class Unsupported(CertdpError):
    """The request is well formed but this version of certdp cannot certify it."""


class PrecisionExhausted(CertdpError):
    """The requested width was not reached within the precision or work budget."""

    def __init__(self, message: str, achieved_width: float | None = None, max_prec: int | None = None):
        super().__init__(message)
        self.achieved_width = achieved_width
        self.max_prec = max_prec


class Undecided(CertdpError):
    """A certified comparison could not be decided: the ball straddles the target."""


class CertificateInvalid(CertdpError):
    """A certificate is malformed, tampered with, or its claim is refuted."""


def fmt_value(value: object) -> str:
    """Render a parameter value for an error message (``sigma=-1``, ``q=nan``).

    Contract: integral floats print without a fraction; other values as str().
    """
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def invalid(name: str, value: object, requirement: str) -> InvalidArgument:
    """Build the canonical one-line error ``name=value requirement``.

    Contract: an InvalidArgument whose message is ``name=value requirement``.
    """
    return InvalidArgument(f"{name}={fmt_value(value)} {requirement}")
