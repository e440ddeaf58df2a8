"""PLD certificates on split lattices (fine cells in the bulk of one step's loss, coarse cells of
``stride`` fine steps in its tails; docs/math.md §10 "Bulk and tails", docs/certificates.md):
calibrate records them, ``certdp verify`` recomputes them with certdp's split composition, and
the independent recheck kernel proves them with its own full-power composition on the fine grid.
Tampered split fields are refused by the reading (exit 2) or not proved (exit 1), never accepted.
"""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certdp.cert.write import finalize
from certdp.cli import main
from tests.cert_cli import kernel, verify

#: a few seconds: 20 steps at q = 0.01 on 2^-13, where one step's loss has about 39k fine cells
#: over its whole range and half of them in the bulk (so the lattices are split)
SPLIT_CALIBRATION = [
    "calibrate",
    "subsampled-gaussian",
    "--q",
    "0.01",
    "--steps",
    "20",
    "--epsilon",
    "1",
    "--delta",
    "1e-5",
    "--step",
    "0.001",
    "--h",
    "0.0001220703125",
]


@pytest.fixture(scope="module")
def split_cert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("split")
    key = d / "k.key"
    assert main(["keygen", "--out", str(key), "--json"]) == 0
    cert = d / "split.json"
    assert main([*SPLIT_CALIBRATION, "--out", str(cert), "--sign", str(key), "--json"]) == 0
    return {"cert": cert, "pub": Path(str(key) + ".pub")}


def _rewrite(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(finalize(doc["body"])))  # re-digested: only the mathematics can reject it


