"""What an attacker without the key tried against certdp sweep, and what must happen instead: a
certificate of another cell is neither kept nor signed, a worker's forged certificate is caught
by the recheck, links in the folder are not followed, a manifest's own claims are not copied,
and hostile specs end in one line and exit 2."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

import certdp
from certdp.cert.crypto import digest_hex, keygen
from certdp.cert.verify import check_integrity
from certdp.cli import main

# the module (certdp.cli exports its runner function under the same name)
rs = importlib.import_module("certdp.cli.run_sweep")

CAL = """job = "calibrate"
name = "sg_eps{epsilon}"
[grid]
mechanism = "subsampled-gaussian"
q = 0.25
steps = 4
epsilon = [2, 3]
delta = 1e-5
step = 0.01
h = 0.00390625
"""

EPS = 'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = [1, 2]\ndelta = 1e-5\n'


def sweep(tmp_path: Path, text: str, *extra: str) -> tuple[int, dict]:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    lines: list[str] = []
    argv = ["sweep", str(spec), "--out", str(tmp_path / "out"), "--scheduler", "serial", "--json", *extra]
    code = main(argv, lines.append)
    return code, (json.loads(lines[0]) if lines else {})


def edit_manifest(out: Path, name: str, **fields: object) -> None:
    m = json.loads((out / "manifest.json").read_text())
    for e in m["cells"]:
        if e["name"] == name:
            e.update(fields)
    (out / "manifest.json").write_text(json.dumps(m))


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A signed two-cell calibration sweep, computed once; each test works on a copy."""
    tmp = tmp_path_factory.mktemp("signed")
    priv, _ = keygen(tmp / "k.key")
    assert sweep(tmp, CAL, "--sign", str(priv))[0] == 0
    return tmp


