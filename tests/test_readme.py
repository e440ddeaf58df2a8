"""README.md runs as shown: every command in it is run, and the numbers it shows are the real ones.

- The first ```bash block is the install line (its certdp part: keygen, calibrate, verify) and the
  test command that .ci/run extracts; the certdp part must be exactly the commands of the first
  ```console example, which is run below.
- Each ```console block is run in a fresh temporary folder, one `$ ` command after another, as a
  shell would. A command must exit 0 unless the next command is `echo $?`, whose shown output is the
  expected exit code. The numbers of the shown output (all of them, in order) must appear in the
  real output, except durations ("5.08 s") and the worker count; "..." marks text left out (a key,
  a long note).
- The ```python example is run and its enclosure compared with the command line's JSON for the
  same run (the ```text block after it shows that answer).

No other ```bash or ```python block may appear: whatever the README shows, this file runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TIMEOUT = 300

#: the command whose answer the Python example prints (the same run on the command line)
CLI_EPS = "certdp eps subsampled-gaussian --q 0.01 --sigma 1.0 --steps 500 --delta 1e-5 --json"


def blocks(text: str | None = None) -> list[tuple[str, str]]:
    """The fenced code blocks of the README as (language, body)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def console_sessions(text: str | None = None) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block as a list of (command, shown output lines)."""
    sessions = []
    for lang, body in blocks(text):
        if lang != "console":
            continue
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                assert steps, f"console block starts with output, not a command: {line!r}"
                steps[-1][1].append(line)
        sessions.append(steps)
    return sessions


_DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")
_WORKERS = re.compile(r"\(\d+ workers?\)")
# a number not glued to a word, a path or base64 text (so "demo.key" or a key "Q72d/S+9" give none)
_NUMBER = re.compile(r"(?<![A-Za-z0-9_./+])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers(text: str) -> list[str]:
    """The numbers of an output, as written, leaving out durations and worker counts."""
    text = _WORKERS.sub("", _DURATION.sub("", text))
    return _NUMBER.findall(text)


def missing_numbers(shown: list[str], real: str) -> list[str]:
    """The shown numbers that do not appear, in this order, in the real output (empty when all do)."""
    have = numbers(real)
    pos, missing = 0, []
    for n in numbers("\n".join(shown)):
        try:
            pos = have.index(n, pos) + 1
        except ValueError:
            missing.append(n)
    return missing


def shell(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run one README command as shown, with this interpreter's certdp first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("COLUMNS", None)
    return subprocess.run(
        ["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def test_the_first_bash_block_is_the_install_line_and_the_ci_test_command() -> None:
    first = blocks()[0]
    assert first[0] == "bash"
    assert README.read_text(encoding="utf-8").split("\n", 2)[2].startswith("```bash\n")  # first after the title
    lines = first[1].splitlines()
    assert len(lines) == 2
    parts = lines[0].split(" && ")
    assert parts[0] == "pip install ."
    assert [p for p in parts[1:] if not p.startswith("certdp ")] == []
    assert parts[1:] == [cmd for cmd, _ in console_sessions()[0]], "example 1 must show the first command"
    assert lines[1].startswith("pip install ") and lines[1].endswith('python -m pytest -m "not slow"')


def test_every_other_code_block_is_run_by_this_file() -> None:
    langs = [lang for lang, _ in blocks()]
    assert langs.count("bash") == 1
    assert langs.count("python") == 1
    assert set(langs) <= {"bash", "console", "python", "text"}


def test_the_number_comparison_can_fail() -> None:
    assert missing_numbers(["sigma = 0.74275: ok", "  5.08 s"], "sigma = 0.74275: ok\n 9 s") == []
    assert missing_numbers(["sigma = 0.74275"], "sigma = 0.74274") == ["0.74275"]
    assert missing_numbers(["a 1.5 b 2.5"], "b 2.5 a 1.5") == ["2.5"]  # order matters
    assert missing_numbers(["public_key: ..."], "public_key: Q72d/S+9A=") == []
    assert numbers("signed by Q72dwo3qe/SRAhvSXhD2d8d9KYRO+/JkasA=") == []


@pytest.mark.parametrize("index", range(len(console_sessions())), ids=lambda i: f"console{i + 1}")
def test_a_console_example_runs_as_shown(index: int, tmp_path: Path) -> None:
    steps = console_sessions()[index]
    last: subprocess.CompletedProcess[str] | None = None
    for n, (cmd, shown) in enumerate(steps):
        if cmd == "echo $?":
            assert last is not None, "echo $? needs a command before it"
            assert [str(last.returncode)] == shown, f"exit code of the command before echo $? (step {n})"
            continue
        assert cmd.startswith("certdp "), f"a README command that is not certdp: {cmd}"
        last = shell(cmd, tmp_path)
        expects_code = n + 1 < len(steps) and steps[n + 1][0] == "echo $?"
        if not expects_code:
            assert last.returncode == 0, f"{cmd}\n{last.stdout}\n{last.stderr}"
        real = last.stdout + last.stderr
        assert missing_numbers(shown, real) == [], f"{cmd}: shown numbers not in the real output:\n{real}"


def _cli_eps(tmp_path: Path) -> tuple[Fraction, Fraction]:
    res = shell(CLI_EPS, tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    return Fraction(out["lower"]), Fraction(out["upper"])


def _python_example() -> tuple[str, str]:
    """The ```python block and the ```text block that follows it (its shown output)."""
    bs = blocks()
    i = next(k for k, (lang, _) in enumerate(bs) if lang == "python")
    assert bs[i + 1][0] == "text", "the Python example is followed by its output"
    return bs[i][1], bs[i + 1][1]


def _near(x: Fraction, value: Fraction) -> bool:
    return abs(x - value) <= value / 10**5  # 1e-5 relative: far below the gap between the two ends


def enclosure_problem(text: str, lo: Fraction, up: Fraction) -> str | None:
    """Why the numbers of text do not show the enclosure [lo, up] (None when they do): one number
    within 1e-5 relative of each end, outside or on the ends (printed rounded outward)."""
    printed = [Fraction(n) for n in numbers(text)]
    lows = [x for x in printed if _near(x, lo)]
    ups = [x for x in printed if _near(x, up)]
    if not lows or not ups:
        return f"{text!r} does not show the ends of [{float(lo)}, {float(up)}]"
    if min(lows) > lo or max(ups) < up:
        return f"{text!r} shows an enclosure narrower than [{lo}, {up}]"
    return None


def test_the_number_check_of_the_python_example_can_fail() -> None:
    lo, up = Fraction("1.3258482558794639"), Fraction("1.3261472307676741")
    assert enclosure_problem("epsilon in [1.3258482558794639, 1.3261472307676741]", lo, up) is None
    assert enclosure_problem("EpsDeltaResult(epsilon in [1.3258482, 1.3261473], via=pld)", lo, up) is None
    assert enclosure_problem("ConversionResult(epsilon <= 1.6609311216485494, order=8)", lo, up) is not None
    assert enclosure_problem("[1.3258483, 1.3261473]", lo, up) is not None  # lower end rounded inward


def test_the_python_example_shows_the_command_lines_enclosure(tmp_path: Path) -> None:
    code, shown = _python_example()
    assert '"0.01", "1.0"), 500)' in code and '"1e-5"' in code, "the example is the run of CLI_EPS"
    lo, up = _cli_eps(tmp_path)
    assert enclosure_problem(shown, lo, up) is None


def test_the_python_example_prints_the_command_lines_enclosure(tmp_path: Path) -> None:
    code, _ = _python_example()
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert res.returncode == 0, res.stderr
    lo, up = _cli_eps(tmp_path)
    assert enclosure_problem(res.stdout, lo, up) is None
