"""certdp curve eps|rdp, certdp table sigma and certdp eps --event: soundness against independent
references (mpmath at 50 digits), the files they write, and their refusals."""

import csv
import io
import itertools
import json
import logging
import sys
import warnings
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from certdp.audit.adapters import Adapter
from certdp.cli import main
from certdp.enclose import workprec
from certdp.errors import InvalidArgument, LimitExceeded
from certdp.integrations import curves
from certdp.notions.pld import pld_bounds
from certdp.pairs import Laplace, SubsampledGaussian, compose

H = "1/256"  # a coarse lattice: fast, and the bounds hold at any spacing


def run(argv):
    out = []
    code = main(argv, out=out.append)
    return code, (json.loads(out[0]) if out and "--json" in argv else (out[0] if out else ""))


def gaussian_eps(mu, delta):
    """The exact epsilon(delta) of the Gaussian mechanism with mu = sqrt(n)/sigma (mpmath, 50
    digits): delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) decreases in eps."""
    with mp.workdps(50):
        mu, delta = mp.mpf(mu), mp.mpf(delta)

        def d(eps):
            return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu) - delta

        lo, hi = mp.mpf(0), mp.mpf(1)
        while d(hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(200):  # bisection: d(lo) > 0 >= d(hi); 2^-200 is far below the bounds' width
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
        return hi


@pytest.mark.parametrize(("sigma", "steps"), [("1.1", [1, 4])])
def test_eps_curve_encloses_the_exact_gaussian_epsilon(sigma, steps):
    # q = 1: the subsampled Gaussian is the Gaussian mechanism, whose epsilon(delta) is known exactly
    points = curves.eps_curve(1, sigma, steps, "1e-5", h=Fraction(1, 256))
    for p in points:
        ref = gaussian_eps(mp.sqrt(p.steps) / mp.mpf(sigma), mp.mpf("1e-5"))
        with mp.workdps(50):
            assert mp.mpf(p.enclosure.lower.numerator) / p.enclosure.lower.denominator <= ref
            assert ref <= mp.mpf(p.enclosure.upper.numerator) / p.enclosure.upper.denominator
        assert p.enclosure.width <= p.enclosure.upper * Fraction(1, 100)  # tight even at h = 2^-8


def laplace_rdp(alpha, b):
    with mp.workdps(50):
        a, b = mp.mpf(alpha.numerator) / alpha.denominator, mp.mpf(b)
        inner = a / (2 * a - 1) * mp.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * mp.exp(-a / b)
        return mp.log(inner) / (a - 1)


def test_rdp_curve_against_the_laplace_closed_form():
    orders = curves.orders_range("1.05..64:6")
    curve = curves.rdp_curve(Laplace(scale=2), orders)
    assert curve.rho is not None and curve.rho_error == ""
    for p in curve.points:
        ref = laplace_rdp(p.order, 2)
        with mp.workdps(50):
            assert mp.mpf(p.rdp.lower.numerator) / p.rdp.lower.denominator <= ref
            assert ref <= mp.mpf(p.rdp.upper.numerator) / p.rdp.upper.denominator
        assert p.gap.lower >= -Fraction(1, 10**30)  # Gamma >= 0 by the definition of rho
        # the gap and the line agree with the curve: rho alpha - D_alpha = Gamma(t)/t
        t = p.order - 1
        assert p.zcdp.lower - p.rdp.upper <= p.gap.upper / t
        assert p.gap.lower / t <= p.zcdp.upper - p.rdp.lower
        # rho is a sup: the line is never below the curve
        assert p.zcdp.upper >= p.rdp.lower


@given(st.integers(1, 10_000), st.integers(0, 10_000), st.integers(1, 500))
def test_steps_range_is_increasing_and_ends_at_b(a, extra, k):
    b = a + extra
    if (b - a) // k + 1 > curves.MAX_POINTS:
        with pytest.raises(LimitExceeded, match="add a stride"):
            curves.steps_range(f"{a}..{b}:{k}", 10**5)
        return
    values = curves.steps_range(f"{a}..{b}:{k}", 10**5)
    assert values[0] == a and values[-1] == b
    assert all(x < y for x, y in itertools.pairwise(values))
    assert all(y - x <= k for x, y in itertools.pairwise(values))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("5..1", "A <= B"),
        ("1..", "A..B"),
        ("0..10", "steps=0 must be >= 1"),
        ("1..10:0", "stride=0 must be >= 1"),
        ("1..1000", "more than 200"),
        ("1.5", "steps=1.5 must be an integer"),
        ("", "at least one"),
        ("1..200000:1000", "exceeds 100000"),
    ],
)
def test_steps_range_refusals(text, needle):
    with pytest.raises(InvalidArgument, match=needle):
        curves.steps_range(text, 10**5)


