"""The independent recheck kernel recheck/recheck.py (issue 38).

Each tampered certificate is re-signed with a fresh test key (except the broken-signature case), so
that only the mathematics can reject it. The kernel runs as a subprocess, the way an auditor runs it.
"""

from __future__ import annotations

import ast
import base64
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from certdp.cert.crypto import digest_hex, sign_body

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "recheck" / "recheck.py"
CERTS = ROOT / "certificates"
PROJECT_PUB = CERTS / "certdp-project.pub"
RDP = CERTS / "dpsgd_q0.05_n500_eps3.json"
PLD = CERTS / "dpsgd_pld_q0.05_n500_eps3.json"
TV = CERTS / "random_allocation_M100_E10_tv0.1.json"

sys.path.insert(0, str(KERNEL.parent))
import recheck as kernel  # noqa: E402  (the kernel is one file, not a package)
from tests.cert_cli import kernel as run_kernel  # noqa: E402


def run(path: Path, pub: Path | None) -> subprocess.CompletedProcess:
    return run_kernel(path, pub)


@pytest.fixture(scope="module")
def test_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ed25519PrivateKey, Path]:
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    pub = tmp_path_factory.mktemp("key") / "test.pub"
    pub.write_text(base64.b64encode(raw).decode() + "\n")
    return key, pub


def resign(src: Path, edit, key: Ed25519PrivateKey, out: Path) -> Path:
    """Apply edit(body) to a committed certificate, recompute its digest and sign it with key."""
    cert = json.loads(src.read_text())
    body = copy.deepcopy(cert["body"])
    edit(body)
    cert["body"] = body
    cert["digest"] = {"alg": "sha256", "value": digest_hex(body)}
    cert["signature"] = sign_body(body, key)
    out.write_text(json.dumps(cert))
    return out


def shift(value: str, by: str) -> str:
    return str(Decimal(value) + Decimal(by))


def set_dyadic(result: dict, end: str, value: str) -> None:
    """Record `value` (a decimal) as the result's end, exactly (decimal and dyadic agree)."""
    num, den = Decimal(value).as_integer_ratio()
    exp = den.bit_length() - 1
    assert den == 1 << exp
    result[end] = value
    result[end + "_dyadic"] = [str(num), -exp]


# ------------------------------------------------------------------- independence


