"""Certificates: format, signing, verification by recomputation, tamper resistance."""

from __future__ import annotations

import copy
import json
import stat
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certdp.cert.crypto import digest_hex
from certdp.cert.schema import validate
from certdp.cert.write import finalize
from certdp.cli import main
from certdp.errors import CertificateMalformed
from tests.cert_cli import verify

#: a PLD calibration that takes a few seconds: 20 steps, a coarse lattice (2^-9) and step 1e-3
PLD_CALIBRATION = [
    "calibrate",
    "subsampled-gaussian",
    "--q",
    "0.05",
    "--steps",
    "20",
    "--epsilon",
    "1",
    "--delta",
    "1e-5",
    "--step",
    "0.001",
    "--h",
    "0.001953125",
]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cert")
    key = d / "k.key"
    assert main(["keygen", "--out", str(key), "--json"]) == 0
    other = d / "other.key"
    assert main(["keygen", "--out", str(other), "--json"]) == 0
    cert = d / "eps.json"
    argv = [
        "calibrate",
        "subsampled-gaussian",
        "--q",
        "0.05",
        "--steps",
        "100",
        "--epsilon",
        "3",
        "--delta",
        "1e-5",
        "--via",
        "rdp",
        "--out",
        str(cert),
        "--sign",
        str(key),
        "--json",
    ]
    assert main(argv) == 0
    pld = d / "pld.json"
    argv = [*PLD_CALIBRATION, "--out", str(pld), "--sign", str(key), "--json"]
    assert main(argv) == 0
    ra = d / "ra.json"
    argv = [
        "calibrate",
        "random-allocation",
        "--steps",
        "10",
        "--epochs",
        "2",
        "--tv",
        "0.2",
        "--step",
        "1e-4",
        "--out",
        str(ra),
        "--sign",
        str(key),
        "--json",
    ]
    assert main(argv) == 0
    return {
        "key": key,
        "pub": Path(str(key) + ".pub"),
        "other_pub": Path(str(other) + ".pub"),
        "eps": cert,
        "pld": pld,
        "ra": ra,
    }


def test_key_file_modes(signed: dict[str, Path]) -> None:
    assert stat.S_IMODE(signed["key"].stat().st_mode) == 0o600
    assert len(signed["pub"].read_text().strip()) == 44


