"""Issue 39, items 1 and 5: every number a valid certificate records is proved, and the exit code
says what failed (2 malformed, 1 does not hold, 3 precision exhausted or undecided).

Format v2 records per check only the end the verifier proves (upper for ``<=``, lower for
``>``); ``certdp verify`` proves it (PLD: delta at that very number; RDP and TV: the recomputed
bound lies on the right side of it) and lists which numbers it rechecked. Each attack below is
re-signed with a fresh key, as an attacker with their own key would do.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from certdp.cert.crypto import public_key_b64
from certdp.cert.schema import FORMAT
from certdp.cert.write import finalize
from certdp.cli import main
from certdp.pairs.params import decimal_str

REPO = Path(__file__).resolve().parents[1]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A PLD certificate (q = 1, 8 steps, eps <= 5; claim and proved violation) and an RDP one."""
    tmp = tmp_path_factory.mktemp("ends")
    pld, rdp = tmp / "pld.json", tmp / "rdp.json"
    base = ["calibrate", "subsampled-gaussian", "--delta", "1e-5"]
    assert main([*base, "--q", "1", "--steps", "8", "--epsilon", "5", "--via", "pld", "--out", str(pld)]) == 0
    assert main([*base, "--q", "0.01", "--steps", "100", "--epsilon", "3", "--via", "rdp", "--out", str(rdp)]) == 0
    return {"tmp": tmp, "pld": json.loads(pld.read_text()), "rdp": json.loads(rdp.read_text())}


def _resigned(tmp: Path, name: str, body: dict[str, Any]) -> tuple[Path, Path]:
    """The body as a certificate signed with a fresh key (digest recomputed): what an attacker writes."""
    key = Ed25519PrivateKey.generate()
    path, pub = tmp / f"{name}.json", tmp / f"{name}.pub"
    doc = {"format": FORMAT, "body": body, "digest": None, "signature": None}
    try:
        doc = finalize(body, key)
    except Exception:  # a body outside the schema: digest and sign it anyway
        from certdp.cert.crypto import digest_hex, sign_body

        doc.update(digest={"alg": "sha256", "value": digest_hex(body)}, signature=sign_body(body, key))
    path.write_text(json.dumps(doc))
    pub.write_text(public_key_b64(key.public_key()) + "\n")
    return path, pub