def test_orders_range():
    values = curves.orders_range("1.01..256:12")
    assert values[0] == Fraction(101, 100) and values[-1] == 256 and len(values) == 12
    assert curves.orders_range("3,2, 2") == [2, 3]
    for bad, needle in (("1..4", "orders=1 must be > 1"), ("4..2", "A < B"), ("2..4:500", "more than 200")):
        with pytest.raises(InvalidArgument, match=needle):
            curves.orders_range(bad)


def test_curve_eps_cli_writes_csv_png_and_json(tmp_path):
    csv_path, png_path = tmp_path / "eps.csv", tmp_path / "eps.png"
    argv = ["curve", "eps", "subsampled-gaussian", "--q", "0.5", "--sigma", "1.5", "--steps", "1..3:2"]
    argv += ["--delta", "1e-5", "--h", H, "--csv", str(csv_path), "--png", str(png_path), "--json"]
    argv += ["--compare", "dp_accounting"]
    code, rec = run(argv)
    assert code == 0 and rec["quantity"] == "epsilon_curve" and rec["via"] == "pld"
    assert [p["steps"] for p in rec["points"]] == [1, 3]
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert [r["steps"] for r in rows] == ["1", "3"]
    pair = compose(SubsampledGaussian(q="0.5", sigma="1.5"), 3)
    with workprec(128):
        ref = pld_bounds(pair, delta=Fraction(1, 10**5), h=Fraction(1, 256)).enclosure
    assert Fraction(rows[1]["epsilon_lower"]) <= ref.lower and ref.upper <= Fraction(rows[1]["epsilon_upper"])
    assert Fraction(rec["points"][1]["upper"]) >= ref.upper
    # dp_accounting's pessimistic PLD is a guarantee: it must not lie below the proved violation
    assert float(rows[1]["dp_accounting:pld"]) >= float(ref.lower)
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # issue 33: dp_accounting logs warnings at every step count; they are counted, not printed
    connect_dots = [m for m in rec["peer_warnings"] if m.startswith("dp_accounting: Connect-the-Dots implementation")]
    assert len(connect_dots) == 1 and rec["peer_warnings"][connect_dots[0]] >= 2


class LeakyPeer(Adapter):
    """A peer that says things in every way a real one can: warnings, absl and root log records
    and stderr lines, inside and outside its guarded calls, and a warning when it loads."""

    name = package = "leaky"

    def __init__(self):
        warnings.warn("loaded with a deprecated option", DeprecationWarning, stacklevel=1)

    def evaluate(self, case):
        warnings.warn("outside the call", RuntimeWarning, stacklevel=1)
        logging.getLogger("absl").warning("absl record for q=%s", "0.5")
        print("50%|#####     | progress", file=sys.stderr)

        def eps():
            warnings.warn("inside the call", RuntimeWarning, stacklevel=1)
            logging.getLogger("leaky").warning("root record")
            return 1.0 + case.steps

        return [self.value("rdp", "eps-rdp", eps)]