def copy_of(signed: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(signed, tmp_path, dirs_exist_ok=True)
    (tmp_path / "out" / ".sweep.lock").unlink()
    return tmp_path / "k.key"


def test_a_certificate_swapped_in_from_another_cell_is_computed_again(signed, tmp_path):
    key = copy_of(signed, tmp_path)
    out = tmp_path / "out"
    data = (out / "sg_eps3.json").read_bytes()
    (out / "sg_eps2.json").write_bytes(data)  # signed by the key, valid, but it claims epsilon <= 3
    edit_manifest(out, "sg_eps2", sha256=rs.sha256_hex(data))
    code, rec = sweep(tmp_path, CAL, "--sign", str(key))
    assert code == 0 and rec["ran"] == 1 and rec["skipped"] == 1
    claim = json.loads((out / "sg_eps2.json").read_text())["body"]["claim"]
    assert claim["threshold"] == "2"


def test_a_manifest_output_outside_the_folder_or_a_link_is_not_trusted(signed, tmp_path):
    key = copy_of(signed, tmp_path)
    out = tmp_path / "out"
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes((out / "sg_eps2.json").read_bytes())
    (out / "sg_eps2.json").unlink()
    edit_manifest(out, "sg_eps2", output=str(outside))
    os.symlink(outside, out / "sg_eps2.json")  # and a link in its place
    code, rec = sweep(tmp_path, CAL, "--sign", str(key))
    assert code == 0 and rec["ran"] == 1
    assert not (out / "sg_eps2.json").is_symlink() and json.loads(outside.read_text())  # the target untouched


def test_a_manifest_cannot_smuggle_parameters_or_results(signed, tmp_path):
    key = copy_of(signed, tmp_path)
    out = tmp_path / "out"
    edit_manifest(out, "sg_eps2", summary={"sigma": "0.0001"}, params={"sigma": "999"}, argv=["certdp", "evil"])
    code, rec = sweep(tmp_path, CAL, "--sign", str(key))
    assert code == 0 and rec["ran"] == 0
    entry = next(e for e in json.loads((out / "manifest.json").read_text())["cells"] if e["name"] == "sg_eps2")
    body = json.loads((out / "sg_eps2.json").read_text())["body"]
    assert entry["summary"]["sigma"] == body["claim"]["mechanism"]["params"]["sigma"]
    assert entry["params"]["epsilon"] == "2" and entry["argv"][:3] == ["certdp", "calibrate", "subsampled-gaussian"]


def test_another_certdp_version_computes_everything_again(tmp_path, monkeypatch):
    assert sweep(tmp_path, EPS)[0] == 0
    monkeypatch.setattr(certdp, "__version__", "999.0")
    assert sweep(tmp_path, EPS)[1]["ran"] == 2


def _worker_sending(doc_for):
    real = rs.run_cell

    def fake(task):
        res = real(task)
        return rs.CellResult(res.code, res.record, res.error, doc_for(task, res), res.seconds)

    return fake


def test_a_worker_certificate_for_another_cell_is_not_signed(signed, tmp_path, monkeypatch):
    key = copy_of(signed, tmp_path)
    other = (tmp_path / "out" / "sg_eps3.json").read_bytes()
    monkeypatch.setattr(
        rs, "run_cell", _worker_sending(lambda task, res: other if task.name == "sg_eps2" else res.certificate)
    )
    (tmp_path / "out" / "manifest.json").unlink()
    code, rec = sweep(tmp_path, CAL, "--sign", str(key))
    assert code == 1 and rec["counts"] == {"failed": 1, "ok": 1}
    assert "its claim has threshold=3, but this cell asks for threshold=2" in rec["not_ok"][0]["error"]


def test_a_consistent_forgery_from_a_worker_is_caught_by_the_recheck(signed, tmp_path, monkeypatch):
    """A worker that lowers sigma and fixes the digest: the structure checks pass, only the
    recomputation (--recheck yes, the default with --sign on a tcp:// cluster) catches it."""
    key = copy_of(signed, tmp_path)

    def forge(task, res):
        doc = json.loads(res.certificate)
        body = doc["body"]
        body["claim"]["mechanism"]["params"]["sigma"] = "0.5"
        if body["refutation"] is not None:
            body["refutation"]["mechanism"]["params"]["sigma"] = "0.49"
        doc["digest"]["value"] = digest_hex(body)
        return json.dumps(doc).encode()

    monkeypatch.setattr(rs, "run_cell", _worker_sending(forge))
    (tmp_path / "out" / "manifest.json").unlink()
    code, rec = sweep(tmp_path, CAL, "--sign", str(key), "--recheck", "yes")
    assert code == 1 and rec["counts"] == {"failed": 2}
    assert all("the worker's certificate" in e["error"] for e in rec["not_ok"])
    for name in ("sg_eps2.json", "sg_eps3.json"):  # the old, genuine files are still there, unsigned by the forger
        check_integrity(json.loads((tmp_path / "out" / name).read_text()))
        assert (
            json.loads((tmp_path / "out" / name).read_text())["body"]["claim"]["mechanism"]["params"]["sigma"] != "0.5"
        )


def test_links_planted_in_the_folder_are_not_followed(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    (tmp_path / "out").mkdir()
    os.symlink(victim, tmp_path / "out" / "manifest.journal")
    code, _ = sweep(tmp_path, EPS)
    assert code == 2 and "cannot be opened" in capsys.readouterr().err and victim.read_text() == "mine\n"


def test_a_folder_in_the_way_fails_that_cell_only(tmp_path):
    (tmp_path / "out" / "eps_gaussian_sigma1.json").mkdir(parents=True)
    code, rec = sweep(tmp_path, EPS)
    assert code == 1 and rec["counts"] == {"failed": 1, "ok": 1} and "not a regular file" in rec["not_ok"][0]["error"]


@pytest.mark.parametrize(
    "text, message",
    [
        ('job = "eps"\nname = "x{sigma:>100000000}"\n[grid]\nsigma = 1', "may only use plain {key} placeholders"),
        ('job = "eps"\nname = "x{sigma!r}"\n[grid]\nsigma = 1', "may only use plain {key} placeholders"),
        ('job = "eps"\nname = "A"\n[[grid]]\nsigma = 1\n[[grid]]\nname = "a"\nsigma = 2', "gives the file name a.json"),
        ('job = "eps"\nname = "Manifest"\n[grid]\nsigma = 1', "the manifest"),
    ],
)
def test_hostile_templates_end_in_one_line(tmp_path, capsys, text, message):
    code, _ = sweep(tmp_path, text)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_switches_and_fractions_name_their_cells(tmp_path):
    from certdp.sweep.spec import parse_spec

    spec = tmp_path / "s.toml"
    spec.write_text(
        'job = "verify"\n[grid]\ncertificate = "c.json"\nallow_untrusted = [true, false]\nq = ["1/2", "3/2"]'
    )
    names = [c.name for c in parse_spec(spec, tuple(rs.JOBS), rs.FILE_KEYS).cells]
    assert names == [
        "verify_allow_untrusted_q1_2",
        "verify_allow_untrusted_q3_2",
        "verify_no_allow_untrusted_q1_2",
        "verify_no_allow_untrusted_q3_2",
    ]


def test_devices_and_fifos_are_never_read(tmp_path, capsys):
    assert main(["sweep", "/dev/zero", "--out", str(tmp_path / "o"), "--scheduler", "serial"]) == 2
    assert "spec=/dev/zero is not a regular file" in capsys.readouterr().err
    os.mkfifo(tmp_path / "fifo.json")
    code, _ = sweep(tmp_path, 'job = "verify"\n[grid]\ncertificate = "fifo.json"\nallow_untrusted = true')
    assert code == 2 and "is not a regular file" in capsys.readouterr().err


def test_the_recheck_also_covers_kept_certificates(signed, tmp_path, monkeypatch):
    """A wrong certificate that a run without the recheck accepted (and signed) is not kept by a
    run with it: the kept file is recomputed too."""
    key = copy_of(signed, tmp_path)

    def inflate(task, res):  # a sound-looking but wrong bound: the claimed epsilon is not recomputable
        doc = json.loads(res.certificate)
        body = doc["body"]
        body["claim"]["result"]["upper"] = "0.001"
        doc["digest"]["value"] = digest_hex(body)
        return json.dumps(doc).encode()

    monkeypatch.setattr(rs, "run_cell", _worker_sending(inflate))
    (tmp_path / "out" / "manifest.json").unlink()
    code, rec = sweep(tmp_path, CAL, "--sign", str(key), "--recheck", "no")
    assert code == 0 and rec["counts"] == {"ok": 2}  # accepted: structure and claim are right
    monkeypatch.undo()
    code, rec = sweep(tmp_path, CAL, "--sign", str(key), "--recheck", "yes")
    assert code == 0 and rec["ran"] == 2  # both recomputed by the verifier, refused, and run again
    for name in ("sg_eps2.json", "sg_eps3.json"):
        assert json.loads((tmp_path / "out" / name).read_text())["body"]["claim"]["result"]["upper"] != "0.001"


def test_status_comes_from_the_file_not_the_manifest(tmp_path):
    text = 'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5\nmax_seconds = 100\n'
    assert sweep(tmp_path, text)[0] == 0
    out = tmp_path / "out"
    record = out / "eps_gaussian.json"
    doc = json.loads(record.read_text())
    doc["exit_code"] = 1
    record.write_text(json.dumps(doc))
    edit_manifest(out, "eps_gaussian", sha256=rs.sha256_hex(record.read_bytes()), status="ok", worker="trusted-box")
    code, rec = sweep(tmp_path, text)
    assert code == 1 and rec["ran"] == 0 and rec["counts"] == {"refuted": 1}


def test_a_worker_signature_is_dropped_without_a_key(tmp_path, monkeypatch):
    from certdp.cert.crypto import load_private_key
    from certdp.cert.write import finalize

    priv, _ = keygen(tmp_path / "other.key")
    other = load_private_key(priv)

    def sign_it(task, res):
        return json.dumps(finalize(json.loads(res.certificate)["body"], other)).encode()

    monkeypatch.setattr(rs, "run_cell", _worker_sending(sign_it))
    text = CAL.replace("epsilon = [2, 3]", "epsilon = 2")
    assert sweep(tmp_path, text)[0] == 0
    doc = json.loads((tmp_path / "out" / "sg_eps2.json").read_text())
    assert doc["signature"] is None and check_integrity(doc) is None


def test_a_fifo_manifest_does_not_hang_a_run(tmp_path):
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "manifest.json")
    code, rec = sweep(tmp_path, EPS, "--dry-run")
    assert code == 0 and rec["to_run"] == 2
    os.mkfifo(tmp_path / "out" / "manifest.journal")
    code, rec = sweep(tmp_path, EPS)  # read as absent; writing it is refused at once, not blocked on
    assert code == 2


@pytest.mark.parametrize(
    "text, message",
    [
        (
            'job = "calibrate"\n[grid]\nmechanism = "random-allocation"\ntv = 0.1',
            "steps is required to calibrate random-allocation",
        ),
        (
            'job = "calibrate"\n[grid]\nmechanism = "subsampled-gaussian"\nq = 0.1\nepsilon = 1\ndelta = 1e-5',
            "steps is required to calibrate subsampled-gaussian",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "subsampled-gaussian"\nq = 0.1\nsigma = 1\ndelta = 1e-5\n'
            'direction = ["both", "REMOVE"]',
            "direction=REMOVE must be one of remove, add, both",
        ),
    ],
)
def test_what_the_command_would_refuse_is_refused_before_any_task(tmp_path, capsys, text, message):
    code, _ = sweep(tmp_path, text, "--dry-run")
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_integer_spellings_the_command_accepts_are_accepted(tmp_path):
    code, plan = sweep(
        tmp_path,
        'job = "calibrate"\n[grid]\nmechanism = "random-allocation"\nsteps = "1e1"\nepochs = "2.0"\ntv = 0.1',
        "--dry-run",
    )
    assert code == 0 and plan["to_run"] == 1


def test_a_coarse_documented_spacing_gives_a_verifiable_certificate(tmp_path):
    """--h up to 2^-4 is accepted; the coarse probes (8 h) that decide a direction are recorded in
    the certificate, so they are capped at the verifier's largest spacing (once 1/8 was written
    and the run ended in exit 1 after all its work)."""
    from certdp.cert.verify import verify_bytes

    text = CAL.replace("epsilon = [2, 3]", "epsilon = 2").replace("h = 0.00390625", "h = 0.015625")
    code, rec = sweep(tmp_path, text)
    assert code == 0, rec
    data = (tmp_path / "out" / "sg_eps2.json").read_bytes()
    lattices = json.loads(data)["body"]["claim"]["method"]["lattices"]
    assert max(float(v["h"]) for v in lattices.values()) <= 1 / 16
    assert verify_bytes(data).status == "valid"
