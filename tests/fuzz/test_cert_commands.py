"""Issue 39, item 3: no tracebacks from sign, keygen, verify or sweep.

Runs the fuzz corpus's sign/keygen/verify/sweep cases, and every hostile certificate of
tests/hostile_certificates.py plus lone-surrogate files and arguments through all four commands
(verify FILE; sign FILE; sweep FILE as a spec; keygen over it), in forked children with the
fuzz harness's time and memory limits. No output may contain "Traceback", the exit code must be
a documented one (0, 1, 2, 3) and a failure must print exactly one line (a sweep that ran prints
its summary, and exits 1 when a cell failed).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fuzz.corpus import all_cases
from tests.fuzz.harness import Case, run_cases

COMMANDS = ("sign", "keygen", "verify", "sweep")


def _surrogate_files(tmp: Path) -> list[Path]:
    """Certificates and specs holding lone surrogates (escaped in the JSON/TOML text)."""
    from tests.hostile_certificates import finalize_unchecked, sg_body

    body = sg_body()
    out = []
    for name, where in (("notes", ("notes",)), ("threshold", ("claim", "threshold")), ("key", None)):
        b = json.loads(json.dumps(body))
        if where is None:
            b["\ud800"] = "x"
        elif len(where) == 1:
            b[where[0]] = "\ud800 \udfff"
        else:
            b[where[0]][where[1]] = "\udcff"
        path = tmp / f"surrogate_{name}.json"
        path.write_text(json.dumps(finalize_unchecked(b)))
        out.append(path)
    spec = tmp / "surrogate_spec.toml"
    spec.write_text('job = "verify"\nname = "\\ud800"\n[grid]\ncertificate = "x.json"\n')
    out.append(spec)
    deep = tmp / "deep_spec.toml"  # tomllib recursed without limit: a RecursionError traceback
    deep.write_text("job = " + "[" * 50_000 + "]" * 50_000 + "\n")
    out.append(deep)
    raw = tmp / "surrogate_raw.json"
    raw.write_bytes(b'{"format": "\xed\xa0\x80"}')  # a UTF-8-encoded surrogate: not valid UTF-8
    out.append(raw)
    return out


def _cases(tmp: Path) -> list[Case]:
    from tests.hostile_certificates import build

    cases = [c for c in all_cases() if c.argv and c.argv[0] in COMMANDS]
    assert {"sign", "keygen", "verify"} <= {c.argv[0] for c in cases if c.argv}
    files = [p for _, p, _, _ in build(tmp / "hostile")] + _surrogate_files(tmp)
    (tmp / "out").mkdir()
    for i, path in enumerate(files):
        copy = tmp / f"sign_{i}.json"
        shutil.copyfile(path, copy)
        cid = f"t39-{i}-{path.stem}"
        cases += [
            Case(f"{cid}-verify", ("verify", str(path), "--allow-untrusted"), expect="ok|invalid|usage|exhausted"),
            Case(f"{cid}-sign", ("sign", str(copy), "--key", "{tmp}/k.key"), expect="ok|invalid|usage"),
            Case(f"{cid}-sweep", ("sweep", str(path), "--out", f"{tmp}/out/{i}"), expect="usage"),
            Case(f"{cid}-keygen", ("keygen", "--out", str(path)), expect="usage"),
        ]
    # sweep cells that verify hostile files (serial: in this process, no Dask start-up)
    for i, path in enumerate(files[-6:]):
        spec = tmp / f"cell_spec_{i}.toml"
        spec.write_text(f'job = "verify"\nname = "c"\n[grid]\ncertificate = "{path}"\nallow_untrusted = true\n')
        argv = ("sweep", str(spec), "--out", f"{tmp}/out/cell{i}", "--scheduler", "serial")
        cases.append(Case(f"t39-cell{i}-sweep", argv, expect="ok|invalid|usage"))
    for i, name in enumerate(("\udcff", "\ud800", "a\udcffb.key", "nul\x00byte")):
        cases += [
            Case(f"t39-arg{i}-keygen", ("keygen", "--out", f"{{tmp}}/{name}"), expect="ok|usage"),
            Case(f"t39-arg{i}-verify", ("verify", name, "--allow-untrusted"), expect="usage"),
            Case(f"t39-arg{i}-sign", ("sign", name, "--key", "{tmp}/k.key"), expect="usage"),
            Case(f"t39-arg{i}-sweep", ("sweep", name, "--out", f"{{tmp}}/out/a{i}"), expect="usage"),
        ]
    return cases


def test_no_traceback_from_certificate_commands(tmp_path: Path) -> None:
    from tests.fuzz.conftest import make_files

    subs = make_files(tmp_path)
    cases = _cases(tmp_path)
    assert len(cases) > 200
    results = run_cases(cases, tmp_path, subs)
    bad = []
    for case in cases:
        out = results[case.id]
        text = out.stdout + out.stderr
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        if "Traceback" in text or out.killed or out.signal is not None:
            bad.append(f"{case.id}: {out.traceback_last_line() or out.kill_reason or out.signal}")
        elif out.exit not in (0, 1, 2, 3):
            bad.append(f"{case.id}: exit {out.exit}")
        elif case.id.startswith("t39-cell") and out.exit in (0, 1):
            # a sweep that ran: exit 1 when its cell failed, with the summary on stdout
            if "Traceback" in out.stdout or not out.stdout.strip() or lines:
                bad.append(f"{case.id}: exit {out.exit}, stdout {out.stdout[:200]!r}, stderr {out.stderr[:200]!r}")
        elif out.exit != 0 and (len(lines) != 1 or not lines[0].startswith("certdp: error: ")):
            bad.append(f"{case.id}: exit {out.exit} with {len(lines)} lines: {out.stderr[:200]!r}")
    assert not bad, "\n".join(bad)