def test_valid_certificates_verify(signed: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("eps", "pld", "ra"):
        code, out = verify(signed[name], capsys, "--pubkey", str(signed["pub"]))
        assert code == 0, out
        rec = json.loads(out)
        assert rec["status"] == "valid" and rec["signature"] == "signed" and len(rec["checks"]) == 2


def test_random_allocation_verify_is_not_slower_than_certification(
    signed: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(signed["ra"].read_text())
    certify = doc["body"]["claim"]["result"]["seconds"] + doc["body"]["refutation"]["result"]["seconds"]
    code, out = verify(signed["ra"], capsys)
    assert code == 0
    assert json.loads(out)["seconds"] <= certify * 1.5 + 1.0  # same computation, plus parsing


def _rewrite(doc: dict, path: Path, resign: bool = False) -> None:
    if resign:  # re-digest so that only the recomputation can catch the lie
        doc = finalize(doc["body"])
    path.write_text(json.dumps(doc))


def test_false_claim_is_refuted(signed: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(signed["ra"].read_text())
    doc["body"]["claim"]["threshold"] = "0.19"  # claim a tighter target than the sigma meets
    doc["body"]["refutation"] = None  # (a refutation must share the claim's threshold)
    bad = tmp_path / "false.json"
    _rewrite(doc, bad, resign=True)
    code, out = verify(bad, capsys)
    assert code == 1 and "refuted" in out and "claim" in out


def test_false_epsilon_claim_is_refuted(
    signed: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(signed["eps"].read_text())
    doc["body"]["claim"]["threshold"] = "2.9"
    doc["body"]["refutation"] = None
    bad = tmp_path / "false.json"
    _rewrite(doc, bad, resign=True)
    code, out = verify(bad, capsys)
    assert code == 1 and "refuted" in out


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _paths(v, (*prefix, k))] or [prefix]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _paths(v, (*prefix, i))] or [prefix]
    return [prefix]


def _set(doc: dict, path: tuple, value: object) -> None:
    cur = doc
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


def _get(doc: dict, path: tuple) -> object:
    cur = doc
    for p in path:
        cur = cur[p]
    return cur


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_body_mutation_fails_with_exit_1_or_2(
    signed: dict[str, Path], tmp_path: Path, data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(signed["eps"].read_text())
    leaves = [("body", *p) for p in _paths(doc["body"])]
    path = data.draw(st.sampled_from(leaves))
    old = _get(doc, path)
    new = data.draw(
        st.one_of(st.text(max_size=5), st.integers(-5, 10**6), st.none(), st.booleans()).filter(
            lambda v: (v != old and type(v) is not type(old)) or v != old
        )
    )
    _set(doc, path, new)
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(doc))
    code, out = verify(bad, capsys)
    try:  # exit 2 for a body outside the schema, else 1: the digest no longer matches
        validate(doc)
        want = 1
    except CertificateMalformed:
        want = 2
    assert code == want, (path, new, out)
    assert "field" in out


@pytest.mark.parametrize("what", ["digit", "sigma", "drop-signature", "swap-key", "truncate", "garbage"])
def test_named_tampering(
    what: str, signed: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = signed["eps"].read_text()
    doc = json.loads(text)
    extra: list[str] = []
    if what == "digit":
        up = doc["body"]["claim"]["result"]["upper"]
        doc["body"]["claim"]["result"]["upper"] = up[:-1] + ("1" if up[-1] != "1" else "2")
        text = json.dumps(doc)
    elif what == "sigma":
        doc["body"]["claim"]["mechanism"]["params"]["sigma"] = "0.7"
        text = json.dumps(doc)
    elif what == "drop-signature":
        doc["signature"] = None
        text = json.dumps(doc)
        extra = ["--pubkey", str(signed["pub"])]
    elif what == "swap-key":
        extra = ["--pubkey", str(signed["other_pub"])]
    elif what == "truncate":
        text = text[: len(text) // 2]
    else:
        text = "\x00\xffnot json"
    bad = tmp_path / "t.json"
    bad.write_text(text, errors="surrogateescape") if what != "garbage" else bad.write_bytes(b"\x00\xffnot json")
    code, out = verify(bad, capsys, *extra)
    # unparseable input is exit 2; a digest or signature that does not hold, exit 1
    assert code == (2 if what in ("truncate", "garbage") else 1), out
    assert "field" in out


def test_unsigned_is_reported_and_sign_adds_a_signature(
    signed: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(signed["eps"].read_text())
    unsigned = finalize(doc["body"])
    path = tmp_path / "u.json"
    path.write_text(json.dumps(unsigned))
    code, out = verify(path, capsys)
    assert code == 0 and json.loads(out)["signature"] == "unsigned"
    assert main(["sign", str(path), "--key", str(signed["key"]), "--json"]) == 0
    capsys.readouterr()
    code, out = verify(path, capsys, "--pubkey", str(signed["pub"]))
    assert code == 0 and json.loads(out)["signature"] == "signed"
    assert digest_hex(json.loads(path.read_text())["body"]) == unsigned["digest"]["value"]


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "missing.json"), "--allow-untrusted"]) == 2
    key = tmp_path / "k"
    assert main(["keygen", "--out", str(key)]) == 0
    assert main(["keygen", "--out", str(key)]) == 2  # never overwrite a key
    assert main(["calibrate", "subsampled-gaussian", "--q", "0.01", "--steps", "10", "--epsilon", "3"]) == 2
    assert main(["sign", str(tmp_path / "missing.json"), "--key", str(key)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "delta is required" in err


def test_certificate_is_written_atomically(signed: dict[str, Path]) -> None:
    leftovers = [p for p in signed["eps"].parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    doc = json.loads(signed["eps"].read_text())
    assert doc["format"] == "certdp-certificate/2" and doc["body"]["flint_version"]
    assert copy.deepcopy(doc["body"]["claim"]["method"]["orders"])[:3] == [2, 3, 4]


def test_pld_certificate_states_a_proved_violation(signed: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The PLD certificate's claim is recomputed by the lattice upper bound and its refutation by
    the lower bound, which the output states as a violation of (epsilon, delta)-DP."""
    code, out = verify(signed["pld"], capsys, "--pubkey", str(signed["pub"]))
    rec = json.loads(out)
    assert code == 0 and [c["method"] for c in rec["checks"]] == ["pld-upper", "pld-lower"]
    assert "NOT (epsilon, delta)-DP" in rec["checks"][1]["means"]
    body = json.loads(signed["pld"].read_text())["body"]
    assert set(body["claim"]["method"]["lattices"]) == {"remove", "add"}
    assert Fraction(body["claim"]["result"]["upper"]) <= 1 < Fraction(body["refutation"]["result"]["lower"])


def _pld_tamper(doc: dict, what: str) -> None:
    claim, ref = doc["body"]["claim"], doc["body"]["refutation"]
    lat = claim["method"]["lattices"]["remove"]
    if what == "h-not-power-of-two":
        lat["h"] = "0.003"
    elif what == "offset-not-below-h":
        lat["offset"] = lat["h"]
    elif what == "missing-direction":
        del claim["method"]["lattices"]["add"]
    elif what == "claim-by-lower-bound":
        claim["method"]["name"] = "pld-lower"
    elif what == "refutation-by-upper-bound":
        ref["method"]["name"] = "pld-upper"
    elif what == "prune-bits":
        claim["method"]["prune_floor_bits"] = 10
    elif what == "orders-too":
        claim["method"]["orders"] = [2, 3]
    elif what == "too-many-cells":
        lat["hi"] = lat["lo"] + (1 << 22)
    elif what == "coarse-refutation":  # a valid lattice on which the lower bound cannot prove it
        ref["method"]["lattices"]["remove"] = {"h": "0.0625", "offset": "0", "lo": -2, "hi": 60}
    elif what == "tighter-claim":  # below what the upper bound proves at this sigma
        claim["threshold"] = ref["threshold"] = "0.9"


@pytest.mark.parametrize(
    ("what", "code", "words"),
    [
        ("h-not-power-of-two", 2, "power of two"),
        ("offset-not-below-h", 2, "offset"),
        ("missing-direction", 2, "directions"),
        ("claim-by-lower-bound", 2, "upper bound"),
        ("refutation-by-upper-bound", 2, "lower bound"),
        ("prune-bits", 2, "prune_floor_bits"),
        ("orders-too", 2, "no orders"),
        ("too-many-cells", 2, "cells"),
        ("coarse-refutation", 1, "not proved by pld-lower"),
        ("tighter-claim", 1, "refuted"),
    ],
)
def test_pld_tampering_is_caught_by_the_reading_or_the_recomputation(
    what: str, code: int, words: str, signed: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-digested (unsigned) PLD certificates with a lattice the verifier cannot validate, a method
    that does not fit the relation (exit 2: schema-invalid), a file beyond the work limits (exit 2), or a
    claim the recomputation does not prove (exit 1): each is refused with the field named."""
    doc = json.loads(signed["pld"].read_text())
    _pld_tamper(doc, what)
    bad = tmp_path / "t.json"
    _rewrite(doc, bad, resign=True)
    got, out = verify(bad, capsys)
    assert got == code and words in out, out


def test_a_failed_invariant_in_the_recomputation_is_a_one_line_rejection(
    signed: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth (attack review): an AssertionError raised inside the recomputation (the
    lattice bounds assert construction invariants) rejects the certificate with exit 1 and one
    line naming the error class, never a traceback and never an acceptance."""
    import certdp.cert.verify as verify_module

    def broken(check: object, end: object) -> object:
        raise AssertionError("cell fractions exceed 1")

    monkeypatch.setattr(verify_module, "prove_end", broken)
    code, out = verify(signed["pld"], capsys)
    assert code == 1 and "recomputation failed (AssertionError)" in out
