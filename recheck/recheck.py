#!/usr/bin/env python3
"""recheck: an independent kernel that rechecks a certdp certificate (format certdp-certificate/2).

Usage: python recheck/recheck.py CERT.json [--pubkey KEY.pub]

Exit 0: every claim and refutation in the file is proved.  Exit 1: one is not proved (tampered
digest or signature, a recorded end the mathematics does not give, a bad hint).  Exit 2: the file
is malformed, outside the kernel's work limits, or of a kind the kernel does not cover (named).
Random-allocation epsilon checks (hockey-upper, hockey-lower) are such a kind: their digest and
signature are checked, then the kernel reports them as "not rechecked by this kernel" (exit 2).

Written from docs/math.md (sections 1, 3, 4.7, 8, 9 and 10) and docs/certificates.md only; it imports the
standard library, python-flint (Arb balls, FLINT integer polynomials) and `cryptography` (Ed25519
signatures only), never certdp.  Every bound is computed here from the mechanism's parameters; the
file's lattices, orders and bits are hints whose validity is checked, and any valid hint gives a
sound bound, so a bad hint can only make a proof fail (exit 1), never accept a false claim.
"""

import base64
import decimal
import hashlib
import json
import math
import os
import re
import stat
import sys
from fractions import Fraction
from typing import Any

from flint import acb, arb, arb_poly, ctx, fmpz_poly

MAX_FILE = 1 << 20  # bytes of a certificate
MAX_DEPTH = 16
MAX_PRODUCT = 1 << 22  # coefficients of one fixed-point product (after the TV clamp)
COVERED = {"rdp-orders", "pld-upper", "pld-lower", "lattice-upper", "lattice-lower"}
REFUSED = {"hockey-upper", "hockey-lower"}  # random-allocation epsilon: integrity checked, bound not rechecked
MAX_TV_CELLS = 1 << 22  # epoch-sum points of a TV check
MAX_TV_STEP_POINTS = 1 << 21  # step-lattice points cap/h (certdp verify's limit; 4e6 took ~17 CPU-min)


class Malformed(Exception):
    """Exit 2: malformed input, outside the work limits, or a kind not covered."""


class NotProved(Exception):
    """Exit 1: a digest, signature, claim or refutation that is not proved."""


# ----------------------------------------------------------------------------- reading


