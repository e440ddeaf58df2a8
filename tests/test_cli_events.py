"""`certdp eps|delta --event FILE` for every kind of dp_accounting event: events of one pair keep
the mechanism path, the others go through certdp.integrations.dp_events.account_event; refusals
are one line with exit 2. The events are built by dp_accounting itself."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.cli import main
from certdp.enclose import workprec
from certdp.integrations.dp_events import account_event

de = pytest.importorskip("dp_accounting.dp_event")
dpa = pytest.importorskip("dp_accounting")


def write(tmp_path: Path, name: str, event: object) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(event.to_named_tuple()))  # type: ignore[attr-defined]
    return str(path)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_swor_event_matches_account_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = de.SelfComposedDpEvent(de.SampledWithoutReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0)), 20)
    path = write(tmp_path, "swor", event)
    rec = run_json(["eps", "--event", path, "--delta", "1e-5", "--relation", "replace_one"], capsys)
    with workprec(128):
        ans = account_event(event, delta="1e-5", relation="replace_one")
    assert rec["status"] == "certified" and rec["sides"] == ans.sides == "two-sided"
    assert rec["relation"] == "replace_one" and rec["via"] == "event"
    lo, up = Fraction(rec["lower"]), Fraction(rec["upper"])
    # the decimals round the proved ends outward; composed, the symmetric upper pair and the
    # extremal dataset's lower pair are a few percent apart (docs/math.md §12.3)
    assert lo <= ans.lower <= ans.upper <= up and up - lo <= Fraction(1, 5) * up
    assert Fraction(rec["epsilon"]) == up  # the sound value is the upper end


def test_mixture_event_brackets_dp_accounting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # sensitivities (0, 1) with probabilities (0.9, 0.1) is the Poisson-sampled Gaussian at q = 0.1
    event = de.SelfComposedDpEvent(de.MixtureOfGaussiansDpEvent(1.5, [0.0, 1.0], [0.9, 0.1]), 10)
    rec = run_json(["eps", "--event", write(tmp_path, "mog", event), "--delta", "1e-6"], capsys)
    assert rec["directions"] == ["remove", "add"] and rec["sides"] == "two-sided"
    # dp_accounting's mixture route takes minutes at a fine discretisation: its Poisson route
    # accounts for the same distribution
    same = de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.1, de.GaussianDpEvent(1.5)), 10)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-5)
    acc.compose(same)
    peer = acc.get_epsilon(1e-6)  # pessimistic: at or above the true eps
    lo, up = float(rec["lower"]), float(rec["upper"])
    assert lo <= peer + 1e-9
    assert peer <= up + 1e-2  # a band: dp_accounting's discretisation error is not proved


def test_non_private_event_answers_infinity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = de.ComposedDpEvent([de.GaussianDpEvent(1.0), de.NonPrivateDpEvent()])
    rec = run_json(["eps", "--event", write(tmp_path, "np", event), "--delta", "1e-5"], capsys)
    assert rec["lower"] == rec["upper"] == rec["epsilon"] == "inf" and rec["status"] == "infinite"
    code, out, _ = run(["eps", "--event", write(tmp_path, "np", event), "--delta", "1e-5"], capsys)
    assert code == 0 and "enclosure [inf, inf]" in out and "NonPrivateDpEvent" in out


def test_one_pair_event_keeps_the_mechanism_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), 100)
    rec = run_json(["eps", "--event", write(tmp_path, "g", event), "--delta", "1e-5"], capsys)
    assert rec["via"] == "pld" and "params" in rec and "status" not in rec


@pytest.mark.parametrize(
    ("name", "event", "relation", "words"),
    [
        ("swr", lambda: de.SampledWithReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0)), None, "replacement"),
        ("ps", lambda: de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), "replace_one", "substitution"),
        ("swor", lambda: de.SampledWithoutReplacementDpEvent(100, 10, de.GaussianDpEvent(1.0)), None, "replace_one"),
    ],
)
def test_refusals_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, event: object, relation: str | None, words: str
) -> None:
    argv = ["eps", "--event", write(tmp_path, name, event()), "--delta", "1e-5"]  # type: ignore[operator]
    if relation:
        argv += ["--relation", relation]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def test_flags_of_one_pair_are_refused_for_a_split_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = de.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.9, 0.1])
    code, _, err = run(["eps", "--event", write(tmp_path, "m", event), "--delta", "1e-5", "--via", "rdp"], capsys)
    assert code == 2 and "--via" in err and "drop the flag" in err


def test_relation_needs_an_event(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--relation", "replace_one"], capsys)
    assert code == 2 and "relation" in err


def test_advice_of_flags_this_path_refuses_is_qualified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Attack review: a tiny noise scale was refused with "use a larger h, or --via rdp", flags the
    event path then refuses; the message now says that the event takes the default rule."""
    event = de.SampledWithReplacementDpEvent(10, 5, de.LaplaceDpEvent(1e-9))
    argv = ["eps", "--event", write(tmp_path, "tiny", event), "--relation", "replace_one", "--delta", "1e-5"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "accounted by certdp's default rule (--h and --via are read only for an event of one pair)" in err