def test_curve_eps_compare_summarises_peer_warnings_in_one_line(monkeypatch, capfd):
    import certdp.audit.adapters as adapters

    monkeypatch.setattr(adapters, "load_adapter", lambda name: LeakyPeer())
    argv = ["curve", "eps", "subsampled-gaussian", "--q", "0.5", "--sigma", "1.5", "--steps", "1,2"]
    argv += ["--delta", "1e-5", "--h", H, "--compare", "leaky"]
    for fmt in ([], ["--json"]):
        code, rec = run(argv + fmt)
        err = capfd.readouterr().err
        assert code == 0 and "leaky:rdp" in str(rec)
        # one line on stderr, however often the peer spoke
        assert err.count("\n") == 1 and err.startswith("certdp: warning: peers warned 11 times (6 distinct messages")
    assert rec["peers"] == {"leaky:rdp": [2.0, 3.0]}
    assert rec["peer_warnings"] == {
        "leaky: outside the call": 2,
        "leaky: absl record for q=0.5": 2,
        "leaky: 50%|#####     | progress": 2,
        "leaky: inside the call": 2,
        "leaky: root record": 2,
        "leaky: loaded with a deprecated option": 1,
    }
    # a peer that says nothing: no line, an empty field
    monkeypatch.setattr(LeakyPeer, "__init__", lambda self: None)
    monkeypatch.setattr(LeakyPeer, "evaluate", lambda self, case: [self.value("rdp", "eps-rdp", lambda: 1.0)])
    code, rec = run([*argv, "--json"])
    assert code == 0 and rec["peer_warnings"] == {} and capfd.readouterr().err == ""


def test_curve_rdp_cli_gaussian_has_no_gap(tmp_path):
    code, rec = run(["curve", "rdp", "gaussian", "--sigma", "2", "--orders", "2..8:3", "--steps", "4", "--json"])
    assert code == 0 and rec["quantity"] == "rdp_curve"
    for p in rec["points"]:
        # 4 compositions of N(0, 4) vs N(1, 4): D_alpha = 4 alpha/8 = rho alpha, gap 0
        alpha = Fraction(p["order"])
        assert Fraction(p["rdp"]["lower"]) <= alpha / 2 <= Fraction(p["rdp"]["upper"])
        assert Fraction(p["gap"]["lower"]) <= 0 <= Fraction(p["gap"]["upper"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["curve", "eps", "laplace", "--steps", "1", "--delta", "1e-5"], "subsampled-gaussian, not mechanism=laplace"),
        (["curve", "eps", "subsampled-gaussian", "--q", "0.1", "--sigma", "1", "--steps", "3"], "delta is required"),
        (
            [
                "curve",
                "eps",
                "subsampled-gaussian",
                "--q",
                "0.1",
                "--sigma",
                "1",
                "--steps",
                "3",
                "--delta",
                "1e-5",
                "--orders",
                "2,3",
            ],
            "orders=2,3 is not used by certdp curve eps",
        ),
        (
            ["curve", "eps", "subsampled-gaussian", "--q", "1.5", "--sigma", "1", "--steps", "3", "--delta", "1e-5"],
            "q=1.5 must be <= 1",
        ),
        (
            [
                "curve",
                "eps",
                "subsampled-gaussian",
                "--q",
                "0.1",
                "--sigma",
                "1",
                "--steps",
                "3",
                "--delta",
                "1e-5",
                "--compare",
                "nopeer",
            ],
            "peer='nopeer'",
        ),
        (["curve", "rdp", "gaussian", "--sigma", "1", "--delta", "1e-5"], "delta=1e-5 is not used"),
        (["curve", "rdp", "gaussian", "--sigma", "-1"], "sigma=-1 must be > 0"),
        (
            [
                "curve",
                "eps",
                "subsampled-gaussian",
                "--q",
                "0.1",
                "--sigma",
                "1",
                "--steps",
                "3",
                "--delta",
                "1e-5",
                "--csv",
                "/nonexistent/dir/x.csv",
            ],
            "does not exist",
        ),
        (["table", "sigma", "--q", "0.1,2", "--steps", "10", "--epsilon", "1", "--delta", "1e-5"], "q=2 must be <= 1"),
        (
            ["table", "sigma", "--q", "0.1", "--steps", "10", "--epsilon", "1", "--delta", "1e-5", "--jobs", "9"],
            "jobs=9 must be <= 8",
        ),
        (["table", "sigma", "--q", "0.1", "--steps", "0", "--epsilon", "1", "--delta", "1e-5"], "steps=0 must be >= 1"),
    ],
)
def test_cli_refusals_name_the_parameter(argv, needle, capsys):
    code, _ = run(argv)
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1


