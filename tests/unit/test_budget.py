"""certdp.budget: a deadline returns before its budget and raises after it, never silently."""

from __future__ import annotations

import time

import pytest

from certdp.budget import Deadline, as_deadline
from certdp.calibrate import calibrate_epsilon
from certdp.errors import BudgetExhausted, CertdpError, InvalidArgument, PrecisionExhausted
from tests.counters import ticking_budget


def test_no_budget_never_raises() -> None:
    d = Deadline()
    d.start -= 10**9  # as if a billion seconds had passed
    d.check("anything")


def test_the_budget_raises_once_spent_and_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ticking_budget(monkeypatch, 1 / 64)  # each read 1/64 s later: no machine load can move the stop
    d = Deadline("0.05")
    for _ in range(3):
        d.check("early")  # 1/64, 2/64, 3/64 < 0.05
    with pytest.raises(BudgetExhausted, match=r"^max_seconds=0\.05 ran out after 0\.0 s while probing") as info:
        d.check("probing")  # 4/64 >= 0.05
    assert clock.reads == 1 + 4 + 1  # the start, four checks, the message
    # not a PrecisionExhausted: refine() and calibrate retry those at a higher precision or a finer grid
    assert isinstance(info.value, CertdpError) and not isinstance(info.value, PrecisionExhausted)


def test_the_product_reads_the_monotonic_clock() -> None:
    """Without a test clock: a fresh hour-long budget returns, and one spent by a sleep raises
    (time.sleep waits at least its argument on the monotonic clock, however loaded the machine)."""
    import certdp.budget

    assert certdp.budget.clock is time.monotonic
    Deadline(3600).check("at once")
    d = Deadline("0.05")
    time.sleep(0.06)
    with pytest.raises(BudgetExhausted, match=r"^max_seconds=0\.05 ran out after"):
        d.check("after the sleep")


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "1e8", "x"])
def test_a_budget_must_be_positive_and_finite(value: object) -> None:
    with pytest.raises(InvalidArgument, match=r"^max_seconds="):
        Deadline(value)  # type: ignore[arg-type]


def test_as_deadline_keeps_a_running_deadline() -> None:
    d = Deadline(5)
    assert as_deadline(d) is d and as_deadline(None).limit is None and as_deadline("2").limit == 2.0


def test_a_spent_budget_stops_a_calibration_before_its_first_probe() -> None:
    d = Deadline("1")
    d.start -= 2
    with pytest.raises(BudgetExhausted, match="probing sigma="):
        calibrate_epsilon("0.01", 10, 1, "1e-5", max_seconds=d)


def test_numeric_tv_checkpoints_fire_inside_an_evaluation_and_change_nothing() -> None:
    from certdp.enclose.checkpoint import checkpoints
    from certdp.notions.tv_numeric import approx_tv_lattice

    calls: list[int] = []
    plain = approx_tv_lattice(10, 2, 1)
    with checkpoints(lambda: calls.append(1)):
        checked = approx_tv_lattice(10, 2, 1)
    assert len(calls) >= 4 and checked.value == plain.value
    spent = Deadline("1")
    spent.start -= 2
    with pytest.raises(BudgetExhausted, match="while inside"), checkpoints(lambda: spent.check("inside")):
        approx_tv_lattice(10, 2, 1)


def test_checkpoints_nest_and_refine_does_not_retry_a_spent_budget() -> None:
    from flint import arb

    from certdp.enclose import refine
    from certdp.enclose.checkpoint import checkpoint, checkpoints

    calls: list[str] = []
    with checkpoints(lambda: calls.append("outer")), checkpoints(lambda: calls.append("inner")):
        checkpoint()
    checkpoint()  # outside every block: nothing
    assert calls == ["outer", "inner"]
    spent = Deadline("1")
    spent.start -= 2
    attempts: list[int] = []

    def compute() -> arb:
        attempts.append(1)
        checkpoint()
        return arb(1)

    # a PrecisionExhausted would make refine try the next precision; a spent budget must not
    with pytest.raises(BudgetExhausted), checkpoints(lambda: spent.check("refining")):
        refine(compute)
    assert attempts == [1]


def test_lattice_compositions_checkpoint_between_products_and_change_nothing() -> None:
    """A PLD composition calls checkpoint() between its products: a budget stops it
    mid-composition, and a check that does not raise changes no bound."""
    from fractions import Fraction

    from certdp.enclose.checkpoint import checkpoints
    from certdp.notions.pld import LatticeBounds, lattice_for
    from certdp.pairs import SubsampledGaussian

    pair = SubsampledGaussian("0.05", "1.2", "remove")

    def eps() -> Fraction:
        return LatticeBounds(pair, 300, lattice_for(pair, Fraction(1, 2**8))).eps("upper", Fraction(1, 10**5))

    plain = eps()
    calls: list[int] = []
    with checkpoints(lambda: calls.append(1)):
        checked = eps()
    assert checked == plain and len(calls) >= 9  # binary powering of 300 = 0b100101100: 9 rounds
    after = len(calls) // 2
    seen: list[int] = []

    def stop_midway() -> None:
        seen.append(1)
        if len(seen) == after:
            raise BudgetExhausted("midway")

    with pytest.raises(BudgetExhausted, match="midway"), checkpoints(stop_midway):
        eps()
    assert len(seen) == after


def test_a_pld_calibration_budget_is_checked_inside_each_composition() -> None:
    """calibrate_pld's budget is checked between the products of a composition, not only between
    probes: a deadline that runs out right after the first probe began stops inside it."""
    from certdp.calibrate.pld import calibrate_pld

    class OutAfterFirstProbe(Deadline):
        def check(self, doing: str) -> None:
            if doing.startswith("composing"):
                raise BudgetExhausted(f"stopped while {doing}")

    with pytest.raises(BudgetExhausted, match="while composing a PLD lattice"):
        calibrate_pld("0.01", 500, 3, "1e-5", max_seconds=OutAfterFirstProbe(60))


def test_eps_max_seconds_stops_a_long_pld_composition(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """certdp eps ... --max-seconds 0.5 on a composition that takes minutes (8 min measured) exits 3
    instead of finishing (the budget is checked between the lattice products; before, it was
    never checked inside the composition and this command ran to the end and printed its result).
    The budget's clock advances 1/4 s per read, so it runs out at the second check, under any load."""
    from certdp.cli import main

    clock = ticking_budget(monkeypatch, 1 / 4)
    argv = ["eps", "subsampled-gaussian", "--q", "0.3", "--sigma", "0.8", "--steps", "20000", "--delta", "1e-5"]
    assert main([*argv, "--h", "1/4096", "--max-seconds", "0.5", "--json"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("certdp: error: max-seconds=0.5 ran out after 0.7 s while computing eps"), err
    assert clock.reads == 1 + 2 + 1  # the start, two checks between products, the message
