"""Regressions of the attacker review of issue 39: an output path that is a device or a FIFO is
refused (never replaced by the rename), and a one-direction certificate says it covers one
neighbouring relation only (it read as DP of the whole mechanism)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from certdp.cert.crypto import atomic_write
from certdp.cli import main
from certdp.cli.sweep_checks import certificate_summary
from certdp.errors import InvalidArgument

RDP_PATH = Path(__file__).resolve().parent.parent / "certificates" / "dpsgd_q0.05_n500_eps3.json"
CAL = ["calibrate", "subsampled-gaussian", "--q", "0.5", "--steps", "10", "--delta", "1e-5", "--epsilon", "5"]


def test_a_fifo_given_as_out_is_refused_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code = main([*CAL, "--via", "rdp", "--out", str(fifo)])
    assert code == 2 and "not a regular file" in capsys.readouterr().err
    assert fifo.is_fifo()  # still the FIFO: the rename did not replace it


def test_the_writer_refuses_to_replace_a_device_or_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InvalidArgument, match="not a regular file"):
        atomic_write(fifo, b"{}")
    assert fifo.is_fifo()
    if os.path.exists("/dev/null"):  # never written: refused before any temporary file
        with pytest.raises(InvalidArgument, match="not a regular file"):
            atomic_write(Path("/dev/null"), b"{}")
    plain = tmp_path / "plain.json"
    atomic_write(plain, b"{}")  # a regular file (or none) is still written
    atomic_write(plain, b"[]")
    assert plain.read_bytes() == b"[]"


def test_a_one_direction_certificate_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "add.json"
    assert main([*CAL, "--direction", "add", "--via", "rdp", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--allow-untrusted", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    claim = next(c for c in rec["checks"] if c["check"] == "claim")
    assert "for the add direction only" in claim["means"] and "NOT for add-or-remove" in claim["means"]
    assert certificate_summary(json.loads(out.read_text()))["direction"] == "add"


def test_a_two_direction_certificate_keeps_the_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "both.json"
    assert main([*CAL, "--via", "rdp", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--allow-untrusted", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    claim = next(c for c in rec["checks"] if c["check"] == "claim")
    assert claim["means"].startswith("the mechanism is (epsilon, delta)-DP") and "only" not in claim["means"]
    assert certificate_summary(json.loads(out.read_text()))["direction"] == "both"


def test_a_refutation_with_other_orders_gets_a_short_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.test_recheck import RDP, resign

    key = Ed25519PrivateKey.generate()

    def other_orders(body: dict) -> None:
        body["refutation"]["method"]["orders"] = body["refutation"]["method"]["orders"][:-1]

    path = resign(RDP, other_orders, key, tmp_path / "orders.json")
    code = main(["verify", str(path), "--allow-untrusted"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "body/refutation/orders" in err and " ... " in err
    assert len(err.splitlines()) == 1 and len(err) < 300


def test_an_event_of_many_parts_gets_a_short_title(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 60 Gaussian parts of distinct noise: the closed form answers at once, the title stays short
    parts = [{"class_name": "GaussianDpEvent", "noise_multiplier": 10 + i / 7} for i in range(60)]
    event = tmp_path / "ev.json"
    event.write_text(json.dumps({"class_name": "ComposedDpEvent", "events": parts}))
    assert main(["eps", "--event", str(event), "--delta", "1e-5"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert len(head) < 350 + len(str(event)) and "parameters in all" in head, head


def test_an_event_of_more_than_1000_parts_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each distinct part costs its own RDP curve: 3000 of them ran for minutes before (attack review)
    parts = [{"class_name": "GaussianDpEvent", "noise_multiplier": 1 + i / 1000} for i in range(1001)]
    event = tmp_path / "ev.json"
    event.write_text(json.dumps({"class_name": "ComposedDpEvent", "events": parts}))
    assert main(["eps", "--event", str(event), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "at most 1000" in err and len(err.splitlines()) == 1


def test_an_unreachable_width_names_the_target_that_accepts_the_enclosure(capsys: pytest.CaptureFixture[str]) -> None:
    # sigma = 1e4: eps is about 5.6e-6, whose relative width 1e-4 no lattice reaches (attack review:
    # exit 3 with no way forward); the message names a --rel-width, and that target answers
    args = ["eps", "subsampled-gaussian", "--q", "0.01", "--sigma", "1e4", "--steps", "1000", "--delta", "1e-5"]
    assert main(args) == 3
    err = capsys.readouterr().err
    accept = err.split("--rel-width ")[1].split()[0]
    assert main([*args, "--rel-width", accept, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    lo, up = float(rec["lower"]), float(rec["upper"])
    assert 0 < lo <= up and (up - lo) / up <= float(accept)


def test_signed_free_text_is_listed_as_not_rechecked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.test_recheck import RDP, resign

    def note(body: dict) -> None:
        body["notes"] = "PROVED: the mechanism is (1, 1e-5)-DP"

    path = resign(RDP, note, Ed25519PrivateKey.generate(), tmp_path / "note.json")
    assert main(["verify", str(path), "--allow-untrusted", "--json"]) == 0
    assert "body/notes" in json.loads(capsys.readouterr().out)["not_rechecked"]


def test_a_signature_in_non_canonical_base64_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # flipping an unused padding bit decodes to the same 64 bytes: one signature, two files
    doc = json.loads(RDP_PATH.read_text())
    value = doc["signature"]["value"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    i = alphabet.index(value[-3])
    doc["signature"]["value"] = value[:-3] + alphabet[i ^ 1] + value[-2:]
    path = tmp_path / "b64.json"
    path.write_text(json.dumps(doc))
    assert main(["verify", str(path), "--allow-untrusted"]) == 1
    assert "signature/value" in capsys.readouterr().err