def test_sigma_table_rows_hold_their_claims(tmp_path):
    md, out_csv = tmp_path / "t.md", tmp_path / "t.csv"
    argv = ["table", "sigma", "--q", "0.5", "--steps", "2", "--epsilon", "2,3", "--delta", "1e-5", "--step", "0.01"]
    code, rec = run([*argv, "--markdown", str(md), "--csv", str(out_csv), "--json"])
    assert code == 0 and rec["quantity"] == "sigma_table" and len(rec["rows"]) == 2
    text = md.read_text()
    assert text.count("\n| 0.5 | 2 |") == 2 and "certified σ" in text
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    for row in rows:
        sigma, eps = Fraction(row["sigma"]), Fraction(row["epsilon"])
        assert Fraction(row["epsilon_upper"]) <= eps
        assert Fraction(row["sigma_miss"]) == sigma - Fraction(1, 100)
        if row["epsilon_lower_at_miss"]:
            assert Fraction(row["epsilon_lower_at_miss"]) > eps
        # independent recheck of the claim on a fresh lattice
        with workprec(128):
            enc = pld_bounds(compose(SubsampledGaussian(q="0.5", sigma=sigma), 2), delta=Fraction(1, 10**5)).enclosure
        assert enc.lower <= eps  # sigma meets the target, so no proved violation can exceed it


def event_file(tmp_path, event):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return str(path)


SG_EVENT = {
    "class_name": "SelfComposedDpEvent",
    "event": {
        "class_name": "PoissonSampledDpEvent",
        "sampling_probability": "0.5",
        "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1.5"},
    },
    "count": 2,
}


def test_eps_event_equals_the_mechanism_command(tmp_path):
    path = event_file(tmp_path, SG_EVENT)
    code, rec = run(["eps", "--event", path, "--delta", "1e-5", "--h", H, "--json"])
    code2, direct = run(
        [
            "eps",
            "subsampled-gaussian",
            "--q",
            "0.5",
            "--sigma",
            "1.5",
            "--steps",
            "2",
            "--delta",
            "1e-5",
            "--h",
            H,
            "--json",
        ]
    )
    assert code == code2 == 0 and rec["via"] == "pld" and rec["event"] == path
    assert (rec["lower"], rec["upper"]) == (direct["lower"], direct["upper"])
    from certdp.cli.render import render

    assert "dp_accounting event" in render(rec)


def test_eps_event_zcdp_falls_back_to_rdp(tmp_path):
    path = event_file(tmp_path, {"class_name": "ZCDpEvent", "rho": "0.5"})
    code, rec = run(["eps", "--event", path, "--delta", "1e-5", "--json"])
    assert code == 0 and rec["via"] == "rdp" and "loss distribution" in rec["route"]
    assert rec["lower"] == "0" and rec["lower_from"].startswith("trivial")  # the conversion is one-sided
    # rho-zCDP: epsilon <= rho + 2 sqrt(rho log(1/delta)) (the classic conversion; certdp's is tighter)
    assert float(rec["upper"]) <= 0.5 + 2 * (0.5 * 11.512925464970229) ** 0.5


@pytest.mark.parametrize(
    ("argv_extra", "event", "needle"),
    [
        (["gaussian"], SG_EVENT, "are exclusive"),
        (["--sigma", "1"], SG_EVENT, "sigma=1 is not used by certdp eps --event"),
        (
            [],
            {"class_name": "RandomizedResponseDpEvent", "noise_parameter": 0.5, "num_buckets": 2},
            "RandomizedResponseDpEvent",
        ),
        ([], {"class_name": "GaussianDpEvent", "noise_multiplier": -1}, "noise_multiplier=-1"),
    ],
)
def test_eps_event_refusals(tmp_path, argv_extra, event, needle, capsys):
    path = event_file(tmp_path, event)
    code, _ = run(["eps", *argv_extra, "--event", path, "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1


def test_eps_without_mechanism_or_event(capsys):
    code, _ = run(["eps", "--delta", "1e-5"])
    assert code == 2 and "mechanism is required" in capsys.readouterr().err


def test_a_failing_setting_is_a_row_with_its_reason_and_exit_3(tmp_path):
    md = tmp_path / "t.md"
    argv = ["table", "sigma", "--q", "0.5", "--steps", "2", "--epsilon", "1e-13", "--delta", "1e-5"]
    code, rec = run([*argv, "--markdown", str(md), "--json"])
    assert code == 3 and rec["rows"][0]["sigma"] is None and "2^-40" in rec["rows"][0]["miss_reason"]
    assert "failed:" in md.read_text()
