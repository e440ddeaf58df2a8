"""Certificates whose refutation is proved by merged cells (method lower = merged) and whose powers
were coarsened (coarsen_powers): what the calibration records, that `certdp verify` and the
independent kernel prove it, and that the new fields are validated (docs/certificates.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from certdp.cert.crypto import digest_hex
from certdp.cert.schema import FORMAT
from certdp.cli import main
from tests.cert_cli import kernel, verify

CALIBRATION = [
    "calibrate", "subsampled-gaussian", "--q", "0.1", "--steps", "10", "--epsilon", "2", "--delta", "1e-5",
    "--step", "0.001",
]  # fmt: skip


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("merged")
    cert = d / "c.json"
    assert main([*CALIBRATION, "--out", str(cert), "--json"]) == 0
    return {"dir": d, "cert": cert, "body": json.loads(cert.read_text())["body"]}


def _write(body: dict, path: Path) -> Path:
    """The body, digested but not schema-checked (finalize refuses a body the schema refuses): only
    the checkers can reject it."""
    doc = {"format": FORMAT, "body": body, "digest": {"alg": "sha256", "value": digest_hex(body)}, "signature": None}
    path.write_text(json.dumps(doc))
    return path


def test_the_calibration_records_merged_refutations_and_coarsened_powers(
    made: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    body = made["body"]
    assert body["refutation"]["method"]["lower"] == "merged"
    assert body["refutation"]["method"]["coarsen_powers"] is True
    assert body["claim"]["method"]["coarsen_powers"] is True
    assert "lower" not in body["claim"]["method"]  # a claim is an upper bound: it names no lower construction
    code, out = verify(made["cert"], capsys)
    assert code == 0, out
    res = kernel(made["cert"])
    assert res.returncode == 0 and "every claim and refutation proved" in res.stdout, res.stdout + res.stderr


def test_one_spacing_proves_what_the_coarsened_powers_proved(made: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """Dropping coarsen_powers makes the verifier compose at one spacing: at least as tight."""
    body = copy.deepcopy(made["body"])
    for check in ("claim", "refutation"):
        del body[check]["method"]["coarsen_powers"]
    code, out = verify(_write(body, made["dir"] / "one_spacing.json"), capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    ("where", "field", "value", "says"),
    [
        ("claim", "lower", "merged", "only a pld-lower check names its lower construction"),
        ("refutation", "lower", "tilted", "lower"),
        ("refutation", "coarsen_powers", "yes", "coarsen_powers"),
    ],
)
def test_bad_fields_are_refused_by_verify_and_the_kernel(
    made: dict, where: str, field: str, value: object, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    body = copy.deepcopy(made["body"])
    body[where]["method"][field] = value
    path = _write(body, made["dir"] / f"bad_{where}_{field}.json")
    code, out = verify(path, capsys)
    assert code == 2 and says in out, out
    res = kernel(path)
    assert res.returncode == 2, res.stdout + res.stderr


def test_a_merged_refutation_above_the_units_limit_is_malformed(made: dict, capsys: pytest.CaptureFixture[str]) -> None:
    body = copy.deepcopy(made["body"])
    for check in ("claim", "refutation"):
        body[check]["threshold"] = "41"
    code, out = verify(_write(body, made["dir"] / "eps41.json"), capsys)
    assert code == 2 and "merged needs threshold <= 40" in out, out


def test_a_balanced_label_is_rechecked_by_the_balancing(made: dict, capsys: pytest.CaptureFixture[str]) -> None:
    """The label decides what `certdp verify` recomputes: relabelled balanced, the same lattice is
    rechecked by the balancing (proved or refused, never a crash); the kernel proves any label
    by merged cells."""
    body = copy.deepcopy(made["body"])
    body["refutation"]["method"]["lower"] = "balanced"
    path = _write(body, made["dir"] / "balanced.json")
    code, out = verify(path, capsys)
    assert code in (0, 1), out
    res = kernel(path)
    assert res.returncode == 0, res.stdout + res.stderr


def _kernel_bounded(path: Path) -> tuple[int, str]:
    """The kernel under a 2 GiB address-space cap and a 120 s timeout: (exit code, its output)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    res = kernel(path, timeout=120, preexec_fn=cap)
    return res.returncode, res.stdout + res.stderr


def test_attack_round_8_files_stay_small_in_the_kernel(made: dict) -> None:
    """Attack review 2026-12-06 (B1, B2, C1): a refutation lattice far above the losses (the bottom
    cell's tilted mass e^(1.6e10) became a multi-GB integer), a huge recorded lower end (the bound
    became a multi-GB Fraction), and a dyadic astronomically beyond its decimal (OverflowError).
    Each is now refused with exit 1, in bounded memory."""
    far = copy.deepcopy(made["body"])
    lo = 2**37 + 2**36
    far["refutation"]["method"]["lattices"] = {"remove": {"h": "0.0625", "offset": "0", "lo": lo, "hi": lo + 3}}
    huge_eps = copy.deepcopy(made["body"])
    huge_eps["refutation"]["result"].update(lower="8000000000", lower_dyadic=["8000000000", 0])
    far_dyadic = copy.deepcopy(made["body"])
    far_dyadic["refutation"]["result"].update(lower="2.1", lower_dyadic=["9" * 200, 4096])
    for name, body in (("far", far), ("huge_eps", huge_eps), ("far_dyadic", far_dyadic)):
        code, out = _kernel_bounded(_write(body, made["dir"] / f"attack_{name}.json"))
        assert code == 1 and "kernel error" not in out, (name, out)


def test_tilted_masses_cannot_compound_over_many_steps(made: dict) -> None:
    """Attack review 2026-12-06 (B3): a bottom cell tilted to about 1.8 (under the drop at 2) over
    65536 steps grew Q's integers by about 0.7 bit per step (FLINT aborted at 5 GB); the tilted
    masses are now normalised to add up to 1 (any constant tilt keeps the identity)."""
    body = copy.deepcopy(made["body"])
    mech = {"name": "subsampled-gaussian", "steps": 65536, "params": {"q": "1", "direction": "remove"}}
    method = {"prec_bits": 128, "prune_floor_bits": 57}
    body["claim"] = {
        "mechanism": {**mech, "params": {**mech["params"], "sigma": "0.5"}},
        "quantity": "epsilon", "relation": "<=", "threshold": "200000", "delta": "0.00001",
        "method": {**method, "name": "pld-upper",
                   "lattices": {"remove": {"h": "0.0625", "offset": "0", "lo": -480, "hi": 400}}},
        "result": {"upper": "200000", "upper_dyadic": ["200000", 0]},
    }  # fmt: skip
    body["refutation"] = {
        "mechanism": {**mech, "params": {**mech["params"], "sigma": "0.499"}},
        "quantity": "epsilon", "relation": ">", "threshold": "200000", "delta": "0.00001",
        "method": {**method, "name": "pld-lower", "lower": "balanced",
                   "lattices": {"remove": {"h": "0.03125", "offset": "0", "lo": 22, "hi": 800}}},
        "result": {"lower": "200001", "lower_dyadic": ["200001", 0]},
    }  # fmt: skip
    body["step"] = "0.001"
    code, out = _kernel_bounded(_write(body, made["dir"] / "attack_compound.json"))
    assert code == 1 and "kernel error" not in out, out