def test_calibration_records_split_lattices_that_both_checkers_prove(
    split_cert: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.loads(split_cert["cert"].read_text())["body"]
    claim = body["claim"]["method"]["lattices"]["remove"]
    ref = body["refutation"]["method"]["lattices"]["remove"]
    for lat in (claim, ref):
        assert {"bulk_lo", "bulk_hi", "stride"} <= set(lat) and lat["stride"] > 1
        assert lat["lo"] <= lat["bulk_lo"] < lat["bulk_hi"] < lat["hi"]
    assert Fraction(body["claim"]["result"]["upper"]) <= 1 < Fraction(body["refutation"]["result"]["lower"])
    code, out = verify(split_cert["cert"], capsys, "--pubkey", str(split_cert["pub"]))
    assert code == 0, out
    res = kernel(split_cert["cert"], split_cert["pub"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "every claim and refutation proved" in res.stdout


def test_a_coarse_probe_records_a_plain_lattice(split_cert: dict[str, Path]) -> None:
    """Probes coarser than the calibration's h stay plain (the add direction here)."""
    body = json.loads(split_cert["cert"].read_text())["body"]
    add = body["claim"]["method"]["lattices"]["add"]
    assert set(add) == {"h", "offset", "lo", "hi"}


def _tamper(doc: dict, what: str) -> None:
    lat = doc["body"]["claim"]["method"]["lattices"]["remove"]
    if what == "stride-not-dividing":
        lat["stride"] += 1
    elif what == "stride-alone":
        del lat["bulk_lo"], lat["bulk_hi"]
    elif what == "bulk-outside":
        lat["bulk_hi"] = lat["hi"] + lat["stride"]
    elif what == "too-many-cells":  # a fine range past the verifier's 2^22 (and the kernel's)
        lat["stride"] = 1
        lat["hi"] = lat["lo"] + (1 << 23)
    elif what == "one-coarse-tail-cell":  # valid, but the upper bound on it cannot prove the claim
        lat["bulk_hi"] = lat["bulk_lo"] + 8
        lat["stride"] = lat["hi"] - lat["bulk_hi"]


@pytest.mark.parametrize(
    ("what", "code", "words"),
    [
        ("stride-not-dividing", 2, "stride"),
        ("stride-alone", 2, "bulk_lo"),
        ("bulk-outside", 2, "bulk_hi"),
        ("too-many-cells", 2, "range"),
        ("one-coarse-tail-cell", 1, "not proved"),
    ],
)
def test_tampered_split_fields_are_refused_by_verify_and_the_kernel(
    what: str, code: int, words: str, split_cert: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(split_cert["cert"].read_text())
    _tamper(doc, what)
    bad = tmp_path / "t.json"
    _rewrite(doc, bad)
    got, out = verify(bad, capsys)
    assert got == code and words in out, out
    res = kernel(bad)
    assert res.returncode == code, res.stdout + res.stderr


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_valid_split_of_the_claim_gives_a_sound_verdict(
    data: st.DataObject, split_cert: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every valid bulk/stride is sound, so a re-split claim is either still proved (exit 0: then an
    independent two-sided enclosure at sigma must not contradict it) or not proved (exit 1); the
    kernel, with its own composition, accepts whenever its own bound proves it."""
    doc = json.loads(split_cert["cert"].read_text())
    lat = doc["body"]["claim"]["method"]["lattices"]["remove"]
    lo, hi = lat["lo"], lat["hi"]
    stride = data.draw(st.integers(1, 64), label="stride")
    b_lo = lo + stride * data.draw(st.integers(0, 4), label="left tail cells")
    b_hi = hi - stride * data.draw(st.integers(1, (hi - b_lo) // stride - 1), label="right tail cells")
    lat.update(bulk_lo=b_lo, bulk_hi=b_hi, stride=stride)
    doc["body"]["refutation"] = None
    doc["body"]["refutation_missing_reason"] = "tampered"
    bad = tmp_path / "s.json"
    _rewrite(doc, bad)
    got, out = verify(bad, capsys)
    assert got in (0, 1), out
    if got == 0:
        from certdp.enclose import workprec
        from certdp.notions.pld import pld_bounds
        from certdp.pairs import SubsampledGaussian, compose

        sigma = doc["body"]["claim"]["mechanism"]["params"]["sigma"]
        with workprec(128):
            ref = pld_bounds(
                compose(SubsampledGaussian("0.01", sigma, "both"), 20), delta=Fraction(1, 10**5), rel_width="1e-4"
            )
        assert ref.enclosure.lower <= 1  # the accepted claim eps <= 1 is not contradicted
    res = kernel(bad)
    assert res.returncode in (0, 1), res.stdout + res.stderr


def _check(mech: dict, relation: str, threshold: str, method: dict, end: str) -> dict:
    key = ("upper", "upper_dyadic") if relation == "<=" else ("lower", "lower_dyadic")
    return {
        "mechanism": {"name": "subsampled-gaussian", "steps": 1, "params": mech},
        "quantity": "epsilon",
        "relation": relation,
        "threshold": threshold,
        "delta": "0.00001",
        "method": {"prec_bits": 128, "prune_floor_bits": 57, **method},
        "result": {key[0]: end, key[1]: [end, 0]},
    }


def _kernel_capped(path: Path) -> subprocess.CompletedProcess:
    """The kernel under a 2 GiB address-space cap and a 120 s timeout (the attack review's files
    ran it past 5-15 GB before the fix)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return kernel(path, timeout=120, preexec_fn=cap)


def test_a_top_point_far_in_the_tail_stays_small_in_the_kernel(split_cert: dict[str, Path], tmp_path: Path) -> None:
    """Attack review F1: P(L > top point) near e^-(10^9) (sigma = 10^4, top loss 10) was turned
    into an exact rational of ~10^9 bits; it is now rounded up to the composition's units."""
    body = json.loads(split_cert["cert"].read_text())["body"]
    lattice = {"remove": {"h": "0.0625", "offset": "0", "lo": -16, "hi": 160}}
    body["claim"] = _check(
        {"q": "0.01", "sigma": "10000", "direction": "remove"},
        "<=",
        "20",
        {"name": "pld-upper", "lattices": lattice},
        "20",
    )
    body["refutation"], body["refutation_missing_reason"] = None, "none"
    path = tmp_path / "far.json"
    path.write_text(json.dumps(finalize(body)))
    res = _kernel_capped(path)
    assert res.returncode == 0 and "every claim and refutation proved" in res.stdout, res.stdout + res.stderr


def test_losses_past_the_float_range_do_not_crash_the_kernel_steering(
    split_cert: dict[str, Path], tmp_path: Path
) -> None:
    """Attack review F3: the kernel's float steering took math.exp of losses above 709
    (OverflowError: "kernel error", exit 1, on a valid file); floats are now clamped there."""
    body = json.loads(split_cert["cert"].read_text())["body"]
    body["claim"] = _check(
        {"q": "0.5", "sigma": "0.12", "direction": "remove"},
        "<=",
        "100",
        {"name": "pld-upper", "lattices": {"remove": {"h": "0.0625", "offset": "0", "lo": -16, "hi": 3200}}},
        "100",
    )
    body["refutation"] = _check(
        {"q": "0.5", "sigma": "0.02", "direction": "remove"},
        ">",
        "100",
        {"name": "pld-lower", "lattices": {"remove": {"h": "0.0625", "offset": "0", "lo": 14400, "hi": 27200}}},
        "1000",
    )
    body["step"] = "0.1"
    path = tmp_path / "overflow.json"
    path.write_text(json.dumps(finalize(body)))
    res = _kernel_capped(path)
    assert res.returncode == 0 and "OverflowError" not in res.stdout + res.stderr, res.stdout + res.stderr
