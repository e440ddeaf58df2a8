"""Issue 39, open finding: a certificate's informative fields (``*_unverified``, ``seconds``, the
metadata) can be false in a valid file, and verify's output must say so plainly: it listed them
as "not rechecked (informative)", which reads as if they were true information, and said nothing
of the metadata. Now each check says they may be false, and the report lists the metadata too."""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from certdp.cert.write import finalize
from certdp.cli import main

#: an RDP certificate: its recomputation takes a few seconds
CERT = Path(__file__).resolve().parents[1] / "certificates" / "dpsgd_q0.01_n500_eps3.json"


def _verify(path: Path, *flags: str) -> tuple[int, str, str]:
    out: list[str] = []
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["verify", str(path), "--allow-untrusted", *flags], out=out.append)
    return code, "".join(out), err.getvalue()


def test_false_informative_fields_verify_and_are_named_as_not_rechecked(tmp_path: Path) -> None:
    body = copy.deepcopy(json.loads(CERT.read_text())["body"])
    body["claim"]["result"]["lower_unverified"] = "0"  # false: the true eps at sigma is about 3
    body["claim"]["result"]["seconds"] = 123456789.0  # false: it took seconds
    body["refutation"]["result"]["upper_unverified"] = "0"  # false: below its own proved lower end
    body["created"] = "1970-01-01T00:00:00Z"
    path = tmp_path / "false_informative.json"
    path.write_text(json.dumps(finalize(body, Ed25519PrivateKey.generate())))
    code, out, err = _verify(path, "--json")
    assert code == 0, err  # valid: none of these is a claim
    rec = json.loads(out)
    claim, refutation = rec["checks"]
    assert claim["not_rechecked"] == ["result/lower_unverified", "result/seconds"]
    assert refutation["not_rechecked"] == ["result/upper_unverified"]
    assert "body/created" in rec["not_rechecked"] and "may hold false values" in rec["not_rechecked_note"]
    code, out, _ = _verify(path)
    assert code == 0
    assert out.count("NOT rechecked (informative only, may be false in a valid certificate): result/") == 2
    assert "note: the *_unverified and seconds fields" in out and "only the numbers under 'rechecked'" in out
