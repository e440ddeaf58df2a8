"""Ed25519 public keys of small order are refused (issue 39, attacker finding 1).

With the identity point as public key, R = identity and S = 0, the RFC 8032 check [S]B = R + [k]A
holds for every body: ``certdp verify --allow-untrusted`` reported any edited certificate "valid,
signed by AQAAAA...". The key check is pure Python integer arithmetic, so it is compared here with
the curve equation and with the torsion points' known orders (found independently by repeated
addition), and keys the cryptography package generates are always accepted.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.cert.crypto import digest_hex, load_public_key_b64, public_key_b64
from certdp.cert.ed25519_points import P, _add, decompress, public_key_problem
from certdp.cli import main
from certdp.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[1]
CERT = ROOT / "certificates" / "dpsgd_q0.01_n500_eps3.json"
IDENTITY = bytes([1]) + bytes(31)  # y = 1, x = 0: the neutral element
#: a point of order 8 (RFC 8032 torsion; its order is re-derived below, not trusted)
ORDER_EIGHT = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _order(raw: bytes) -> int:
    """The order of a point by repeated addition (at most 8 steps are expected; 64 allowed)."""
    point = decompress(raw)
    assert point is not None
    acc, k = point, 1
    while acc != (0, 1) and k < 64:
        acc, k = _add(acc, point), k + 1
    return k


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def _forged(tmp_path: Path, key: bytes, edit: bool = True) -> Path:
    """A committed certificate with an edited claim, 'signed' by ``key`` with R = identity, S = 0."""
    doc = json.loads(CERT.read_text())
    if edit:
        doc["body"]["claim"]["threshold"] = "0.001"  # a claim the real signer never made
    doc["digest"]["value"] = digest_hex(doc["body"])
    doc["signature"] = {
        "alg": "ed25519",
        "public_key": base64.b64encode(key).decode(),
        "value": base64.b64encode(IDENTITY + bytes(32)).decode(),
    }
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_torsion_points_are_refused() -> None:
    assert _order(IDENTITY) == 1 and _order(ORDER_EIGHT) == 8
    for raw in (IDENTITY, ORDER_EIGHT):
        assert public_key_problem(raw) is not None
    # every multiple of the order-8 point (the whole 8-torsion) is refused
    point = decompress(ORDER_EIGHT)
    assert point is not None
    acc = point
    for _ in range(8):
        x, y = acc
        raw = (y | ((x & 1) << 255)).to_bytes(32, "little")
        assert decompress(raw) == acc and "small order" in (public_key_problem(raw) or "")
        acc = _add(acc, point)


def test_non_canonical_encodings_are_refused() -> None:
    assert public_key_problem((P + 1).to_bytes(32, "little")) is not None  # y = p + 1 spells y = 1
    assert public_key_problem((1 | (1 << 255)).to_bytes(32, "little")) is not None  # x = 0, sign set
    assert public_key_problem(bytes(31)) is not None


@settings(max_examples=25, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_generated_keys_are_accepted_and_on_the_curve(seed: bytes) -> None:
    raw = base64.b64decode(public_key_b64(Ed25519PrivateKey.from_private_bytes(seed).public_key()))
    assert public_key_problem(raw) is None
    point = decompress(raw)
    assert point is not None
    x, y = point
    d = (-121665 * pow(121666, P - 2, P)) % P
    assert (-x * x + y * y - 1 - d * x * x * y * y) % P == 0
    # the encoding round-trips: y and the sign of x
    assert (y | ((x & 1) << 255)).to_bytes(32, "little") == raw


def test_verify_refuses_a_certificate_signed_by_the_identity_key(tmp_path: Path) -> None:
    code, err = _run(["verify", str(_forged(tmp_path, IDENTITY)), "--allow-untrusted"])
    assert code == 1, err
    assert err.count("\n") == 1 and "signature/public_key" in err and "AQAAAA" in err and "small order" in err


def test_verify_refuses_a_certificate_signed_by_an_order_eight_key(tmp_path: Path) -> None:
    code, err = _run(["verify", str(_forged(tmp_path, ORDER_EIGHT, edit=False)), "--allow-untrusted"])
    assert code == 1 and "small order" in err, err


def test_pubkey_files_of_small_order_exit_2(tmp_path: Path) -> None:
    for raw in (IDENTITY, ORDER_EIGHT):
        pub = tmp_path / "bad.pub"
        text = base64.b64encode(raw).decode()
        pub.write_text(text + "\n")
        try:
            load_public_key_b64(pub)
        except InvalidArgument as exc:
            assert "pubkey=" in str(exc) and text in str(exc) and "small order" in str(exc)
        else:
            raise AssertionError("a small-order --pubkey was accepted")
        code, err = _run(["verify", str(CERT), "--pubkey", str(pub)])
        assert code == 2 and "small order" in err and err.count("\n") == 1, err


def test_the_project_key_and_a_fresh_key_are_accepted(tmp_path: Path) -> None:
    project = ROOT / "certificates" / "certdp-project.pub"
    assert load_public_key_b64(project) == project.read_text().strip()
    code, err = _run(["keygen", "--out", str(tmp_path / "k.key")])
    assert code == 0, err
    fresh = tmp_path / "k.key.pub"
    assert load_public_key_b64(fresh) == fresh.read_text().strip()
    assert load_public_key_b64(tmp_path / "k.key") == fresh.read_text().strip()
