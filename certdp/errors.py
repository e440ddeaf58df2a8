"""The one error tree of certdp.

Every error certdp raises on purpose derives from :class:`CertdpError`. The CLI maps
``InvalidArgument``/``Unsupported``/``CertificateMalformed`` to exit 2, ``CertificateInvalid`` to exit 1
and ``PrecisionExhausted``/``BudgetExhausted``/``Undecided`` to exit 3.
Messages are one line and name the parameter and its value, e.g. ``sigma=-1 must be > 0``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TypeVar


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


class BudgetExhausted(CertdpError):
    """A caller's wall-time budget (``--max-seconds``, certdp.budget) ran out before an answer.

    Not a PrecisionExhausted: code that retries at a higher precision on PrecisionExhausted must
    not retry this one. The CLI maps it to exit 3 as well."""


class Undecided(CertdpError):
    """A certified comparison could not be decided: the ball straddles the target."""


class CertificateInvalid(CertdpError):
    """A certificate's digest, signature, claim or recorded number does not hold (exit 1)."""


class CertificateMalformed(CertificateInvalid, ValueError):
    """A certificate cannot be read as one: not strict JSON, outside the schema, or a check whose
    fields cannot mean a proof (a method that does not fit its relation, a refutation not one step
    below the claim). The CLI maps it to exit 2, like every unparseable input; it stays a
    CertificateInvalid for code that only asks whether a file is acceptable."""


#: an error type kept by reworded / prefixed
E = TypeVar("E", bound=BaseException)


def reworded(exc: E, message: str) -> E:
    """An error of ``exc``'s type with ``message``, carrying exc's extra fields (achieved_width,
    max_prec, result), so that a caller who adds context keeps what the exit code and the JSON
    error record read from them.

    Contract: same type and fields as ``exc``; only the message changes."""
    out = type(exc).__new__(type(exc))
    out.__dict__.update(exc.__dict__)
    out.args = (message,)
    return out


def prefixed(exc: E, prefix: str) -> E:
    """An error of ``exc``'s type whose message is ``prefix: message`` (e.g. the user's setting
    before a message about a reduced run), carrying exc's extra fields (achieved_width, max_prec,
    result).

    Contract: same type and fields as ``exc``; only the message changes."""
    return reworded(exc, f"{prefix}: {exc}")


def fmt_value(value: object) -> str:
    """Render a parameter value for an error message (``sigma=-1``, ``q=nan``).

    Contract: integral floats below 2^53 print without a fraction, larger ones as repr (1e+300);
    blank strings as ``''``; other values as str(), cut to at most MAX_SHOWN characters (a 5000-digit
    argument is named, not echoed).
    """
    if isinstance(value, float) and value.is_integer():
        # sigma=2, not 2.0; past 2^53 the digits str(int()) would spell are float artefacts (1e300
        # printed 301 of them), so a large one keeps its exponent form: count=1e+300
        return str(int(value)) if abs(value) < 2**53 else repr(value)
    if isinstance(value, Fraction) and value.denominator != 1:
        # a message names the value, it does not record it: the nearest float reads best (0.1, 1e-12)
        digits = round((abs(value.numerator).bit_length() - value.denominator.bit_length()) * 0.30103)
        try:
            near = float(value)
        except OverflowError:
            return f"<rational of about 10^{digits}>"
        return repr(near) if near != 0 else f"<rational of about 10^{digits}>"
    if isinstance(value, Fraction):
        value = value.numerator
    if isinstance(value, str) and (not value.strip() or not value.isprintable()):
        value = repr(value)  # '' or '1\n2': a message stays one visible line
    text = str(value) if not isinstance(value, int) or value.bit_length() < 200 else _big_int(value)
    if len(text) > MAX_SHOWN:
        # both ends: a path's file name and a number's exponent sit at the end
        return f"{text[:28]}...<{len(text)} characters>...{text[-28:]}"
    return text


def _big_int(value: int) -> str:
    try:
        return f"{float(value):.6g}"
    except OverflowError:
        return f"<integer of about 10^{round(value.bit_length() * 0.30103)}>"


#: Longest echo of an offending value in an error message.
MAX_SHOWN = 80


def invalid(name: str, value: object, requirement: str) -> InvalidArgument:
    """Build the canonical one-line error ``name=value requirement``.

    Contract: an InvalidArgument whose message is ``name=value requirement``.
    """
    return InvalidArgument(f"{name}={fmt_value(value)} {requirement}")