def _verify(path: Path, pub: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return _run(["verify", str(path), "--pubkey", str(pub), "--json"], capsys)


def test_written_certificates_record_only_proved_ends(made: dict[str, Any]) -> None:
    for doc in (made["pld"], made["rdp"]):
        assert doc["format"] == FORMAT
        assert {"upper", "upper_dyadic"} <= set(doc["body"]["claim"]["result"])
        assert not {"lower", "lower_dyadic"} & set(doc["body"]["claim"]["result"])
        assert {"lower", "lower_dyadic"} <= set(doc["body"]["refutation"]["result"])
        assert not {"upper", "upper_dyadic"} & set(doc["body"]["refutation"]["result"])


def test_verify_says_which_numbers_it_rechecked(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("pld", "rdp"):
        body = made[name]["body"]
        path, pub = _resigned(made["tmp"], f"honest_{name}", copy.deepcopy(body))
        code, out, err = _verify(path, pub, capsys)
        assert code == 0, err
        claim, refutation = json.loads(out)["checks"]
        assert claim["recorded"] == {"upper": body["claim"]["result"]["upper"]}
        assert refutation["recorded"] == {"lower": body["refutation"]["result"]["lower"]}
        assert claim["rechecked"] == ["result/upper", "result/upper_dyadic", "threshold"]
        unverified = [f"result/{k}" for k in body["claim"]["result"] if k not in ("upper", "upper_dyadic")]
        assert claim["not_rechecked"] == sorted(unverified)
        if name == "pld":  # the calibrator's other end is kept, named for its status
            assert "result/lower_unverified" in claim["not_rechecked"]
        code, out, _ = _run(["verify", str(path), "--pubkey", str(pub)], capsys)
        assert code == 0 and f"rechecked: recorded upper {body['claim']['result']['upper']}" in out


def test_pld_claim_with_false_zero_result_is_invalid(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 1: result lower = upper = 0 (true eps about 5), re-signed, verified as valid."""
    body = copy.deepcopy(made["pld"]["body"])
    body["claim"]["result"] = {"upper": "0", "upper_dyadic": ["0", 0]}
    code, out, err = _verify(*_resigned(made["tmp"], "zero_v2", body), capsys)
    assert code == 1 and not out and "result/upper" in err and "not proved by pld-upper" in err
    # the old shape (both ends) is no longer a certificate at all
    body["claim"]["result"] = {"lower": "0", "upper": "0", "lower_dyadic": ["0", 0], "upper_dyadic": ["0", 0]}
    code, out, err = _verify(*_resigned(made["tmp"], "zero_both", body), capsys)
    assert code == 2 and not out and "body/claim/result" in err and "lower" in err


def test_pld_claim_q1_sigma03_false_recorded_end(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 1: q = 1, sigma = 0.3, 8 steps, eps <= 100 recorded [2.998, 3.0] (true eps 83.83)."""
    body = copy.deepcopy(made["pld"]["body"])
    claim = body["claim"]
    claim["mechanism"]["params"]["sigma"] = "0.3"
    claim["threshold"] = "100"
    claim["result"] = {"upper": "3.0", "upper_dyadic": ["3", 0], "lower_unverified": "2.998"}
    body["refutation"], body["refutation_missing_reason"] = None, "none"
    code, out, err = _verify(*_resigned(made["tmp"], "q1_sigma03", body), capsys)
    assert code == 1 and not out and "the recorded upper end 3.0 is not proved" in err


def test_recorded_end_must_decide_the_relation(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    body = copy.deepcopy(made["rdp"]["body"])
    body["claim"]["result"] = {"upper": "3.5", "upper_dyadic": ["7", -1]}  # a true upper bound, above 3
    code, _, err = _verify(*_resigned(made["tmp"], "above", body), capsys)
    assert code == 1 and "does not prove epsilon <= 3" in err
    body = copy.deepcopy(made["rdp"]["body"])
    body["claim"]["result"]["upper"] = "2.9"  # the decimal below its own dyadic end: not rounded outward
    code, _, err = _verify(*_resigned(made["tmp"], "decimal_low", body), capsys)
    assert code == 1 and "rounded outward" in err
    body["claim"]["result"]["upper"] = "3.5"  # rounded outward, but no longer deciding <= 3
    code, _, err = _verify(*_resigned(made["tmp"], "decimal_high", body), capsys)
    assert code == 1 and "does not prove epsilon <= 3" in err
    body["claim"]["result"] = {"upper": "-1", "upper_dyadic": ["-1", 0]}  # epsilon is never negative
    code, _, err = _verify(*_resigned(made["tmp"], "negative", body), capsys)
    assert code == 2 and "must be >= 0" in err


def test_rdp_recorded_end_below_the_truth_is_invalid(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    body = copy.deepcopy(made["rdp"]["body"])
    up = Fraction(body["claim"]["result"]["upper"])
    false = Fraction(round((up - Fraction(1, 1000)) * 2**60), 2**60)  # 0.001 below the proved end
    body["claim"]["result"] = {
        "upper": decimal_str(false),
        "upper_dyadic": [str(false.numerator * 2**60 // false.denominator), -60],
    }
    code, _, err = _verify(*_resigned(made["tmp"], "rdp_low", body), capsys)
    assert code == 1 and "not proved by rdp-orders" in err


def test_exit_codes_mean_one_thing(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    tmp = made["tmp"]
    honest, pub = _resigned(tmp, "honest", copy.deepcopy(made["rdp"]["body"]))
    text = honest.read_text()
    cases = {
        "bad_json": (text[:-5], 2),
        "duplicate_key": (text.replace('"body": {', '"body": {"step": "0.5", ', 1), 2),
        "schema": (text.replace('"quantity": "epsilon"', '"quantity": "kl"', 1), 2),
        "old_format": (text.replace(FORMAT, "certdp-certificate/1"), 2),
        "tampered": (text.replace('"threshold": "3"', '"threshold": "4"', 1), 1),
    }
    for name, (data, want) in cases.items():
        assert data != text, name
        (tmp / f"{name}.json").write_text(data)
        code, out, err = _verify(tmp / f"{name}.json", pub, capsys)
        assert code == want and not out and len(err.strip().splitlines()) == 1, (name, code, err)
    other = Ed25519PrivateKey.generate()
    (tmp / "other.pub").write_text(public_key_b64(other.public_key()))
    code, _, err = _verify(honest, tmp / "other.pub", capsys)
    assert code == 1 and "different key" in err


def test_prec_bits_too_small_is_precision_exhausted(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 5: prec_bits = 16 in an RDP check exited 1 with an internal message."""
    body = copy.deepcopy(made["rdp"]["body"])
    body["claim"]["method"]["prec_bits"] = 16
    code, out, err = _verify(*_resigned(made["tmp"], "prec16", body), capsys)
    assert code == 3 and not out and "prec_bits=16" in err and "precision exhausted" in err
    assert "must be exact numbers" not in err


def test_numbers_are_echoed_in_one_canonical_form(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 5: one report showed q=5e-2 in the claim and q=0.050 in the refutation."""
    body = copy.deepcopy(made["rdp"]["body"])
    body["claim"]["mechanism"]["params"]["q"] = "1e-2"
    body["refutation"]["mechanism"]["params"]["q"] = "0.010"
    body["claim"]["delta"], body["refutation"]["delta"] = "1e-5", "0.000010"
    body["claim"]["threshold"], body["refutation"]["threshold"] = "3.0", "3e0"
    code, out, err = _verify(*_resigned(made["tmp"], "forms", body), capsys)
    assert code == 0, err
    claim, refutation = json.loads(out)["checks"]
    for check in (claim, refutation):
        assert "q=0.01," in check["of"] and "delta=0.00001" in check["of"] and check["threshold"] == "3"
    assert claim["of"].split(" x ")[1] == refutation["of"].split(" x ")[1]


def test_sign_with_lone_surrogate_is_one_line(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 3: a lone surrogate in the body printed an rfc8785 traceback from certdp sign."""
    tmp = made["tmp"]
    doc = copy.deepcopy(made["rdp"])
    doc["body"]["notes"] = "\ud800"
    path = tmp / "surrogate.json"
    path.write_text(json.dumps(doc))  # json.dumps writes the escape "\ud800"
    assert main(["keygen", "--out", str(tmp / "s.key")]) == 0
    capsys.readouterr()
    code, out, err = _run(["sign", str(path), "--key", str(tmp / "s.key")], capsys)
    assert code == 2 and not out and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "cannot be canonicalized" in err
    code, _, err = _run(["verify", str(path), "--allow-untrusted"], capsys)
    assert code == 2 and "cannot be canonicalized" in err


def test_committed_pld_certificate_with_zero_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Finding 1 on the committed file the issue names."""
    doc = json.loads((REPO / "certificates" / "dpsgd_pld_q0.05_n500_eps3.json").read_text())
    if doc["format"] != FORMAT:
        pytest.skip("the committed certificates are not regenerated in this format yet")
    body = doc["body"]
    body["claim"]["result"] = {"upper": "0", "upper_dyadic": ["0", 0]}
    body["refutation"], body["refutation_missing_reason"] = None, "dropped by the attacker"
    code, out, err = _verify(*_resigned(tmp_path, "committed_zero", body), capsys)
    assert code == 1 and not out and "not proved by pld-upper" in err


def test_recorded_end_survives_last_bit_changes(
    made: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate made by one certdp must verify under another whose PLD bounds differ in the
    last bits (found while regenerating: a file written before an unrelated change of the
    fixed-point precision no longer verified, its end being the tightest grid point proved). The
    recorded end is loosened by RECORD_SLACK, which leaves that margin."""
    from certdp.cert.write import RECORD_SLACK
    from certdp.enclose import to_ball
    from certdp.notions.pld import LatticeBounds

    body = made["pld"]["body"]
    up = (
        Fraction(body["claim"]["result"]["upper_dyadic"][0]) * Fraction(2) ** body["claim"]["result"]["upper_dyadic"][1]
    )
    assert up > Fraction(body["claim"]["result"]["lower_unverified"])
    path, pub = _resigned(made["tmp"], "slack", copy.deepcopy(body))
    real = LatticeBounds.delta

    def perturbed(self: LatticeBounds, side: str, eps: Fraction) -> object:
        ball = real(self, side, eps)  # 2^-32 relative worse on the side that must hold
        return ball * to_ball(1 + Fraction(1, 2**32)) if side == "upper" else ball * to_ball(1 - Fraction(1, 2**32))

    monkeypatch.setattr(LatticeBounds, "delta", perturbed)
    code, _, err = _verify(path, pub, capsys)
    assert code == 0, err
    assert RECORD_SLACK == Fraction(1, 2**30)


def test_sweep_summary_reports_the_proved_ends_canonically(made: dict[str, Any]) -> None:
    """Sweep summaries read certificates: they report the two proved ends (never *_unverified),
    in the canonical decimal form, and say whether they were rechecked on the client."""
    from certdp.cli.sweep_checks import certificate_summary

    doc = copy.deepcopy(made["pld"])
    claim, refutation = doc["body"]["claim"], doc["body"]["refutation"]
    sigma = Fraction(claim["mechanism"]["params"]["sigma"])
    claim["mechanism"]["params"]["sigma"] = f"{decimal_str(sigma * 1000)}e-3"
    claim["result"]["upper"] += "000"
    summary = certificate_summary(doc, rechecked=True)
    assert summary["sigma"] == decimal_str(sigma) and summary["rechecked"] is True
    assert Fraction(summary["claim_upper"]) == Fraction(claim["result"]["upper"])
    assert not summary["claim_upper"].endswith("0")
    assert summary["refutation_lower"] == decimal_str(Fraction(refutation["result"]["lower"]))
    assert summary["claim_upper"] != claim["result"]["lower_unverified"]
    assert certificate_summary(doc)["rechecked"] is False
