"""Regressions of the attacker review of the recheck kernel (issue 38): each crafted certificate is
re-signed with a fresh key, so only the kernel's own checks can reject it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_recheck import PLD, RDP, TV, kernel, resign, run, test_key  # noqa: F401  (fixture)


def test_a_pld_claim_cannot_be_answered_by_an_rdp_refutation(test_key, tmp_path: Path) -> None:  # noqa: F811
    # a pld-upper claim with an rdp-orders "refutation" one step below: the RDP result only says
    # RDP cannot certify there, not that the mechanism violates; the kernel once accepted it
    rdp_ref = json.loads(RDP.read_text())["body"]["refutation"]

    def mix(body: dict) -> None:
        ref = json.loads(json.dumps(rdp_ref))
        ref["mechanism"] = json.loads(json.dumps(body["refutation"]["mechanism"]))
        body["refutation"] = ref

    out = run(resign(PLD, mix, test_key[0], tmp_path / "mix.json"), test_key[1])
    assert out.returncode == 2 and "refutation.method" in out.stderr, out.stderr


def test_a_tv_check_names_random_allocation(test_key, tmp_path: Path) -> None:  # noqa: F811
    def rename(body: dict) -> None:
        body["claim"]["mechanism"]["name"] = "gaussian"
        body["refutation"] = None

    out = run(resign(TV, rename, test_key[0], tmp_path / "tv.json"), test_key[1])
    assert out.returncode == 2 and "mechanism.name" in out.stderr, out.stderr


def test_a_step_lattice_beyond_certdps_limit_is_refused_at_once(test_key, tmp_path: Path) -> None:  # noqa: F811
    # M = 1, E = 1, h = 1/4, cap = 10^6: 4e6 step points (about 17 CPU-minutes before the limit)
    def huge(body: dict) -> None:
        body["refutation"] = None
        params = body["claim"]["mechanism"]["params"]
        params["steps"], params["epochs"] = "1", "1"
        grid = body["claim"]["method"]["grid"]
        grid["h"], grid["cap"] = "0.25", "1000000"

    out = run(resign(TV, huge, test_key[0], tmp_path / "huge.json"), test_key[1])
    assert out.returncode == 2 and "TV limits" in out.stderr, out.stderr


@pytest.mark.parametrize(
    ("field", "value"),
    [("lower_unverified", {"x": 1}), ("seconds", "forever"), ("upper_unverified", "0.5")],
)
def test_informative_fields_must_be_what_they_say(field: str, value: object, test_key, tmp_path: Path) -> None:  # noqa: F811
    def edit(body: dict) -> None:
        body["claim"]["result"][field] = value

    out = run(resign(RDP, edit, test_key[0], tmp_path / "info.json"), test_key[1])
    assert out.returncode == 2 and "result" in out.stderr, out.stderr


def test_a_missing_reason_beside_a_refutation_is_refused(test_key, tmp_path: Path) -> None:  # noqa: F811
    def edit(body: dict) -> None:
        body["refutation_missing_reason"] = "none found"

    out = run(resign(RDP, edit, test_key[0], tmp_path / "why.json"), test_key[1])
    assert out.returncode == 2 and "refutation_missing_reason" in out.stderr, out.stderr


def test_a_huge_json_integer_is_malformed_not_a_kernel_error(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"format": ' + "9" * 5000 + "}")
    out = run(path, None)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr


def test_the_add_direction_cgf_bounds_the_integral_at_a_tiny_sigma() -> None:
    # sigma < 1/80: the tail bound for x >= hi needs W(x) >= 1, i.e. x >= 1/2, beyond 40 sigma
    from fractions import Fraction

    import mpmath as mp

    q, sigma, alpha = Fraction(1, 100), Fraction(1, 100), 3
    with mp.workdps(60):
        s, qq = mp.mpf(1) / 100, mp.mpf(1) / 100

        def f(x: mp.mpf) -> mp.mpf:
            w = mp.exp((2 * x - 1) / (2 * s * s))
            return mp.npdf(x, 0, s) * (1 - qq + qq * w) ** (1 - alpha)

        exact = mp.log(mp.quad(f, [-1, -0.1, 0, 0.1, 0.45, 0.5, 0.55, 1]))
        upper = kernel.cgf_add_upper(alpha, q, sigma)
        assert exact <= mp.mpf(upper.numerator) / upper.denominator <= exact * (1 + mp.mpf("1e-9"))


def test_a_signature_in_non_canonical_base64_is_refused(tmp_path: Path) -> None:
    # a flipped padding bit decodes to the same 64 bytes: a second file for one signature
    doc = json.loads(RDP.read_text())
    value = doc["signature"]["value"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    doc["signature"]["value"] = value[:-3] + alphabet[alphabet.index(value[-3]) ^ 1] + value[-2:]
    path = tmp_path / "b64.json"
    path.write_text(json.dumps(doc))
    out = run(path, None)
    assert out.returncode == 2 and "base64" in out.stderr, out.stderr