# Proves nothing: reads at most MAX_FILE bytes of a regular file (no /dev/zero, FIFO or directory).
def read_capped(path: str, cap: int = MAX_FILE) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Malformed(f"file {path!r} cannot be opened ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Malformed(f"file {path!r} is not a regular file")
        data = b""
        while len(data) <= cap:
            chunk = os.read(fd, cap + 1 - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) > cap:
        raise Malformed(f"file {path!r} is larger than {cap} bytes")
    return data


# Proves the parsed value is what every strict JSON reader sees: no duplicate keys, NaN or huge ints.
def strict_json(data: bytes) -> Any:
    # Proves no key occurs twice in one object (two readers could see two different claims).
    def pairs(items: list) -> dict:
        out = {}
        for k, v in items:
            if k in out:
                raise Malformed(f"duplicate key {k!r}")
            out[k] = v
        return out

    # Proves nothing: refuses NaN and Infinity.
    def no_constant(name: str) -> None:
        raise Malformed(f"non-finite number {name} in JSON")

    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: also ints over 4300 digits
        raise Malformed(f"not strict UTF-8 JSON ({exc.__class__.__name__})") from None

    # Proves the nesting depth and every integer's magnitude are within the limits.
    def walk(v: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Malformed(f"JSON nesting deeper than {MAX_DEPTH}")
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return
        if isinstance(v, int) and abs(v) >= 1 << 53:
            raise Malformed(f"integer {v} has magnitude >= 2^53")
        if isinstance(v, float) and not math.isfinite(v):
            raise Malformed("non-finite number in JSON")
        for x in v.values() if isinstance(v, dict) else v if isinstance(v, list) else ():
            walk(x, depth + 1)

    walk(value, 0)
    return value


# Proves nothing: the ECMAScript (RFC 8785 section 3.2.2.3) text of a finite binary64 number.
def es_number(x: float) -> str:
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es_number(-x)
    _, digits, exp = decimal.Decimal(repr(x)).as_tuple()
    s = "".join(map(str, digits)).rstrip("0")
    n = len(digits) + exp  # value = 0.s * 10^n
    k = len(s)
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    e = n - 1
    return (s[0] + ("." + s[1:] if k > 1 else "")) + ("e+" if e > 0 else "e-") + str(abs(e))


# Proves nothing: RFC 8785 (JCS) canonical text of a parsed JSON value (keys sorted by UTF-16 units).
def jcs(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return es_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"


# Proves the body is the one signed: SHA-256 digest and Ed25519 signature over its JCS bytes.
def check_integrity(cert: dict, pubkey_b64: str | None) -> str:
    body = cert["body"]
    try:
        canon = jcs(body).encode("utf-8")
    except UnicodeEncodeError:
        raise Malformed("field body: cannot be canonicalized (lone surrogate)") from None
    dig = cert.get("digest")
    if not isinstance(dig, dict) or set(dig) != {"alg", "value"} or dig["alg"] != "sha256":
        raise Malformed(f"field digest: {dig!r} is not {{alg: sha256, value}}")
    if hashlib.sha256(canon).hexdigest() != dig["value"]:
        raise NotProved(f"field digest.value: {dig['value']!r} is not the SHA-256 of the body")
    sig = cert.get("signature")
    if sig is None:
        if pubkey_b64 is not None:
            raise NotProved("field signature: null, but --pubkey asks for a signature by that key")
        return "unsigned"
    if not isinstance(sig, dict) or set(sig) != {"alg", "public_key", "value"} or sig["alg"] != "ed25519":
        raise Malformed(f"field signature: {sig!r} is not {{alg: ed25519, public_key, value}}")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(sig["public_key"], validate=True))
        raw_sig = base64.b64decode(sig["value"], validate=True)
        if base64.b64encode(raw_sig).decode() != sig["value"]:  # one file per signature (padding bits)
            raise ValueError("non-canonical base64")
    except (ValueError, TypeError):
        raise Malformed("field signature: public_key or value is not base64 of an Ed25519 key/signature") from None
    if pubkey_b64 is not None and sig["public_key"] != pubkey_b64:
        raise NotProved(f"field signature.public_key: {sig['public_key']} is not the --pubkey key {pubkey_b64}")
    try:
        key.verify(raw_sig, canon)
    except InvalidSignature:
        raise NotProved("field signature.value: not a valid Ed25519 signature of the body") from None
    return "trusted signer" if pubkey_b64 is not None else "signature valid, signer untrusted (no --pubkey)"


# Proves nothing: the base64 Ed25519 public key of a .pub file (one line of base64).
def load_pubkey(path: str) -> str:
    text = read_capped(path, 1 << 16).decode("ascii", "replace").strip()
    try:
        if len(base64.b64decode(text, validate=True)) != 32:
            raise ValueError
    except ValueError:
        raise Malformed(f"pubkey {path!r} is not a base64 Ed25519 public key") from None
    return text


DEC = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


# Proves nothing: the exact rational value of a decimal string field (bounded length and exponent).
def dec(value: Any, field: str) -> Fraction:
    if not isinstance(value, str) or len(value) > 200 or not DEC.fullmatch(value):
        raise Malformed(f"field {field}: {value!r} is not a decimal string")
    d = decimal.Decimal(value)
    if not -40 <= d.adjusted() <= 40 and d != 0:
        raise Malformed(f"field {field}: {value!r} has an exponent outside [-40, 40]")
    return Fraction(d)


# Proves nothing: the exact value m 2^e of a dyadic field [m, e].
def dyadic(value: Any, field: str) -> Fraction:
    ok = isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
    if not ok or not re.fullmatch(r"-?[0-9]{1,400}", value[0]) or type(value[1]) is not int or abs(value[1]) > 4096:
        raise Malformed(f'field {field}: {value!r} is not a dyadic ["m", e]')
    return Fraction(int(value[0])) * Fraction(2) ** value[1]


# Proves nothing: the value of an integer field within [lo, hi].
def integer(value: Any, field: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise Malformed(f"field {field}: {value!r} is not an integer in [{lo}, {hi}]")
    return value


# Proves nothing: checks that a dict has exactly the allowed keys (and the required ones).
def keys(obj: Any, field: str, required: tuple, optional: tuple = ()) -> dict:
    if not isinstance(obj, dict):
        raise Malformed(f"field {field}: {obj!r} is not an object")
    missing = set(required) - set(obj)
    extra = set(obj) - set(required) - set(optional)
    if missing or extra:
        raise Malformed(f"field {field}: missing {sorted(missing)} / unknown {sorted(extra)}")
    return obj


# ----------------------------------------------------------------------------- Arb helpers


# Proves x encloses the rational f: an Arb ball containing f exactly.
def ball(f: Fraction | int) -> arb:
    f = Fraction(f)
    return arb(f.numerator) / arb(f.denominator)


# Proves u >= x: an exact rational at or above every point of the ball x; with b, the integer ceil(2^b u).
def up(x: arb, field: str, b: int | None = None) -> Any:
    if not x.is_finite():
        raise NotProved(f"{field}: enclosure not finite at {ctx.prec} bits")
    m, e = (int(v) for v in x.upper().man_exp())
    if b is None:
        return Fraction(m) * Fraction(2) ** e
    return m << (e + b) if e + b >= 0 else -((-m) >> -(e + b))


# Proves l <= x: an exact rational at or below every point of the ball x; with b, the integer floor(2^b l).
def low(x: arb, field: str, b: int | None = None) -> Any:
    if not x.is_finite():
        raise NotProved(f"{field}: enclosure not finite at {ctx.prec} bits")
    m, e = (int(v) for v in x.lower().man_exp())
    if b is None:
        return Fraction(m) * Fraction(2) ** e
    return m << (e + b) if e + b >= 0 else m >> -(e + b)


# Proves the value encloses P(N(0,1) > z) (the standard normal upper tail).
def phic(z: arb) -> arb:
    return (z / arb(2).sqrt()).erfc() / 2


# ----------------------------------------------------------------------------- RDP (docs/math.md 3, 4.7)


# Proves the ball encloses the remove-direction CGF K(t) of one subsampled-Gaussian step, t = alpha - 1.
def cgf_remove(alpha: int, q: Fraction, sigma: Fraction) -> arb:
    qa, ra, s2 = ball(q), 1 - ball(q), ball(sigma) ** 2
    total, binom = arb(0), 1
    for k in range(alpha + 1):
        if k >= 2:
            total += binom * ra ** (alpha - k) * qa**k * (arb(k * (k - 1)) / (2 * s2)).expm1()
        binom = binom * (alpha - k) // (k + 1)
    return total.log1p()


# Proves u >= the add-direction CGF K(t) = log E_N0[(1 - q + q W)^-t] (rigorous integral, Gaussian tails).
def cgf_add_upper(alpha: int, q: Fraction, sigma: Fraction) -> Fraction:
    if q == 1:  # the Gaussian pair: the reflection x -> 1 - x swaps P and Q (docs/math.md section 1)
        return up(cgf_remove(alpha, q, sigma), f"CGF at order {alpha}")
    t, qa, s = alpha - 1, ball(q), ball(sigma)
    s2 = s * s
    one_q = 1 - qa
    # tails: x >= hi: integrand <= phi (W >= 1); x <= lo: integrand <= (1-q)^-t phi.
    hi = s * 40 if sigma >= Fraction(1, 80) else arb(1) / 2  # W >= 1 needs x >= 1/2
    lo = -s * (40 + 2 * math.sqrt(max(1.0, -t * math.log1p(-min(float(q), 1 - 2.0**-53)))))
    tail = phic(hi / s) + one_q ** (-t) * phic(-lo / s)

    # Proves the value encloses the integrand phi_s(x) (1 - q + q W(x))^-t on a complex ball.
    def f(x: acb, analytic: bool) -> acb:
        w = ((2 * x - 1) / (2 * acb(s2))).exp()
        base = acb(one_q) + acb(qa) * w
        return (-(x * x) / (2 * acb(s2))).exp() * base ** (-t) / (acb(s) * acb(arb.pi() * 2).sqrt())

    val = acb.integral(f, acb(lo), acb(hi), rel_tol=arb(2) ** -100)
    return up((val.real + tail).log(), f"add-direction CGF at order {alpha}")


# Proves the ball encloses F_R(t) = (n K(t) + log c_t - log delta)/t for a given enclosure of K (math.md 3).
def conversion(kball: arb, alpha: int, steps: int, delta: Fraction) -> arb:
    t = arb(alpha - 1)
    log_ct = t * t.log() - (t + 1) * (t + 1).log()
    return (steps * kball + log_ct - ball(delta).log()) / t


# Proves eps_RDP(delta) over the orders is <= bound (relation <=) or >= bound (relation >).
def check_rdp(chk: dict, mech: tuple, where: str) -> tuple[Fraction, str]:
    meth = keys(chk["method"], where + ".method", ("name", "prec_bits", "orders"))
    integer(meth["prec_bits"], where + ".method.prec_bits", 53, 1024)
    orders = meth["orders"]
    if not isinstance(orders, list) or not 1 <= len(orders) <= 128:
        raise Malformed(f"field {where}.method.orders: not a list of 1 to 128 orders")
    for i, a in enumerate(orders):
        integer(a, f"{where}.method.orders[{i}]", 2 if i == 0 else orders[i - 1] + 1, 2048)
    q, sigma, steps, direction, delta = mech
    ctx.prec = 256
    remove = {a: cgf_remove(a, q, sigma) for a in orders}
    f_remove = {a: conversion(remove[a], a, steps, delta) for a in orders}
    if chk["relation"] == ">":
        # a lower bound for every order: K >= K_remove when the remove direction is included,
        if direction == "add":
            raise Malformed(f"field {where}.mechanism.params.direction: 'add' refutations are not covered")
        bound = min(low(f_remove[a], f"{where}: F_R at order {a}") for a in orders)
        return bound, f"RDP epsilon over {len(orders)} orders (remove-direction CGF closed form)"
    # an upper bound: any order gives eps <= F_R(order) with K = max of the directions included.
    best, tried = None, 0
    for a in sorted(orders, key=lambda a: f_remove[a].mid()):
        if (best is not None and low(f_remove[a], "F_R") >= best) or tried >= 6:
            break
        k_up = up(remove[a], "K") if direction != "add" else Fraction(0)
        if direction != "remove":
            k_up = max(k_up, cgf_add_upper(a, q, sigma))
            tried += 1
        val = up(conversion(ball(k_up), a, steps, delta), f"{where}: F_R at order {a}")
        best = val if best is None else min(best, val)
        if direction == "remove":
            break
    return best, "RDP epsilon over the recorded orders (both directions at the best order)"


# ----------------------------------------------------------------------------- PLD (docs/math.md 10)


# Proves the balls enclose (P(L > l), Q(L > l)) of one subsampled-Gaussian step in one direction.
def loss_tails(direction: str, q: Fraction, sigma: Fraction, loss: arb) -> tuple[arb, arb]:
    qa, s = ball(q), ball(sigma)
    y = loss if direction == "remove" else -loss
    e = y.expm1() + qa  # e^y - 1 + q; the loss exceeds y iff e > 0 and x > x(y) (remove)
    if e < 0:
        return (arb(1), arb(1)) if direction == "remove" else (arb(0), arb(0))
    if not e > 0:
        raise NotProved(f"lattice point {loss}: cannot decide e^l > 1 - q at {ctx.prec} bits")
    x = s * s * (e / qa).log() + arb(1) / 2
    if direction == "remove":  # P = (1-q) N(0,s^2) + q N(1,s^2), Q = N(0,s^2), L = r(x)
        return (1 - qa) * phic(x / s) + qa * phic((x - 1) / s), phic(x / s)
    # add: P = N(0,s^2), Q = the mixture, L = -r(x): L > l iff x < x(-l)
    return phic(-x / s), (1 - qa) * phic(-x / s) + qa * phic((1 - x) / s)


# Proves a <= A 2^-b coefficient-wise: the one-step dominating lattice pair's P-masses (mass splitting).
def one_step_upper(direction: str, q: Fraction, sigma: Fraction, lat: tuple, b: int) -> tuple[list, Fraction]:
    h, offset, ks = lat  # cells (ks[i-1], ks[i]] of any widths on the grid offset + k h
    pts = [ball(offset + k * h) for k in ks]
    tails = [loss_tails(direction, q, sigma, pt) for pt in pts]
    eneg = [(-pt).exp() for pt in pts]
    mass = [arb(0)] * len(pts)
    mass[0] = 1 - tails[0][0]  # P(L <= lo point) becomes an atom at the lowest point
    for i in range(1, len(pts)):
        p = tails[i - 1][0] - tails[i][0]
        w = tails[i - 1][1] - tails[i][1]
        alpha_a = (w - p * eneg[i]) / (eneg[i - 1] - eneg[i])
        mass[i - 1] += alpha_a
        mass[i] += p - alpha_a
    coeffs = [max(0, up(m, f"one-step mass at lattice index {k}", b)) for k, m in zip(ks, mass, strict=True)]
    # P(L > top) goes to +inf (delta at g = 1), rounded up to units 2^-b: the exact end of a ball
    # near e^-(10^9) (a top point far in the tail) would be a rational of 10^9 bits (attack review)
    return fine(ks, coeffs), Fraction(up(tails[-1][0], "P(L > top point)", b), 2**b)


# Proves nothing: the integers c placed at the fine-grid indices ks (a split lattice's tail points are sparse).
def fine(ks: list, c: list) -> list:
    out = [0] * (ks[-1] - ks[0] + 1)
    for k, v in zip(ks, c, strict=True):
        out[k - ks[0]] = v
    return out


# Proves X*Y <= result + E (|E| <= D units), from X <= A + E_A and Y <= B + E_B: floor division, pruning.
def product(x: tuple, y: tuple, copies: int, floor_bits: int, prune_bits: int, clamp: int | None = None) -> tuple:
    (a, sa, ba, da), (bq, sb, bb, db) = x, y  # FLINT integer polynomials, start index, bits, error count
    n = a.length() + bq.length() - 1  # coefficients of the exact product
    top = n if clamp is None else min(n, clamp - sa - sb)  # TV only: indices >= top lowered to top
    if n < 1 or top < 1:
        raise NotProved("a composition product is empty or entirely above its clamp")
    if min(n, top + 1) > MAX_PRODUCT:
        raise Malformed(f"a composition product needs {min(n, top + 1)} coefficients (limit {MAX_PRODUCT})")
    na, nb = int(a(1)), int(bq(1))
    c = a * bq if top == n else a.mul_low(bq, top)  # the coefficients below top, exactly
    lump = na * nb - int(c(1)) if top < n else 0  # the exact mass at indices >= top
    floored = c.length() + (top < n)
    b = min(ba + bb, floor_bits + (copies * floored).bit_length())
    sh = ba + bb - b
    err = da * nb + na * db + da * db
    d = -((-err) >> sh) + (floored if sh else 0)  # ceil(err / 2^sh) plus one unit per floor
    c = c // (1 << sh) if sh else c
    if lump >> sh:
        c += fmpz_poly([lump >> sh]).left_shift(top)
    allow = (1 << max(0, b - prune_bits)) // max(1, copies)  # prune at most this much per end
    left, dropped, m = 0, 0, c.length()
    while left < m - 1 and dropped + c[left] <= allow:
        dropped += c[left]
        left += 1
    right, rdrop = m, 0
    while right > left + 1 and rdrop + c[right - 1] <= allow:
        rdrop += c[right - 1]
        right -= 1
    return c.right_shift(left).truncate(right - left), sa + sb + left, b, d + int(dropped + rdrop)


# Proves the n-fold composition <= result + E (exact integer binary powering with directed rounding).
def power(base: tuple, n: int, floor_bits: int, prune_bits: int, clamp: int | None = None) -> tuple:
    result, sq, k, level = None, (fmpz_poly(base[0]), *base[1:]), n, 0
    while True:
        if k & 1:
            result = sq if result is None else product(result, sq, 1, floor_bits, prune_bits, clamp)
        k >>= 1
        level += 1
        if not k:
            return [int(v) for v in result[0].coeffs()], *result[1:]
        sq = product(sq, sq, n >> level, floor_bits, prune_bits, clamp)


# Proves p <= 2^b P(cell), w >= 2^b Q(cell) e^x, x = offset + (index - 1/2) h - c, per cell (merged cells, math.md 10).
def one_step_merged(direction: str, q: Fraction, sigma: Fraction, lat: tuple, b: int) -> tuple:
    h, offset, ks = lat  # cell i = (point i-1, point i] at index ks[i]; the mass beyond the ends joins the end cells
    tails = [loss_tails(direction, q, sigma, ball(offset + k * h)) for k in ks]
    pw = [[1 - tails[0][j]] + [tails[i - 1][j] - tails[i][j] for i in range(1, len(ks))] for j in (0, 1)]
    pw[0][-1], pw[1][-1] = pw[0][-1] + tails[-1][0], pw[1][-1] + tails[-1][1]
    idx = list(ks)  # a wide (tail) cell sits at the fine index below its float loss log(P/Q): any index is sound
    for i in range(1, len(ks)):
        pf, qf = float(pw[0][i].mid()), float(pw[1][i].mid())
        if ks[i] - ks[i - 1] > 1 and pf > 0 and qf > 0 and math.isfinite(r := math.log(pf / qf)):
            idx[i] = min(max(math.floor((r - float(offset)) / float(h)), ks[i - 1] + 1), ks[i])
    # Q tilted by e^x, x = offset + (k - 1/2) h - c: the composed Q at index K is its tilted mass times
    # e^-(n (offset - h/2 - c) + K h), exactly, for any c; a cell tilted to 2 or more (only the bottom cell
    # of a lattice far above the losses) is dropped from both arrays (a restriction), decided on balls
    tq = [m * ball(offset + (k - Fraction(1, 2)) * h).exp() for k, m in zip(idx, pw[1], strict=True)]
    keep = [bool(x < 2) for x in tq]
    total = sum(float(x.mid()) for x, k in zip(tq, keep, strict=True) if k)
    # c (a float-chosen dyadic) makes the tilted masses add up to 1: over n steps they cannot grow
    c = Fraction(math.log(total)) if total > 0 else Fraction(0)
    w = [max(0, up(x * ball(-c).exp(), f"Q at {k}", b)) if ok else 0 for k, x, ok in zip(idx, tq, keep, strict=True)]
    p = [max(0, low(m, f"P at {k}", b)) if ok else 0 for k, m, ok in zip(idx, pw[0], keep, strict=True)]
    return fine(idx, p), fine(idx, w), c


# Proves P' <= P and Q <= Q' + D on one event (index ranges kept by P's pruning, the same for Q: a restriction).
def merged_product(x: tuple, y: tuple, copies: int, floor_bits: int) -> tuple:
    pp = product(x[0], y[0], copies, floor_bits, floor_bits - 12)
    c, s, *rest = product(x[1], y[1], copies, floor_bits, 1 << 30)  # Q is never pruned on its own
    k = max(0, pp[1] - s)
    return pp, (c.right_shift(k).truncate(max(1, pp[1] + pp[0].length() - s - k)), s + k, *rest)


# Proves the n-fold composition of the merged pair <= / >= as merged_product (exact integer binary powering).
def merged_power(base: tuple, n: int, floor_bits: int) -> tuple:
    result, sq, k, level = None, base, n, 0
    while True:
        if k & 1:
            result = sq if result is None else merged_product(result, sq, 1, floor_bits)
        k, level = k >> 1, level + 1
        if not k:
            return result
        sq = merged_product(sq, sq, n >> level, floor_bits)


# Proves delta_n(eps) >= sum_{K >= j} (P_K - e^eps Q_K) for the composed merged cells (a post-processing).
def merged_delta(direction: str, mech: tuple, lat: tuple, eps: Fraction, floor_bits: int, first_bits: int) -> Fraction:
    (h, offset, ks), n = lat, mech[2]
    p, w, c = one_step_merged(direction, mech[0], mech[1], lat, first_bits)
    base = ((fmpz_poly(p), ks[0], first_bits, 0), (fmpz_poly(w), ks[0], first_bits, 0))
    (cp, sp, bp, _), (cw, sw, bw, dw) = merged_power(base, n, floor_bits)
    cp, cw = [int(v) for v in cp.coeffs()], [int(v) for v in cw.coeffs()]
    fl = lambda c, e: math.ldexp(c >> (t := max(0, c.bit_length() - 60)), min(900, e + t))  # noqa: E731
    acc, best, j, a = 0.0, 0.0, len(cp), eps - n * (offset - h / 2 - c)  # floats only choose the start sp + j
    for i in range(len(cp) - 1, -1, -1):
        wi = cw[sp + i - sw] if 0 <= sp + i - sw < len(cw) else 0
        acc += fl(cp[i], -bp) - math.exp(min(700.0, float(a - (sp + i) * h))) * fl(wi, -bw)
        best, j = (acc, i) if acc > best else (best, j)
    k0 = sp + j  # the composed Q past k0: tilted masses times e^(a - K h), at most e^(a - k0 h)
    kw = max(k0, sw)
    s_w = arb_poly(cw[kw - sw :])((-ball(h)).exp()) if kw - sw < len(cw) else arb(0)
    q_part = ball(a - kw * h).exp() * s_w + ball(a - k0 * h).exp() * dw
    value = (arb(sum(cp[j:])) - q_part * arb(2) ** (bp - bw)) / arb(2) ** bp
    # delta >= 0 always: a value not above 0 proves nothing (and at a huge eps it is a huge ball)
    return low(value, f"delta lower bound ({direction})") if value > 0 else Fraction(0)


# Proves delta_n(eps) <= bound (upper) or >= bound (lower) for one direction of the mechanism.
def pld_delta(direction: str, mech: tuple, lat: tuple, eps: Fraction, upper: bool) -> Fraction:
    q, sigma, steps, _, delta = mech
    (h, offset, ks), lo = lat, lat[2][0]
    floor_bits = max(64, math.ceil(math.log2(1 / delta)) + 56)
    first_bits = floor_bits + (steps * (ks[-1] - lo + 1)).bit_length()
    if not upper:
        return merged_delta(direction, mech, lat, eps, floor_bits, first_bits)
    coeffs, p_inf = one_step_upper(direction, q, sigma, lat, first_bits)
    c, start, b, d = power((coeffs, lo, first_bits, 0), steps, floor_bits, floor_bits - 12)
    # points n*offset + K h for K = start + i; delta = sum_{l > eps} C (1 - e^(eps - l)) + D + inf part
    base_loss = steps * offset + start * h
    j = max(0, math.floor((eps - base_loss) / h) + 1)
    while j > 0 and base_loss + (j - 1) * h > eps:
        j -= 1
    while j < len(c) and base_loss + j * h <= eps:
        j += 1
    tail = c[j:]
    s0 = sum(tail)
    s1 = arb_poly(tail)((-ball(h)).exp()) if tail else arb(0)
    finite = (arb(s0) - (ball(eps - base_loss - j * h)).exp() * s1) / arb(2) ** b
    inf_part = -(steps * (-ball(p_inf)).log1p()).expm1()
    return up(finite + ball(Fraction(d, 2**b)) + inf_part, f"delta bound ({direction})")


# Proves pld-upper: delta_n(upper) <= delta in every direction; pld-lower: delta_n(lower) > delta in one.
def check_pld(chk: dict, mech: tuple, where: str) -> tuple[Fraction, str]:
    # hints: a refutation's lower construction (any is proved by merged cells here) and coarsened
    # powers (one spacing here: at least as tight, docs/math.md 10)
    opt = ("lower", "coarsen_powers")
    meth = keys(chk["method"], where + ".method", ("name", "prec_bits", "prune_floor_bits", "lattices"), opt)
    if not isinstance(meth.get("coarsen_powers", False), bool):
        raise Malformed(f"field {where}.method.coarsen_powers: {meth['coarsen_powers']!r} is not a boolean")
    if meth.get("lower", "merged") not in ("balanced", "merged") or ("lower" in meth and meth["name"] != "pld-lower"):
        raise Malformed(f"field {where}.method.lower: {meth['lower']!r} is not balanced or merged of a pld-lower")
    integer(meth["prec_bits"], where + ".method.prec_bits", 64, 128)
    integer(meth["prune_floor_bits"], where + ".method.prune_floor_bits", 40, 200)
    _, _, steps, direction, delta = mech
    if steps > 10**6:  # the limits of certdp's verifier (docs/certificates.md); products are checked too
        raise Malformed(f"field {where}.mechanism.steps: {steps} above the PLD limit 1000000")
    upper = meth["name"] == "pld-upper"
    dirs = ("remove", "add") if direction == "both" else (direction,)
    lats = keys(meth["lattices"], where + ".method.lattices", dirs if upper else (), dirs)
    if not lats:
        raise Malformed(f"field {where}.method.lattices: no direction listed")
    eps = dyadic(chk["result"].get("upper_dyadic" if upper else "lower_dyadic"), where + ".result")
    ctx.prec = max(160, meth["prec_bits"] + 32)
    for dirn in lats:
        f = f"{where}.method.lattices.{dirn}"
        lat = keys(lats[dirn], f, ("h", "offset", "lo", "hi"), ("bulk_lo", "bulk_hi", "stride"))
        h = dec(lat["h"], f + ".h")
        if h.numerator != 1 or h.denominator & (h.denominator - 1) or not 2**4 <= h.denominator <= 2**20:
            raise Malformed(f"field {f}.h: {lat['h']} is not a power of two in [2^-20, 2^-4]")
        offset = dec(lat["offset"], f + ".offset")
        if not 0 <= offset < h or (offset / (h / 2**40)).denominator != 1:
            raise Malformed(f"field {f}.offset: {lat['offset']} is not a multiple of h 2^-40 in [0, h)")
        lo = integer(lat["lo"], f + ".lo", -(2**40), 2**40)
        hi = integer(lat["hi"], f + ".hi", lo + 1, lo + 2**22)
        ks = list(range(lo, hi + 1))  # a split lattice (math.md 10, bulk and tails): fine cells in the bulk only
        if len(lat) > 4:
            b_lo = integer(lat.get("bulk_lo"), f + ".bulk_lo", lo, hi - 1)
            b_hi = integer(lat.get("bulk_hi"), f + ".bulk_hi", b_lo + 1, hi)
            s = integer(lat.get("stride"), f + ".stride", 1, 2**22)
            if (b_lo - lo) % s or (hi - b_hi) % s:
                raise Malformed(f"field {f}.stride: {s} does not divide both tails")
            ks = [*range(lo, b_lo, s), *range(b_lo, b_hi + 1), *range(b_hi + s, hi + 1, s)]
        if len(ks) > 2**18 + 1:
            raise Malformed(f"field {f}: {len(ks) - 1} cells above the limit 262144")
        bound = pld_delta(dirn, mech, (h, offset, ks), eps, upper)
        if upper and bound > delta:
            raise NotProved(
                f"{where}: delta_upper({dirn}) at the recorded upper eps {float(eps)!r} is {float(bound):.9g} > delta"
            )
        if not upper and bound > delta:
            return eps, f"PLD lattice lower bound at the recorded lower end: delta_lower({dirn}) > delta"
    if not upper:
        raise NotProved(
            f"{where}: delta_lower at the recorded lower eps {float(eps)!r} is not > delta in any listed direction"
        )
    return eps, f"PLD lattice upper bound evaluated at the recorded upper end ({', '.join(dirs)})"


# ----------------------------------------------------------------------------- TV (docs/math.md 8, 9.6)


# Proves TV(P^E, Q^E) <= bound for random allocation: mean-keeping splits, clamps, dropped mass (9.6).
def tv_upper(steps: int, epochs: int, sigma: Fraction, h: Fraction, cap: Fraction, grid: tuple) -> Fraction:
    l_min, l_max, eta = grid
    t = 1 / ball(sigma)
    k_cap = int(cap / h)
    # 1. each step value Y (lognormal under Q) split between the ends of its cell [(k-1)h, kh], kept mean;
    #    Y above cap clamped down to cap (a lower Lambda); masses rounded down (dropped mass)
    b0 = 64 + (steps * (k_cap + 1)).bit_length()
    hb, half = ball(h), t * t / 2
    step_pmf, carry, cdf0, part0 = [], arb(0), arb(0), arb(0)
    for k in range(1, k_cap + 1):
        ln_y = (k * hb).log()
        cdf1, part1 = phic(-(ln_y + half) / t), phic(-(ln_y - half) / t)  # P(Y <= kh), E[Y; Y <= kh]
        m, mu = cdf1 - cdf0, part1 - part0
        step_pmf.append(max(0, low(carry + (k * hb * m - mu) / hb, "step mass", b0)))
        carry, cdf0, part0 = (mu - (k - 1) * hb * m) / hb, cdf1, part1
    step_pmf.append(max(0, low(carry + 1 - cdf0, "step mass", b0)))
    # 2. the epoch sum S = sum of M step values on hZ; a partial sum above the final clamp is lowered to it
    j_lo, j_hi = math.ceil(math.log(l_min) / eta) + 1, math.floor(math.log(l_max) / eta) - 1
    e_top = (j_hi * ball(eta)).exp()
    clamp = math.ceil(up(e_top * steps / hb, "clamp") + 1)
    s_pmf, start, b, _ = power((step_pmf, 0, b0, 0), steps, 64, 50, clamp)
    # 3. each epoch value v = S/M split between grid points e^(j eta) (or 0 and the lowest point), kept mean
    grid_pts = [(j * ball(eta)).exp() for j in range(j_lo, j_hi + 1)]
    r = [0] * (j_hi - j_lo + 1)
    one, unit_f = 1 << 64, float(h / steps)
    for i, c in enumerate(s_pmf):
        k = start + i
        if not c:
            continue
        v = k * hb / steps  # exact when k h / M is a dyadic (a grid point must not be straddled)
        if k >= clamp - 1 or v >= e_top:
            r[-1] += c  # v >= e^(j_hi eta): lowered to it
            continue
        j = math.floor(math.log(k * unit_f) / eta) if k else j_lo - 1
        if j < j_lo:  # v below the lowest point: split between 0 (dropped) and the lowest point
            lo_pt, hi_pt, jj = arb(0), grid_pts[0], -1
        else:
            jj = min(j, j_hi - 1) - j_lo
            lo_pt, hi_pt = grid_pts[jj], grid_pts[jj + 1]
        f = (v - lo_pt) / (hi_pt - lo_pt)
        if not (f >= 0 and f <= 1):
            raise NotProved(f"epoch value {k} h / M: grid cell not decided at {ctx.prec} bits")
        f_lo, f_hi = low(f, "f", 64), up(f, "f", 64)
        r[jj + 1] += (c * f_lo) >> 64
        if jj >= 0:
            r[jj] += (c * (one - f_hi)) >> 64
    # 4. grid indices add over epochs; TV <= 1 - sum_k b_k min(1, e^(k eta))
    bk, start, b, _ = power((r, j_lo, b, 0), epochs, 64, 50)
    first_pos = max(0, -start)  # coefficient index of grid index 0
    ge = sum(bk[first_pos:])
    neg = [0] * max(0, first_pos - len(bk)) + bk[:first_pos][::-1]  # grid indices -1, -2, ...
    below = arb_poly([0, *neg])((-ball(eta)).exp()) if neg else arb(0)
    return up(1 - (arb(ge) + below) / arb(2) ** b, "TV upper bound")


# Proves TV(P^E, Q^E) >= bound for random allocation: a post-processing with certified conditional means (9.7).
def tv_lower(steps: int, epochs: int, sigma: Fraction, h: Fraction, cap: Fraction, grid: tuple) -> Fraction:
    l_min, eta = grid
    t, tf, hf = 1 / ball(sigma), float(1 / sigma), float(h)
    half, hb = t * t / 2, ball(h)

    # Proves nothing (floats steer the cells): (P(Y <= y), E[Y; Y <= y]) in binary64.
    def cdf_f(y: float) -> tuple[float, float]:
        if y <= 0:
            return 0.0, 0.0
        z = math.log(y) / tf
        return math.erfc(-(z + tf / 2) / math.sqrt(2)) / 2, math.erfc(-(z - tf / 2) / math.sqrt(2)) / 2

    # 1. cells (b_{k-1}, b_k] of a step value Y, each output kh at or above its conditional mean (checked)
    k_cap = int(cap / h)
    b0 = 64 + (steps * (k_cap + 1)).bit_length()
    a, fa, ga = Fraction(0), arb(0), arb(0)
    pmf, excess = [0], 1  # excess: what the floors and dropped cells leave out, in units 2^-b0
    for k in range(1, k_cap + 1):
        fa_f, ga_f = cdf_f(float(a))
        x, y = float(a), float(a) + 4 * hf
        for _ in range(48):  # the widest float cell whose mean stays below kh
            mid = (x + y) / 2
            f_m, g_m = cdf_f(mid)
            x, y = (mid, y) if g_m - ga_f <= k * hf * (f_m - fa_f) else (x, mid)
        b = max(a, Fraction(math.floor(x / hf * 2**40) - 2**12, 2**40) * h)
        for i in range(8):  # shrink until the ball check proves E[Y | cell] <= kh
            fb, gb = phic(-(ball(b).log() + half) / t), phic(-(ball(b).log() - half) / t)
            if b == a or gb - ga <= k * hb * (fb - fa):
                break
            b = a if i == 7 else b - (b - a) / 2**20 * 16**i
        if b == a:
            pmf.append(0)
            continue
        m = fb - fa
        pmf.append(max(0, low(m, "cell mass", b0)))
        excess += up(m, "cell mass", b0) - pmf[-1]
        a, fa, ga = b, fb, gb
    tail_p, ratio = 1 - fa, (1 - ga) / (1 - fa)  # the last cell (a, inf): output its mean rounded up to hZ
    if ratio.is_finite() and tail_p > 0 and up(ratio, "tail mean") < 2 * cap + 1:
        idx = math.ceil(up(ratio, "tail mean") / h)
        pmf += [0] * (idx + 1 - len(pmf))
        pmf[idx] += low(tail_p, "tail", b0)
        excess += up(tail_p, "tail", b0) - low(tail_p, "tail", b0)
    else:
        excess += up(tail_p, "tail", b0)
    # 2. the epoch sum S of the outputs on hZ: true masses = coefficients + E, |E| <= d units
    s_pmf, start, b, d = power((pmf, 0, b0, excess), steps, 80, 70)
    # 3. atoms of S/M swept upwards into groups whose true mean is certified <= e^(j eta); a group
    #    that cannot be certified is dropped (its own output, left out of the sum)
    unit, etaf = h / steps, float(eta)
    j_min = math.floor(math.log(l_min) / etaf)
    r, group = {}, [0, 0, 0]  # group: Q-mass, sum of mass x atom index, largest atom index

    # A group too light to absorb the error bound at j goes one grid point higher, else it is dropped.
    # Proves the group's true mean of S/M is <= e^(j' eta), j' = j or j + 1 (errors counted at its top atom).
    def close(j: int) -> None:
        s0, s1, k_top = group
        for jj in (j, j + 1):
            g = (jj * ball(eta)).exp()
            if s0 and ball(unit) * s1 + d * abs(ball(unit) * k_top - g) <= g * s0:
                r[jj] = r.get(jj, 0) + s0
                break
        group[:] = [0, 0, 0]

    j = None
    for i, c in enumerate(s_pmf):
        k = start + i
        if c == 0:
            continue
        v = k * float(unit)
        if j is None:
            j = max(j_min, math.ceil(math.log(v) / etaf) if v > 0 else j_min)
        while c:
            g = math.exp(j * etaf) * (1 - 2**-40)
            if v <= g or (group[1] + c * k) * float(unit) <= g * (group[0] + c):
                group[:] = [group[0] + c, group[1] + c * k, k]
                break
            part = max(0, min(c - 1, math.floor((g * group[0] - group[1] * float(unit)) / (v - g))))
            if part:
                group[:] = [group[0] + part, group[1] + part * k, k]
            close(j)
            c -= part
            j = max(j + 1, math.ceil(math.log(v) / etaf))
    close(j)
    if not r:
        return Fraction(0)
    # 4. grid indices add over epochs; TV >= sum_{k < 0} b_k (1 - e^(k eta))
    j_lo = min(r)
    if max(r) - j_lo > MAX_TV_CELLS:
        raise Malformed(f"grid eta={float(eta)!r}: the epoch sums span more than {MAX_TV_CELLS} grid points")
    bk, start, b, _ = power(([r.get(i, 0) for i in range(j_lo, max(r) + 1)], j_lo, b, 0), epochs, 80, 70)
    first_pos = max(0, -start)
    neg = [0] * max(0, first_pos - len(bk)) + bk[:first_pos][::-1]  # grid indices -1, -2, ...
    if not neg:
        return Fraction(0)
    below = arb_poly([0, *neg])((-ball(eta)).exp())
    return low((arb(sum(neg)) - below) / arb(2) ** b, "TV lower bound")


# Proves tv <= bound (lattice-upper) or tv >= bound (lattice-lower); the grid is a hint, any valid grid is sound.
def check_tv(chk: dict, where: str) -> tuple[Fraction, str]:
    mech = keys(chk["mechanism"], where + ".mechanism", ("name", "params"))
    if mech["name"] != "random-allocation":  # the TV bounds below are this mechanism's only
        raise Malformed(f"field {where}.mechanism.name: {mech['name']!r} has no TV check in this kernel")
    params = keys(mech["params"], where + ".mechanism.params", ("steps", "epochs", "sigma"))
    steps, epochs = dec(params["steps"], where + ".steps"), dec(params["epochs"], where + ".epochs")
    sigma = dec(params["sigma"], where + ".mechanism.params.sigma")
    if steps.denominator != 1 or epochs.denominator != 1 or not (1 <= steps <= 2000 and 1 <= epochs <= 1000):
        raise Malformed(f"field {where}.mechanism.params: steps {params['steps']} or epochs {params['epochs']}")
    if not Fraction(1, 1000) <= sigma <= 10**4:
        raise Malformed(f"field {where}.mechanism.params.sigma: {params['sigma']} out of range")
    meth = keys(chk["method"], where + ".method", ("name", "prec_bits", "grid"))
    integer(meth["prec_bits"], where + ".method.prec_bits", 53, 128)
    g = keys(
        meth["grid"], where + ".method.grid", ("h", "cap", "l_min", "l_max", "eta"), ("scheme", "tail_k", "coarsen")
    )
    h, cap, eta = (dec(g[f], f"{where}.method.grid.{f}") for f in ("h", "cap", "eta"))
    l_min, l_max = dec(g["l_min"], where + ".l_min"), dec(g["l_max"], where + ".l_max")
    for name, x in (("h", h), ("eta", eta)):
        if x.numerator != 1 or x.denominator & (x.denominator - 1) or x.denominator > 2**40:
            raise Malformed(f"field {where}.method.grid.{name}: {g[name]} is not a power of two in [2^-40, 1]")
    if not (0 < l_min < 1 < l_max) or (cap / h).denominator != 1 or not 0 < cap <= 10**6:
        raise Malformed(f"field {where}.method.grid: cap {g['cap']}, l_min {g['l_min']} or l_max {g['l_max']}")
    if cap / h > MAX_TV_STEP_POINTS or l_max * steps / h + 3 > MAX_TV_CELLS or math.log(l_max / l_min) / eta > 2**18:
        raise Malformed(f"field {where}.method.grid: more points than this kernel's TV limits (2^21 cap/h, 2^22 sums)")
    ctx.prec = 160
    if meth["name"] == "lattice-lower":
        bound = tv_lower(int(steps), int(epochs), sigma, h, cap, (float(l_min), eta))
        return bound, "TV lattice lower bound (centred cells and grouped epoch sums on the recorded h, eta, cap)"
    bound = tv_upper(int(steps), int(epochs), sigma, h, cap, (float(l_min), float(l_max), float(eta)))
    return bound, "TV lattice upper bound (scheme 1 splits on the recorded h, eta, cap)"


# ----------------------------------------------------------------------------- checks


# Proves nothing: the mechanism tuple (q, sigma, steps, direction, delta) of a subsampled-Gaussian check.
def read_mechanism(chk: dict, where: str) -> tuple:
    mech = keys(chk["mechanism"], where + ".mechanism", ("name", "params", "steps"))
    if mech["name"] != "subsampled-gaussian":
        raise Malformed(f"field {where}.mechanism.name: {mech['name']!r} is not covered")
    params = keys(mech["params"], where + ".mechanism.params", ("q", "sigma", "direction"))
    q = dec(params["q"], where + ".mechanism.params.q")
    sigma = dec(params["sigma"], where + ".mechanism.params.sigma")
    if not 0 < q <= 1 or not Fraction(1, 1000) <= sigma <= 10**4:
        raise Malformed(f"field {where}.mechanism.params: q={params['q']} or sigma={params['sigma']} out of range")
    if params["direction"] not in ("remove", "add", "both"):
        raise Malformed(f"field {where}.mechanism.params.direction: {params['direction']!r}")
    steps = integer(mech["steps"], where + ".mechanism.steps", 1, 10**8)
    if "delta" not in chk:
        raise Malformed(f"field {where}.delta: missing")
    delta = dec(chk["delta"], where + ".delta")
    if not 0 < delta < 1:
        raise Malformed(f"field {where}.delta: {chk['delta']} not in (0, 1)")
    return q, sigma, steps, params["direction"], delta


# Proves the check's relation: quantity <= recorded upper <= threshold, or quantity >= lower > threshold.
def check_one(chk: dict, where: str, relation: str) -> str:
    keys(chk, where, ("mechanism", "quantity", "relation", "threshold", "method", "result"), ("delta",))
    meth = chk["method"]
    name = meth.get("name") if isinstance(meth, dict) else None
    if name in REFUSED or name not in COVERED:
        raise Malformed(f"field {where}.method.name: kind {name!r} is not covered by this kernel")
    quantity = "tv" if name.startswith("lattice") else "epsilon"
    if chk["relation"] != relation or chk["quantity"] != quantity or (quantity == "tv") == ("delta" in chk):
        raise Malformed(f"field {where}: relation {chk['relation']!r} / quantity {chk['quantity']!r} unexpected")
    sides = {"pld-upper": "<=", "pld-lower": ">", "lattice-upper": "<=", "lattice-lower": ">"}
    if name != "rdp-orders" and relation != sides[name]:
        raise Malformed(f"field {where}.method.name: {name} cannot prove {relation!r}")
    threshold = dec(chk["threshold"], where + ".threshold")
    end = "upper" if relation == "<=" else "lower"
    other = "lower" if end == "upper" else "upper"
    res = keys(chk["result"], where + ".result", (end, end + "_dyadic"), (other + "_unverified", "seconds"))
    # informative fields are never proved, but must at least be what they claim to be
    if other + "_unverified" in res:
        dec(res[other + "_unverified"], f"{where}.result.{other}_unverified")
    secs = res.get("seconds", 0)
    if isinstance(secs, bool) or not isinstance(secs, int | float) or secs < 0:
        raise Malformed(f"field {where}.result.seconds: {secs!r} is not a number of seconds")
    exact = dyadic(res[end + "_dyadic"], f"{where}.result.{end}_dyadic")
    shown = dec(res[end], f"{where}.result.{end}")
    # rounded outward, and close: a dyadic far beyond its decimal (2^4096 x 9...9) is not what it shows
    if ((shown < exact) if relation == "<=" else (shown > exact)) or abs(exact - shown) > abs(shown) / 10**12 + 1:
        raise NotProved(f"field {where}.result.{end}: {res[end]} is not {end}_dyadic rounded outward")
    if (exact > threshold) if relation == "<=" else (exact <= threshold):
        raise NotProved(
            f"field {where}.result.{end}_dyadic: {float(exact)!r} does not decide {relation} {chk['threshold']}"
        )
    if quantity == "tv":
        bound, how = check_tv(chk, where)
    else:
        bound, how = (check_rdp if name == "rdp-orders" else check_pld)(chk, read_mechanism(chk, where), where)
    if (bound > exact) if relation == "<=" else (bound < exact):
        raise NotProved(
            f"{where}: recomputed {end} {float(bound)!r} is not on the right side of the recorded {float(exact)!r}"
        )
    note = f"; {other}_unverified and seconds not rechecked" if len(res) > 2 else ""
    return f"{where}: {quantity} {relation} {chk['threshold']} proved: recorded {end} {res[end]} ({how}){note}"


# Proves the refutation is the claim's mechanism one step below in sigma, with the same question.
def check_pairing(claim: dict, ref: dict, step: Fraction) -> None:
    for f in ("quantity", "threshold", "delta"):
        if claim.get(f) != ref.get(f) or (
            f in ("threshold", "delta") and f in claim and dec(claim[f], f) != dec(ref[f], f)
        ):
            raise Malformed(f"field refutation.{f}: {ref.get(f)!r} differs from the claim's {claim.get(f)!r}")
    cm, rm = claim["mechanism"], ref["mechanism"]
    if cm.get("name") != rm.get("name") or cm.get("steps") != rm.get("steps"):
        raise Malformed("field refutation.mechanism: name or steps differ from the claim's")
    cp, rp = dict(cm.get("params", {})), dict(rm.get("params", {}))
    cs, rs = cp.pop("sigma", None), rp.pop("sigma", None)
    if cp != rp:
        raise Malformed(f"field refutation.mechanism.params: {rp} differ from the claim's {cp}")
    if dec(rs, "refutation sigma") != dec(cs, "claim sigma") - step:
        raise Malformed(f"field refutation.mechanism.params.sigma: {rs} is not the claim's sigma {cs} minus step")
    # a refutation means what its method proves (a PLD lower bound: a violation; RDP: only that
    # RDP cannot certify), so it must answer the claim's own method (attack: a pld-upper claim
    # paired with an rdp-orders refutation)
    pair = {"pld-upper": "pld-lower", "rdp-orders": "rdp-orders", "lattice-upper": "lattice-lower"}
    pair["hockey-upper"] = "hockey-lower"
    if pair.get(claim["method"].get("name")) != ref["method"].get("name"):
        raise Malformed(f"field refutation.method.name: {ref['method'].get('name')!r} does not answer the claim's")
    if claim["method"].get("orders") != ref["method"].get("orders"):
        raise Malformed("field refutation.method.orders: differ from the claim's")


# Proves every covered claim and refutation (lines), lists the uncovered ones, or raises NotProved / Malformed.
def recheck(path: str, pubkey_path: str | None = None) -> tuple[list[str], list[str]]:
    cert = strict_json(read_capped(path))
    if not isinstance(cert, dict):
        raise Malformed("certificate is not a JSON object")
    if cert.get("format") != "certdp-certificate/2":
        raise Malformed(f"field format: {cert.get('format')!r} is not certdp-certificate/2")
    keys(cert, "certificate", ("format", "body", "digest", "signature"))
    body = keys(
        cert["body"],
        "body",
        ("certdp_version", "python_flint_version", "flint_version", "created", "claim", "refutation", "step"),
        ("refutation_missing_reason", "notes"),
    )
    fields = ("mechanism", "quantity", "relation", "threshold", "method", "result")
    for where in ("claim", "refutation"):
        if body[where] is not None or where == "claim":
            keys(body[where], where, fields, ("delta",))
            keys(body[where]["mechanism"], where + ".mechanism", ("name", "params"), ("steps",))
            keys(
                body[where]["method"],
                where + ".method",
                ("name", "prec_bits"),
                ("orders", "lattices", "grid", "prune_floor_bits", "lower", "coarsen_powers"),
            )
            keys(
                body[where]["mechanism"]["params"],
                where + ".mechanism.params",
                (),
                tuple(body[where]["mechanism"]["params"]),
            )
    if body["refutation"] is not None and "refutation_missing_reason" in body:
        raise Malformed("field body.refutation_missing_reason: present beside a refutation")
    signer = check_integrity(cert, load_pubkey(pubkey_path) if pubkey_path else None)
    step = dec(body["step"], "body.step")
    if not Fraction(10) ** -12 <= step <= Fraction(1, 10):
        raise Malformed(f"field body.step: {body['step']} not in [1e-12, 0.1]")
    checks = [("claim", body["claim"], "<=")]
    if body["refutation"] is not None:
        keys(
            body["refutation"],
            "refutation",
            ("mechanism", "quantity", "relation", "threshold", "method", "result"),
            ("delta",),
        )
        check_pairing(body["claim"], body["refutation"], step)
        checks.append(("refutation", body["refutation"], ">"))
    lines, refused = [signer], []
    for where, chk, relation in checks:
        kind = chk.get("method", {}).get("name") if isinstance(chk.get("method"), dict) else None
        if kind in REFUSED:
            refused.append(f"{where} kind {kind!r}")
            continue
        lines.append(check_one(chk, where, relation))
    return lines, refused


# Proves nothing: the command line; exit codes 0 (proved), 1 (not proved), 2 (malformed / not covered).
def main(argv: list[str]) -> int:
    args = argv[1:]
    pub = None
    if len(args) == 3 and args[1] == "--pubkey":
        pub = args[2]
    elif len(args) != 1 or args[0].startswith("-"):
        print("usage: python recheck/recheck.py CERT.json [--pubkey KEY.pub]", file=sys.stderr)
        return 2
    try:
        lines, refused = recheck(args[0], pub)
    except NotProved as exc:
        print(f"NOT PROVED: {exc}", file=sys.stderr)
        return 1
    except Malformed as exc:
        print(f"REFUSED: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a kernel bug or an exhausted resource never counts as a proof
        print(f"NOT PROVED: kernel error {exc.__class__.__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    if refused:
        print(f"REFUSED: {args[0]}: not rechecked by this kernel ({'; '.join(refused)})", file=sys.stderr)
        return 2
    print(f"OK: {args[0]}: every claim and refutation proved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
