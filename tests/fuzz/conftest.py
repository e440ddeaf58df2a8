"""Run the selected fuzz cases once per session (forked children, two at a time)."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import time
from pathlib import Path

import pytest

from tests.fuzz.corpus import all_cases
from tests.fuzz.harness import Case, Outcome, run_cases
from tests.fuzz.report import render

REPO = Path(__file__).resolve().parents[2]
CERT = REPO / "certificates" / "dpsgd_q0.005_n500_eps3.json"
SELECTED = pytest.StashKey[set]()
CASES: list[Case] = all_cases()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which fuzz cases survived selection (-k, node ids): only those are run."""
    ids = set()
    for item in items:
        spec = getattr(item, "callspec", None)
        case = spec.params.get("fuzz_case") if spec is not None else None
        if isinstance(case, Case):
            ids.add(case.id)
    config.stash[SELECTED] = ids


def make_files(scratch: Path) -> dict[str, str]:
    """The files the keygen/sign/verify/--out cases point at ({tmp} in their argv)."""
    from certdp.cert.crypto import keygen
    from certdp.cert.limits import MAX_FILE_BYTES

    (scratch / "adir").mkdir()
    (scratch / "empty").write_bytes(b"")
    (scratch / "garbage.bin").write_bytes(random.Random(13).randbytes(4096))
    (scratch / "garbage.json").write_text('{"format": "certdp-certificate/1", "body": [1, 2,')
    (scratch / "big.json").write_bytes(b"{" + b" " * (MAX_FILE_BYTES + 16) + b"}")
    keygen(scratch / "k.key")
    (scratch / "haspub.pub").write_text((scratch / "k.key.pub").read_text())
    text = CERT.read_text()
    for name in ("ok", "ok2", "pub", "missing", "dir", "garbage", "empty", "text", "devnull"):
        shutil.copyfile(CERT, scratch / f"cert_sign_{name}.json")
    tampered = text.replace('"threshold": "3"', '"threshold": "4"', 1)
    assert tampered != text
    (scratch / "cert_tampered.json").write_text(tampered)
    (scratch / "cert_tampered_sign.json").write_text(tampered)
    return {"tmp": str(scratch), "repo": str(REPO)}


@pytest.fixture(scope="session")
def fuzz_outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    import certdp.cli
    import certdp.notions.expansion  # the CLI imports it lazily: once here, not once per case

    assert certdp.cli.main
    selected = request.config.stash.get(SELECTED, None)
    cases = [c for c in CASES if selected is None or c.id in selected]
    scratch = tmp_path_factory.mktemp("fuzz")
    subs = make_files(scratch)
    start = time.perf_counter()
    results = run_cases(cases, scratch, subs)
    seconds = time.perf_counter() - start
    report = os.environ.get("CERTDP_FUZZ_REPORT")
    if report:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        Path(report).write_text(render(cases, results, seconds, rss))
    dump = os.environ.get("CERTDP_FUZZ_DUMP")
    if dump:
        with open(dump, "w") as fh:
            for c in cases:
                o = results[c.id]
                row = {
                    "id": c.id,
                    "ok": o.ok,
                    "exit": o.exit,
                    "seconds": round(o.seconds, 3),
                    "cpu": round(o.cpu_seconds, 3),
                }
                row.update({"rss_mb": o.maxrss_kb // 1024, "stderr": o.first_err_line()[:300], "expect": c.expect})
                fh.write(json.dumps(row) + "\n")
    return results