def test_kernel_imports_only_stdlib_flint_and_cryptography() -> None:
    """The kernel must not import certdp (or anything but the standard library, flint, cryptography)."""
    tree = ast.parse(KERNEL.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in the kernel"
            roots.add(node.module.split(".")[0])
    outside = roots - set(sys.stdlib_module_names) - {"flint", "cryptography"}
    assert roots >= {"flint", "cryptography", "json", "hashlib"}
    assert not outside, f"kernel imports {sorted(outside)}"
    text = KERNEL.read_text()
    assert "import certdp" not in text and "from certdp" not in text


def code_lines(text: str) -> int:
    """Lines of code: neither blank, nor a comment, nor part of the module docstring."""
    first = ast.parse(text).body[0]
    doc = range(0)
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        doc = range(first.lineno, first.end_lineno + 1)
    lines = enumerate(text.splitlines(), start=1)
    return sum(1 for i, ln in lines if i not in doc and ln.strip() and not ln.strip().startswith("#"))


def test_code_line_counter() -> None:
    sample = (
        '"""Doc,\n\nspanning lines."""\n\n# a comment\nimport os  # code\n\n\ndef f() -> None:\n    """Inner doc."""\n'
    )
    assert code_lines(sample) == 3  # the import, the def and the function's docstring
    assert code_lines('x = 1\n# a comment\n\ns = """a string,\nnot a docstring"""\n') == 3  # no module docstring


def test_kernel_is_short_and_every_function_says_what_it_proves() -> None:
    lines = KERNEL.read_text().splitlines()
    assert code_lines(KERNEL.read_text()) <= 800  # issue 38: reviewable in one sitting
    defs = [i for i, ln in enumerate(lines) if ln.lstrip().startswith("def ")]
    assert len(defs) > 30
    for i in defs:
        said = lines[i - 1].strip().startswith("# Proves") or "# Proves" in lines[i]
        assert said, f"line {i + 1}: {lines[i].strip()} does not say what it proves"


def test_canonical_bytes_agree_with_rfc8785() -> None:
    """The kernel's own JCS must give the bytes that certdp signs (floats, escapes, key order)."""
    values = [11.883, 0.1, 1e-7, 1e21, 1.5e300, 5e-324, 123456789.125, 1e20, 2.5e-6, -0.0, 7.0]
    body = {"seconds": values, "ü": 'a\u0007"\\\n\u2028é', "B": {"z": 1, "a": [True, None, False]}, "a": -(2**52)}
    assert kernel.jcs(body).encode() == rfc8785.dumps(body)


# ------------------------------------------------------------------- committed files


def test_committed_rdp_certificate_is_accepted() -> None:
    res = run(RDP, PROJECT_PUB)
    assert res.returncode == 0, res.stderr
    assert "trusted signer" in res.stdout and "every claim and refutation proved" in res.stdout


def test_committed_pld_certificate_is_accepted() -> None:
    res = run(PLD, PROJECT_PUB)
    assert res.returncode == 0, res.stderr
    assert "delta_lower(remove) > delta" in res.stdout


def test_committed_random_allocation_certificate_is_accepted() -> None:
    """Both sides of a TV calibration: lattice-upper (9.6) and lattice-lower (9.7)."""
    res = run(TV, PROJECT_PUB)
    assert res.returncode == 0, res.stderr
    assert "claim: tv <= 0.1 proved" in res.stdout and "refutation: tv > 0.1 proved" in res.stdout


def test_a_grid_beyond_the_tv_limit_is_refused_at_once(test_key, tmp_path: Path) -> None:
    """M = 250, E = 10 (the largest committed grid: 2.9M epoch-sum points) with the claim's h halved:
    5.7M points, above the kernel's 2^22, refused (exit 2) before any work."""
    key, pub = test_key
    src = CERTS / "random_allocation_M250_E10_tv0.1.json"
    grid = json.loads(src.read_text())["body"]["claim"]["method"]["grid"]
    assert Decimal(grid["l_max"]) * 250 / Decimal(grid["h"]) <= kernel.MAX_TV_CELLS  # the committed file fits

    def edit(body: dict) -> None:
        body["claim"]["method"]["grid"]["h"] = str(Decimal(grid["h"]) / 2)

    res = run(resign(src, edit, key, tmp_path / "c.json"), pub)
    assert res.returncode == 2 and "this kernel's TV limit" in res.stderr, res.stderr


# ------------------------------------------------------------------- tampering


def test_broken_signature_is_rejected(tmp_path: Path) -> None:
    cert = json.loads(RDP.read_text())
    sig = cert["signature"]["value"]
    cert["signature"]["value"] = ("A" if sig[0] != "A" else "B") + sig[1:]
    (tmp_path / "c.json").write_text(json.dumps(cert))
    res = run(tmp_path / "c.json", PROJECT_PUB)
    assert res.returncode == 1 and "signature" in res.stderr


def test_body_changed_without_digest_is_rejected(tmp_path: Path) -> None:
    cert = json.loads(RDP.read_text())
    cert["body"]["claim"]["threshold"] = "2"
    (tmp_path / "c.json").write_text(json.dumps(cert))
    res = run(tmp_path / "c.json", PROJECT_PUB)
    assert res.returncode == 1 and "digest" in res.stderr


def test_other_signer_is_rejected_under_the_project_key(test_key, tmp_path: Path) -> None:
    key, pub = test_key
    path = resign(RDP, lambda b: None, key, tmp_path / "c.json")
    assert run(path, pub).returncode == 0
    res = run(path, PROJECT_PUB)
    assert res.returncode == 1 and "public_key" in res.stderr


def lower_claimed_eps(body: dict) -> None:
    """The claimed epsilon lowered: threshold and recorded upper 2.9 (the true RDP eps is ~3)."""
    body["claim"]["threshold"] = body["refutation"]["threshold"] = "2.9"
    set_dyadic(body["claim"]["result"], "upper", "2.875")
    body["refutation"] = None
    body["refutation_missing_reason"] = "tampered"


def lower_recorded_upper_only(body: dict) -> None:
    """Only the recorded end lowered (still below the threshold): the number must be proved too."""
    set_dyadic(body["claim"]["result"], "upper", "2.9990234375")


def lower_sigma(body: dict) -> None:
    for part, by in (("claim", "-0.01"), ("refutation", "-0.01")):
        p = body[part]["mechanism"]["params"]
        p["sigma"] = shift(p["sigma"], by)


def raise_refutation_sigma(body: dict) -> None:
    """Both sigmas raised by 0.01 (the pairing still holds): the claim stays true, the refutation is false."""
    for part in ("claim", "refutation"):
        p = body[part]["mechanism"]["params"]
        p["sigma"] = shift(p["sigma"], "0.01")


def raise_steps(body: dict) -> None:
    for part in ("claim", "refutation"):
        body[part]["mechanism"]["steps"] = 600


def lower_delta(body: dict) -> None:
    for part in ("claim", "refutation"):
        body[part]["delta"] = "0.000001"


def bad_orders_hint(body: dict) -> None:
    """A hint changed so that the proof fails: only order 2 (valid, but far too weak)."""
    for part in ("claim", "refutation"):
        body[part]["method"]["orders"] = [2, 3]


@pytest.mark.parametrize(
    "edit",
    [
        lower_claimed_eps,
        lower_recorded_upper_only,
        lower_sigma,
        raise_refutation_sigma,
        raise_steps,
        lower_delta,
        bad_orders_hint,
    ],
)
def test_tampered_rdp_certificate_is_rejected(edit, test_key, tmp_path: Path) -> None:
    key, pub = test_key
    path = resign(RDP, edit, key, tmp_path / "c.json")
    res = run(path, pub)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert res.stderr.startswith("NOT PROVED") and len(res.stderr.strip().splitlines()) == 1


def pld_truncated_claim_lattice(body: dict) -> None:
    """pld-upper with a lattice that stops at loss 0.03: the mass above goes to +inf, delta_upper ~ 1."""
    lat = body["claim"]["method"]["lattices"]["remove"]
    lat["hi"] = lat["lo"] + 1000
    body["refutation"] = None
    body["refutation_missing_reason"] = "tampered"


def pld_truncated_refutation_lattice(body: dict) -> None:
    """pld-lower with a lattice that stops at loss 0.03: every loss above is lowered there, delta_lower ~ 0."""
    lat = body["refutation"]["method"]["lattices"]["remove"]
    lat["hi"] = lat["lo"] + 1000


def pld_lowered_upper(body: dict) -> None:
    """The claim's recorded upper lowered by about 2e-6: delta_upper there exceeds delta."""
    r = body["claim"]["result"]
    lowered = float(r["upper"]) - 2e-6
    digits = str(int(lowered * 2**30) * 5**30)  # m 2^-30 = m 5^30 10^-30, an exact decimal
    set_dyadic(r, "upper", digits[:-30] + "." + digits[-30:])
    body["refutation"] = None
    body["refutation_missing_reason"] = "tampered"


@pytest.mark.parametrize("edit", [pld_truncated_claim_lattice, pld_truncated_refutation_lattice, pld_lowered_upper])
def test_tampered_pld_certificate_is_rejected(edit, test_key, tmp_path: Path) -> None:
    key, pub = test_key
    path = resign(PLD, edit, key, tmp_path / "c.json")
    res = run(path, pub)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "delta" in res.stderr


@pytest.fixture(scope="module")
def small_pld(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh PLD certificate of a small setting (10 steps, sigma step 0.001: seconds to check)."""
    out = tmp_path_factory.mktemp("pld") / "small.json"
    args = ["calibrate", "subsampled-gaussian", "--q", "0.1", "--steps", "10", "--epsilon", "2", "--delta", "1e-5"]
    args += ["--step", "0.001", "--via", "pld", "--out", str(out)]
    res = subprocess.run([sys.executable, "-m", "certdp", *args], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return out


def test_small_pld_certificate_is_accepted(small_pld: Path, test_key, tmp_path: Path) -> None:
    """The control of the tampered small files below: untampered, re-signed, it is proved."""
    key, pub = test_key
    res = run(resign(small_pld, lambda b: None, key, tmp_path / "c.json"), pub)
    assert res.returncode == 0, res.stderr


def pld_lower_claimed_eps(body: dict) -> None:
    """The claimed epsilon lowered to 1.99 (threshold and recorded upper; the true eps is ~1.997)."""
    body["claim"]["threshold"] = body["refutation"]["threshold"] = "1.99"
    set_dyadic(body["claim"]["result"], "upper", "1.98974609375")  # 4075 / 2048
    body["refutation"] = None
    body["refutation_missing_reason"] = "tampered"


def pld_sigma_one_step(by: str) -> Callable[[dict], None]:
    """Both sigmas moved by one step (the pairing holds): down, the claim is the refuted sigma;
    up, the refutation is the claimed sigma."""

    def edit(body: dict) -> None:
        for part in ("claim", "refutation"):
            p = body[part]["mechanism"]["params"]
            p["sigma"] = shift(p["sigma"], by)

    edit.__name__ = f"pld_sigma_{by}"
    return edit


def pld_raise_steps(body: dict) -> None:
    for part in ("claim", "refutation"):
        body[part]["mechanism"]["steps"] = 11


def pld_lower_delta(body: dict) -> None:
    for part in ("claim", "refutation"):
        body[part]["delta"] = "0.000005"


@pytest.mark.parametrize(
    ("edit", "part"),
    [
        (pld_lower_claimed_eps, "claim"),
        (pld_sigma_one_step("-0.001"), "claim"),
        (pld_sigma_one_step("0.001"), "refutation"),
        (pld_raise_steps, "claim"),
        (pld_lower_delta, "claim"),
    ],
)
def test_tampered_small_pld_certificate_is_rejected(edit, part: str, small_pld: Path, test_key, tmp_path: Path) -> None:
    key, pub = test_key
    res = run(resign(small_pld, edit, key, tmp_path / "c.json"), pub)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert res.stderr.startswith(f"NOT PROVED: {part}") and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("h_bits", "code"), [(20, 1), (21, 2)])
def test_pld_spacing_limit_is_certdp_verifiers(
    h_bits: int, code: int, small_pld: Path, test_key, tmp_path: Path
) -> None:
    """h down to 2^-20, as certdp's verifier allows (the work is bounded by the 2^18 cells): a valid
    but narrow 2^-20 lattice passes the limits and fails the proof (exit 1); 2^-21 is refused (exit 2)."""
    key, pub = test_key

    def edit(body: dict) -> None:
        body["claim"]["method"]["lattices"]["remove"] = {
            "h": str(Decimal(1) / 2**h_bits),
            "offset": "0",
            "lo": 0,
            "hi": 1000,
        }

    res = run(resign(small_pld, edit, key, tmp_path / "c.json"), pub)
    assert res.returncode == code, (res.returncode, res.stderr)
    assert ("delta_upper(remove)" if code == 1 else "claim.method.lattices.remove.h") in res.stderr


def tv_lower_sigma(body: dict) -> None:
    """Random allocation with sigma lowered by 0.05 in the claim and the refutation: TV > 0.1 there."""
    for part in ("claim", "refutation"):
        p = body[part]["mechanism"]["params"]
        p["sigma"] = shift(p["sigma"], "-0.05")


def tv_coarse_grid(body: dict) -> None:
    """A valid but coarse grid hint (h = 2^-5, eta = 2^-9): the bound no longer reaches the recorded upper."""
    body["claim"]["method"]["grid"].update(h="0.03125", eta="0.001953125", cap="104.875")


def tv_coarse_refutation_grid(body: dict) -> None:
    """A valid but coarse lattice-lower grid (h = 2^-5, eta = 2^-9): the lower bound falls short."""
    body["refutation"]["method"]["grid"].update(h="0.03125", eta="0.001953125", cap="104.875")


@pytest.mark.parametrize("edit", [tv_lower_sigma, tv_coarse_grid, tv_coarse_refutation_grid])
def test_tampered_tv_claim_is_rejected(edit, test_key, tmp_path: Path) -> None:
    key, pub = test_key
    res = run(resign(TV, edit, key, tmp_path / "c.json"), pub)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "recomputed upper" in res.stderr or "recomputed lower" in res.stderr


# ------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ('{"format": "certdp-certificate/2", "format": "x"}', "duplicate"),
        ('{"format": NaN}', "non-finite"),
        ("[1, 2", "JSON"),
        ('{"format": "certdp-certificate/1", "body": {}}', "certdp-certificate/2"),
    ],
)
def test_malformed_input_exits_2(text: str, word: str, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(text)
    res = run(tmp_path / "c.json", None)
    assert res.returncode == 2 and word in res.stderr and "Traceback" not in res.stderr


def test_device_and_directory_are_refused(tmp_path: Path) -> None:
    for path in (Path("/dev/zero"), tmp_path):
        res = run(path, None)
        assert res.returncode == 2 and "regular file" in res.stderr


def test_lattice_hint_outside_the_limits_exits_2(test_key, tmp_path: Path) -> None:
    key, pub = test_key

    def edit(body: dict) -> None:
        body["claim"]["method"]["lattices"]["remove"]["h"] = "0.1"

    res = run(resign(PLD, edit, key, tmp_path / "c.json"), pub)
    assert res.returncode == 2 and "claim.method.lattices.remove.h" in res.stderr
