"""Error messages echo at most MAX_SHOWN (80) characters of a value (issue 39, attacker finding 2).

An event with ``"count": 1e300`` was echoed as the 301 digits of int(1e300): fmt_value printed an
integral float through str(int()) before its length cap applied.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from certdp.cli import main
from certdp.errors import MAX_SHOWN, fmt_value


@given(st.floats() | st.integers() | st.fractions() | st.text())
@example(1e300)
@example(-1.7976931348623157e308)
@example(10**5000)
def test_every_echo_is_capped(value: object) -> None:
    shown = fmt_value(value)
    assert len(shown) <= MAX_SHOWN, (value, shown)


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x.is_integer()))
def test_integral_floats_read_back_as_the_same_number(value: float) -> None:
    shown = fmt_value(value)
    assert float(shown) == value and len(shown) <= MAX_SHOWN
    if abs(value) < 2**53:
        assert "." not in shown and "e" not in shown  # sigma=2, not 2.0


def test_huge_event_count_is_named_not_echoed(tmp_path: Path) -> None:
    event = {
        "class_name": "SelfComposedDpEvent",
        "count": 1e300,
        "event": {
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": 0.01,
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0},
        },
    }
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(event))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["eps", "--event", str(path), "--delta", "1e-5"])
    line = err.getvalue().strip()
    assert code == 2 and "\n" not in line
    assert "count=1e+300" in line and "0" * 30 not in line, line
    shown = line.split("count=", 1)[1].split(" ", 1)[0]
    assert float(shown) == 1e300 and math.isfinite(float(shown))


def test_long_fraction_and_path_keep_both_ends() -> None:
    shown = fmt_value("/a/" + "x" * 300 + "/file.json")
    assert shown.startswith("/a/") and shown.endswith("file.json") and len(shown) <= MAX_SHOWN
    assert len(fmt_value(Fraction(1, 3**400))) <= MAX_SHOWN
