"""Random-allocation (epsilon, delta) certificates: `certdp calibrate random-allocation --epsilon
--delta --out` writes a hockey-upper claim and a hockey-lower refutation that `certdp verify`
recomputes on the recorded grids (docs/certificates.md; docs/math.md §9.8).

Each tampered file is re-digested and re-signed with the test key, so that only the recomputation
can reject it; none may verify (exit 0).
"""

from __future__ import annotations

import copy
import json
import subprocess
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certdp.cert.crypto import load_private_key, load_public_key_b64
from certdp.cert.write import finalize
from certdp.cli import main
from certdp.notions.allocation_dp import allocation_eps_bounds

ROOT = Path(__file__).resolve().parent.parent
#: a small setting whose calibration takes seconds: M = 3 steps, E = 2 epochs, (1, 1e-3)
SMALL = ["--steps", "3", "--epochs", "2", "--epsilon", "1", "--delta", "1e-3", "--step", "0.001"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def keypair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    key = tmp_path_factory.mktemp("key") / "test.key"
    assert main(["keygen", "--out", str(key)]) == 0
    return key, Path(f"{key}.pub")


def calibrate(argv: list[str], out: Path, key: Path) -> dict:
    """The record of a calibration that writes (and signs) the certificate ``out``."""
    proc = subprocess.run(
        ["certdp", "calibrate", "random-allocation", *argv, "--out", str(out), "--sign", str(key), "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def small(keypair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("cert") / "ra_eps.json"
    return out, calibrate(SMALL, out, keypair[0])


def body_of(path: Path) -> dict:
    return json.loads(path.read_text())["body"]


def resign(body: dict, key: Path, out: Path) -> Path:
    out.write_text(json.dumps(finalize(body, load_private_key(key))))
    return out


def set_end(result: dict, end: str, value: str) -> None:
    """Record ``value`` (a dyadic decimal) as the result's end, exactly."""
    num, den = Decimal(value).as_integer_ratio()
    exp = den.bit_length() - 1
    assert den == 1 << exp
    result[end] = value
    result[f"{end}_dyadic"] = [str(num), -exp]


def test_the_certificate_verifies_on_its_recorded_grids(small, keypair, capsys) -> None:
    path, rec = small
    body = body_of(path)
    claim, ref = body["claim"], body["refutation"]
    assert rec["certificate"] == str(path) and rec["delta_lower_at_miss"] is not None
    assert claim["method"]["name"] == "hockey-upper" and ref["method"]["name"] == "hockey-lower"
    assert claim["mechanism"]["params"]["direction"] == "both" and claim["delta"] == "0.001"
    assert Fraction(claim["result"]["upper"]) <= 1 < Fraction(ref["result"]["lower"])
    code, out, err = run(["verify", str(path), "--pubkey", str(keypair[1]), "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "valid" and report["signer_trusted"] is True
    (c, r) = report["checks"]
    assert c["rechecked"] == ["result/upper", "result/upper_dyadic", "threshold"]
    assert "(remove)" in c["recomputed"] and "(add)" in c["recomputed"] and "is (epsilon, delta)-DP" in c["means"]
    assert "> delta" in r["recomputed"] and "NOT (epsilon, delta)-DP" in r["means"]
    assert Fraction(rec["sigma"]) - Fraction(rec["sigma_miss"]) == Fraction(1, 1000)


def test_the_recorded_ends_agree_with_allocation_eps_bounds(small) -> None:
    """The certified eps interval at sigma (its own grids, refined to 1e-3) must contain a point
    <= the claim's recorded upper, and the one at sigma - step a point >= the refutation's lower:
    both files hold bounds on the same true eps(delta)."""
    body = body_of(small[0])
    claim, ref = body["claim"], body["refutation"]
    sigma, miss = (Fraction(x["mechanism"]["params"]["sigma"]) for x in (claim, ref))
    at_sigma = allocation_eps_bounds(sigma, 3, 2, Fraction(1, 1000))
    at_miss = allocation_eps_bounds(miss, 3, 2, Fraction(1, 1000))
    upper, lower = Fraction(claim["result"]["upper"]), Fraction(ref["result"]["lower"])
    assert at_sigma.lower <= upper <= 1 < lower <= at_miss.upper
    assert at_miss.upper > 1  # sigma - step is not (1, 1e-3)-DP by either computation


def gaussian_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    """delta(eps) of one Gaussian of mean mu (M = 1: E epochs are one Gaussian of mu = sqrt(E)/sigma)."""
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def closed_form_check(path: Path, epochs: int, delta: str) -> None:
    """The recorded ends against the Gaussian closed form at 50 digits (docs/math.md §9.8, M = 1)."""
    body = body_of(path)
    claim, ref = body["claim"], body["refutation"]
    with mp.workdps(50):
        d = mp.mpf(delta)
        sigma = mp.mpf(Fraction(claim["mechanism"]["params"]["sigma"]).numerator) / mp.mpf(
            Fraction(claim["mechanism"]["params"]["sigma"]).denominator
        )
        up = Fraction(claim["result"]["upper_dyadic"][0]) * Fraction(2) ** claim["result"]["upper_dyadic"][1]
        assert gaussian_delta(mp.sqrt(epochs) / sigma, mp.mpf(up.numerator) / up.denominator) <= d
        if ref is None:
            return
        s_miss = Fraction(ref["mechanism"]["params"]["sigma"])
        lo = Fraction(ref["result"]["lower_dyadic"][0]) * Fraction(2) ** ref["result"]["lower_dyadic"][1]
        mu = mp.sqrt(epochs) * s_miss.denominator / mp.mpf(s_miss.numerator)
        assert gaussian_delta(mu, mp.mpf(lo.numerator) / lo.denominator) > d


def test_one_step_ends_against_the_gaussian_closed_form(keypair, tmp_path: Path) -> None:
    out = tmp_path / "m1.json"
    calibrate(["--steps", "1", "--epochs", "2", "--epsilon", "1", "--delta", "1e-3"], out, keypair[0])
    assert body_of(out)["refutation"] is not None
    closed_form_check(out, 2, "1e-3")


@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    epochs=st.integers(1, 4),
    eps=st.sampled_from(["0.5", "1", "1.5", "2"]),
    delta=st.sampled_from(["1e-2", "1e-3", "1e-5"]),
)
def test_one_step_ends_against_the_closed_form_drawn(
    keypair, tmp_path: Path, epochs: int, eps: str, delta: str
) -> None:
    out = tmp_path / f"m1_{epochs}_{eps}_{delta}.json"
    argv = ["--steps", "1", "--epochs", str(epochs), "--epsilon", eps, "--delta", delta, "--step", "0.001"]
    calibrate(argv, out, keypair[0])
    closed_form_check(out, epochs, delta)


def _both(body: dict, fn) -> None:
    fn(body["claim"])
    fn(body["refutation"])


def _sigma_down(body: dict) -> None:
    step = Fraction(body["step"])
    for part in ("claim", "refutation"):
        params = body[part]["mechanism"]["params"]
        params["sigma"] = str(Decimal(params["sigma"]) - Decimal(str(float(step))))


def _threshold_and_upper(body: dict) -> None:
    # the target lowered, and the claim's recorded end with it: the grid cannot prove it
    _both(body, lambda c: c.__setitem__("threshold", "0.96875"))
    set_end(body["claim"]["result"], "upper", "0.96875")


def _coarsen(body: dict) -> None:
    grid = body["claim"]["method"]["grid"]
    h, eta = Decimal(grid["h"]) * 64, Decimal(grid["eta"]) * 64
    grid["h"], grid["eta"] = str(h), str(min(eta, Decimal(1)))
    grid["cap"] = str((Decimal(grid["cap"]) / h).to_integral_value(rounding="ROUND_CEILING") * h)


def _drop_direction(body: dict) -> None:
    _both(body, lambda c: c["mechanism"]["params"].pop("direction"))


def _lower_beyond(body: dict) -> None:
    set_end(body["refutation"]["result"], "lower", "1.5")


def _lower_past_margin(body: dict) -> None:
    set_end(body["refutation"]["result"], "lower", "2.5")


def _tv_method(body: dict) -> None:
    body["claim"]["method"]["name"] = "lattice-upper"


def _refutation_other_direction(body: dict) -> None:
    body["refutation"]["mechanism"]["params"]["direction"] = "add"


@pytest.mark.parametrize(
    ("edit", "code", "message"),
    [
        (_sigma_down, 1, "is not proved by hockey-upper"),
        (lambda b: _both(b, lambda c: c.__setitem__("threshold", "0.99")), 1, "refuted"),
        (_threshold_and_upper, 1, "is not proved by hockey-upper"),
        (_coarsen, 1, "is not proved by hockey-upper"),
        (_drop_direction, 2, "names its direction"),
        (_lower_beyond, 1, "is not proved by hockey-lower"),
        (_lower_past_margin, 1, "beyond threshold + 1"),
        (_tv_method, 2, "cannot be proved by lattice-upper"),
        (_refutation_other_direction, 2, "must be the claim's mechanism"),
    ],
    ids=[
        "sigma-lowered",
        "epsilon-lowered",
        "epsilon-and-end-lowered",
        "grid-coarsened",
        "direction-dropped",
        "refutation-end-raised",
        "refutation-end-past-the-lattice",
        "tv-method",
        "refutation-direction-changed",
    ],
)
def test_tampered_certificates_never_verify(edit, code: int, message: str, small, keypair, tmp_path, capsys) -> None:
    body = copy.deepcopy(body_of(small[0]))
    edit(body)
    path = resign(body, keypair[0], tmp_path / "t.json")
    got, _, err = run(["verify", str(path), "--pubkey", str(keypair[1])], capsys)
    assert got == code and message in err, (got, err)
    assert len(err.strip().splitlines()) == 1


def _one_direction(body: dict, direction: str) -> None:
    _both(body, lambda c: c["mechanism"]["params"].__setitem__("direction", direction))


def test_a_claim_narrowed_to_remove_is_scoped_to_it(small, keypair, tmp_path, capsys) -> None:
    """Remove alone carries both checks here (the violation one step below is in the remove
    direction), but proves less: verify says for which neighbouring relation."""
    body = copy.deepcopy(body_of(small[0]))
    _one_direction(body, "remove")
    path = resign(body, keypair[0], tmp_path / "r.json")
    code, out, err = run(["verify", str(path), "--pubkey", str(keypair[1]), "--json"], capsys)
    assert code == 0, err
    claim = json.loads(out)["checks"][0]
    assert "for the remove direction only" in claim["means"] and "(add)" not in claim["recomputed"]


def test_a_refutation_narrowed_to_add_is_not_proved(small, keypair, tmp_path, capsys) -> None:
    """The add direction's delta_lower at the recorded lower is below delta: no violation there."""
    body = copy.deepcopy(body_of(small[0]))
    _one_direction(body, "add")
    path = resign(body, keypair[0], tmp_path / "a.json")
    code, _, err = run(["verify", str(path), "--pubkey", str(keypair[1])], capsys)
    assert code == 1 and "is not proved by hockey-lower" in err and "(add): none is > delta" in err, err


def test_a_grid_beyond_the_limits_is_refused_before_work(small, keypair, tmp_path, capsys) -> None:
    """The epoch power of a hockey check is kept up to the threshold + 1: eta = 2^-16 with the
    largest threshold (30) asks for a product past 2^21 coefficients (the grid alone is within
    the TV limits)."""
    body = copy.deepcopy(body_of(small[0]))
    _both(body, lambda c: c.__setitem__("threshold", "30"))
    body["claim"]["method"]["grid"]["eta"] = str(Decimal(2) ** -16)
    path = resign(body, keypair[0], tmp_path / "l.json")
    code, _, err = run(["verify", str(path), "--pubkey", str(keypair[1])], capsys)
    assert code == 2 and "exceeds the verifier limit" in err, err
    assert "body/claim/method/grid epoch-power product 2 (E (log(1/l_min)/eta + 2) + (eps + 1)/eta + 2)" in err


def test_the_threshold_is_bounded_by_the_lattice_range(small, keypair, tmp_path, capsys) -> None:
    body = copy.deepcopy(body_of(small[0]))
    _both(body, lambda c: c.__setitem__("threshold", "31"))
    path = resign(body, keypair[0], tmp_path / "e.json")
    code, _, err = run(["verify", str(path), "--pubkey", str(keypair[1])], capsys)
    assert code == 2 and "body/claim/threshold" in err, err


def test_the_recheck_kernel_reports_the_kind_as_not_rechecked(small, keypair) -> None:
    """The kernel checks the signature, then says it did not recheck the bounds (exit 2); ci.sh
    accepts exactly that text for random_allocation_*_eps* files and nothing else (expect.sh)."""
    proc = subprocess.run(
        ["python", str(ROOT / "recheck" / "recheck.py"), str(small[0]), "--pubkey", str(keypair[1])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    want = expect_for("random_allocation_M10_E10_eps1_delta1e-5.json")
    assert (proc.returncode, want[0]) == (2, 2)
    assert proc.stdout.splitlines()[0] == "trusted signer" and want[1] in proc.stderr, proc.stderr


def expect_for(name: str) -> tuple[int, str]:
    proc = subprocess.run(
        ["bash", "-c", f'. "{ROOT}/recheck/expect.sh" && expect_for "$1"', "_", name],
        capture_output=True,
        text=True,
        check=True,
    )
    code, text = proc.stdout.rstrip("\n").split("\t")
    return int(code), text


@pytest.mark.parametrize(
    "name",
    [
        "random_allocation_M100_E10_tv0.1.json",
        "dpsgd_pld_q0.01_n500_eps3.json",
        "dpsgd_q0.01_n500_eps3.json",
        "random_allocation_eps.json",
    ],
)
def test_ci_wants_every_other_file_proved(name: str) -> None:
    assert expect_for(name) == (0, "every claim and refutation proved")


def test_committed_eps_certificates_are_the_kind_ci_excuses() -> None:
    """Every committed random_allocation_*_eps* file holds hockey checks (the kind the kernel does
    not recheck), and no other committed file does: ci.sh excuses nothing else."""
    pub = load_public_key_b64(ROOT / "certificates" / "certdp-project.pub")
    files = sorted((ROOT / "certificates").glob("*.json"))
    eps_files = [f for f in files if expect_for(f.name)[0] == 2]
    assert eps_files, "a committed random-allocation (epsilon, delta) certificate"
    for f in files:
        doc = json.loads(f.read_text())
        hockey = doc["body"]["claim"]["method"]["name"].startswith("hockey-")
        assert hockey == (f in eps_files), f.name
        assert doc["signature"]["public_key"] == pub


def test_the_committed_ends_agree_with_allocation_eps_bounds() -> None:
    """The committed (1, 1e-5) file at M = 10, E = 10: the certified eps interval at sigma (own
    grids, 1e-3) reaches down to the claim's recorded upper, and the one at sigma - step up to the
    refutation's recorded lower."""
    body = body_of(ROOT / "certificates" / "random_allocation_M10_E10_eps1_delta1e-5.json")
    claim, ref = body["claim"], body["refutation"]
    sigma, miss = (Fraction(x["mechanism"]["params"]["sigma"]) for x in (claim, ref))
    delta = Fraction(claim["delta"])
    at_sigma = allocation_eps_bounds(sigma, 10, 10, delta)
    at_miss = allocation_eps_bounds(miss, 10, 10, delta)
    assert at_sigma.lower <= Fraction(claim["result"]["upper"]) <= 1 < Fraction(ref["result"]["lower"]) <= at_miss.upper
