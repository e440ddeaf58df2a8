"""Refuse Ed25519 public keys of small order and non-canonical point encodings.

A public key A of small order (A in the 8-torsion: the identity and 7 other points) lets a forger
pass the verification equation [S]B = R + [k]A for *any* message: take A = identity, R = identity,
S = 0. RFC 8032 verification does not exclude such keys, so the cryptography package accepts them.
A certificate signed by such a key proves nothing about who signed it, so certdp refuses the key
itself. Non-canonical encodings (y >= p, or x = 0 with the sign bit set) are refused too, so that
one key has exactly one spelling.

Pure Python integers: decompression as in RFC 8032 Section 5.1.3, then [8]A by three doublings with
the affine twisted-Edwards addition law (a = -1), compared with the identity (0, 1).
"""

from __future__ import annotations

P = 2**255 - 19
#: the curve constant d = -121665/121666 mod p of edwards25519 (RFC 8032 Section 5.1)
D = (-121665 * pow(121666, P - 2, P)) % P
#: sqrt(-1) mod p, used by the square root of RFC 8032 Section 5.1.3
SQRT_M1 = pow(2, (P - 1) // 4, P)


def decompress(raw: bytes) -> tuple[int, int] | None:
    """The affine point (x, y) that the 32 bytes encode, or None if they are not a canonical encoding.

    Contract: RFC 8032 Section 5.1.3 decoding; None for a wrong length, y >= p, no square root for
    x, or x = 0 with the sign bit set (the two non-canonical cases); the result lies on the curve.
    """
    if len(raw) != 32:
        return None
    n = int.from_bytes(raw, "little")
    sign = n >> 255
    y = n & ((1 << 255) - 1)
    if y >= P:
        return None
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P  # never 0: d is not a square mod p
    # x = u v^3 (u v^7)^((p-5)/8), a candidate root of x^2 = u/v
    x = (u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P)) % P
    vx2 = (v * x * x) % P
    if vx2 == u % P:
        pass
    elif vx2 == (-u) % P:
        x = (x * SQRT_M1) % P
    else:
        return None
    if x == 0 and sign == 1:
        return None
    if (x & 1) != sign:
        x = P - x
    return x, y


def _add(p1: tuple[int, int], p2: tuple[int, int]) -> tuple[int, int]:
    """Affine addition on -x^2 + y^2 = 1 + d x^2 y^2 (complete: the denominators never vanish)."""
    x1, y1 = p1
    x2, y2 = p2
    t = (D * x1 * x2 * y1 * y2) % P
    x3 = (x1 * y2 + y1 * x2) * pow((1 + t) % P, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow((1 - t) % P, P - 2, P) % P
    return x3, y3


def times_eight(point: tuple[int, int]) -> tuple[int, int]:
    """Contract: [8]point by three doublings with the complete affine addition law."""
    for _ in range(3):
        point = _add(point, point)
    return point


def public_key_problem(raw: bytes) -> str | None:
    """Why the 32 raw bytes are not an acceptable Ed25519 public key, or None if they are.

    Contract: None exactly when ``raw`` is a canonical encoding (RFC 8032 Section 5.1.3) of a curve
    point A with [8]A != identity (A not of small order); otherwise a short reason.
    """
    point = decompress(raw)
    if point is None:
        return "not a canonical encoding of a curve point"
    if times_eight(point) == (0, 1):
        return "a point of small order (it would verify forged signatures)"
    return None
