"""CertifiedAccountant: Opacus's accountant interface, certified epsilon, heterogeneous histories.

Opacus is tested for real where it can run: its accountants load without torch (the audit's
torch-free loader), so its registry, its RDP and PRV accountants and its get_noise_multiplier
drive CertifiedAccountant exactly as PrivacyEngine would. PrivacyEngine itself needs torch
(skipped without it).
"""

import math
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from certdp.enclose import workprec
from certdp.errors import InvalidArgument
from certdp.integrations.opacus import CertifiedAccountant, float_up, register
from certdp.notions import conversion_epsilon as epsilon
from certdp.notions.pld import pld_bounds
from certdp.pairs import SubsampledGaussian, compose


class FakeOptimizer:
    """The two attributes of Opacus's DPOptimizer that the accountant hook reads."""

    def __init__(self, noise_multiplier, accumulated_iterations=1):
        self.noise_multiplier = noise_multiplier
        self.accumulated_iterations = accumulated_iterations


def opacus_accountants():
    from certdp.audit.adapters.opacus import _load

    try:
        return _load()  # (accountants, utils, analysis.rdp, path) of one load: one registry
    except ImportError:
        pytest.skip("opacus is not installed")


def drive(accountants, schedule, sample_rate):
    """Call every accountant's optimizer hook once per step, as PrivacyEngine's DPOptimizer does."""
    hooks = [a.get_optimizer_hook_fn(sample_rate=sample_rate) for a in accountants]
    opt = FakeOptimizer(schedule[0])
    for sigma in schedule:
        opt.noise_multiplier = sigma
        for hook in hooks:
            hook(opt)


def test_import_does_not_load_torch_or_opacus():
    code = (
        "import sys, certdp.integrations.opacus, certdp.integrations.dp_accounting; "
        "print(any(m == 'torch' or m.startswith(('torch.', 'opacus')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_history_merges_runs_like_opacus():
    acc = CertifiedAccountant()
    drive([acc], [1.0] * 3 + [1.2] * 2 + [1.0], 0.01)
    assert acc.history == [(1.0, 0.01, 3), (1.2, 0.01, 2), (1.0, 0.01, 1)]
    assert len(acc) == 6
    assert CertifiedAccountant.mechanism() == "certdp"


def test_hook_multiplies_the_sample_rate_by_accumulated_iterations():
    acc = CertifiedAccountant()
    hook = acc.get_optimizer_hook_fn(sample_rate=0.01)
    hook(FakeOptimizer(1.5, accumulated_iterations=4))
    assert acc.history == [(1.5, 0.04, 1)]


def test_heterogeneous_history_matches_the_composition_and_rdp_fallback():
    h = Fraction(1, 512)  # a coarse lattice keeps the test fast; the bounds hold at any h
    acc = CertifiedAccountant(h=h)
    drive([acc], [0.9] * 10 + [1.3] * 15, 0.05)
    res = acc.certify(1e-5)
    pair = compose([(SubsampledGaussian(q=0.05, sigma=0.9), 10), (SubsampledGaussian(q=0.05, sigma=1.3), 15)])
    with workprec(128):
        ref = pld_bounds(pair, delta=Fraction(1, 10**5), h=h).enclosure
    assert res.via == "pld" and res.steps == 25
    assert (res.enclosure.lower, res.enclosure.upper) == (ref.lower, ref.upper)
    assert acc.get_epsilon(1e-5) == res.enclosure.upper_float() >= float(res.enclosure.upper)
    assert acc.certify(1e-5) is res  # cached: Opacus asks after every epoch
    # RDP: sound as well, and never below the proved PLD violation
    rdp = CertifiedAccountant(via="rdp")
    rdp.history = list(acc.history)
    r = rdp.certify(1e-5)
    assert r.via == "rdp" and r.enclosure.upper == epsilon(pair, Fraction(1, 10**5)).enclosure.upper
    assert r.enclosure.upper >= res.enclosure.lower
    # tightness: the PLD band is narrow even on this coarse lattice
    assert res.enclosure.width <= res.enclosure.upper * Fraction(1, 100)


def test_float_delta_is_read_on_the_safe_side():
    acc = CertifiedAccountant(h=Fraction(1, 256))
    acc.history = [(1.0, 0.1, 3)]
    # 1e-5 as a float is 1.0000000000000000818e-5 > 10^-5: the smaller reading (10^-5) is used
    assert acc.get_epsilon_interval(1e-5) == acc.get_epsilon_interval(Fraction(1, 10**5))


def test_fallback_to_rdp_when_the_lattice_accountant_refuses():
    acc = CertifiedAccountant()
    acc.history = [(2.0, 0.001, 2_000_001)]  # beyond the lattice accountant's step limit
    with pytest.warns(UserWarning, match="RDP answered, not PLD: steps=2000001 exceeds"):
        res = acc.certify(1e-5)
    assert res.via == "rdp" and "RDP answered, not PLD" in res.fallback and res.steps == 2_000_001
    assert res.enclosure.lower == 0 and res.enclosure.upper > 0


def test_a_plain_gaussian_history_is_answered_in_closed_form():
    # q = 1 steps are plain Gaussians: the one rule answers them exactly (Balle and Wang 2018)
    from tests.refs import contains, gaussian_eps

    acc = CertifiedAccountant()
    acc.history = [(2.0, 1.0, 3)]  # mu^2 = 3/4
    res = acc.certify(Fraction(1, 10**5))
    assert res.via == "exact" and res.fallback == ""
    assert res.enclosure.width < Fraction(1, 10**12)
    assert contains(res.enclosure, gaussian_eps(Fraction(3, 4), "1e-5"))


def test_empty_history_is_exactly_zero():
    acc = CertifiedAccountant()
    assert acc.get_epsilon(1e-5) == 0.0
    assert acc.get_epsilon_interval(1e-5).upper == 0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"noise_multiplier": 0.0, "sample_rate": 0.1}, "noise_multiplier=0 must be > 0"),
        ({"noise_multiplier": math.nan, "sample_rate": 0.1}, "noise_multiplier=nan"),
        ({"noise_multiplier": 1.0, "sample_rate": 1.5}, "sample_rate=1.5 must be <= 1"),
        ({"noise_multiplier": 1.0, "sample_rate": -0.1}, "sample_rate=-0.1 must be > 0"),
        ({"noise_multiplier": True, "sample_rate": 0.1}, "noise_multiplier=True must be a number"),
    ],
)
def test_bad_steps_are_refused_before_the_history_changes(kwargs, needle):
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.1)
    with pytest.raises(InvalidArgument, match=needle.replace("(", r"\(")):
        acc.step(**kwargs)
    assert acc.history == [(1.0, 0.1, 1)]


@pytest.mark.parametrize(
    ("history", "needle"),
    [
        ([(1.0, 0.1)], r"history\[0\]"),
        ([(1.0, 0.1, 0)], r"history\[0\].steps=0 must be >= 1"),
        ([(1.0, 0.1, 2.5)], r"history\[0\].steps=2.5 must be an integer"),
        ([(1.0, 0.1, 3), (-1.0, 0.1, 3)], r"history\[1\].noise_multiplier=-1 must be > 0"),
    ],
)
def test_a_malformed_history_names_the_entry(history, needle):
    acc = CertifiedAccountant()
    acc.history = history
    with pytest.raises(InvalidArgument, match=needle):
        acc.get_epsilon(1e-5)


def test_delta_is_validated():
    acc = CertifiedAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.1)
    for bad in (0, 1, -1e-5, math.nan):
        with pytest.raises(InvalidArgument, match="delta="):
            acc.get_epsilon(bad)


def test_state_dict_round_trip_and_refusals():
    acc = CertifiedAccountant(direction="remove")
    drive([acc], [1.0, 1.0, 2.0], 0.05)
    state = acc.state_dict()
    assert state["mechanism"] == "certdp" and state["history"] == acc.history
    state["history"].append((9.0, 0.5, 1))  # a deep copy: the accountant is unchanged
    assert len(acc) == 3
    other = CertifiedAccountant()
    other.load_state_dict(acc.state_dict())
    assert other.history == acc.history and other.direction == "remove"
    with pytest.raises(InvalidArgument, match="mechanism=rdp must be 'certdp'"):
        other.load_state_dict({"history": [], "mechanism": "rdp"})
    with pytest.raises(InvalidArgument, match="no key 'history'"):
        other.load_state_dict({"mechanism": "certdp"})
    with pytest.raises(InvalidArgument, match=r"history\[0\].sample_rate=2 must be <= 1"):
        other.load_state_dict({"history": [(1.0, 2.0, 1)], "mechanism": "certdp"})
    assert other.history == acc.history  # a refused state changes nothing


@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_float_up_is_the_smallest_float_not_below(x):
    for value in (Fraction(x), Fraction(x) + Fraction(1, 10**400), Fraction(x) * Fraction(10**17 + 1, 10**17)):
        f = float_up(value)
        assert Fraction(f) >= value
        assert Fraction(math.nextafter(f, -math.inf)) < value


def test_certified_noise_multiplier_meets_the_target():
    sigma = CertifiedAccountant.get_noise_multiplier(
        target_epsilon=2.0, target_delta=1e-5, sample_rate=0.5, steps=2, step="1e-2"
    )
    acc = CertifiedAccountant()
    acc.history = [(sigma, 0.5, 2)]
    assert acc.get_epsilon(1e-5) <= 2.0
    acc.history = [(sigma - 0.02, 0.5, 2)]  # two lattice steps below: proved to miss
    assert acc.get_epsilon_interval(1e-5).lower > 2
    with pytest.raises(InvalidArgument, match="exactly one of steps and epochs"):
        CertifiedAccountant.get_noise_multiplier(target_epsilon=1, target_delta=1e-5, sample_rate=0.1)


def test_opacus_registry_and_its_accountants_on_the_same_history():
    acc_mod = opacus_accountants()[0]
    register(acc_mod)
    ours = acc_mod.create_accountant("certdp")
    ours.h = Fraction(1, 256)  # coarser than the default: faster, still certified
    assert isinstance(ours, CertifiedAccountant) and isinstance(ours, acc_mod.IAccountant)
    rdp, prv = acc_mod.RDPAccountant(), acc_mod.PRVAccountant()
    drive([ours, rdp, prv], [1.0] * 10 + [1.2] * 10, 0.05)
    assert ours.history == rdp.history  # the same format, merged the same way
    band = ours.get_epsilon_interval(1e-5)
    # Opacus's RDP accountant is a sound upper bound: never below the proved violation, and
    # looser than the PLD band; the PRV accountant's upper estimate lies near the band
    assert rdp.get_epsilon(1e-5) >= float(band.lower)
    assert rdp.get_epsilon(1e-5) > float(band.upper)
    assert abs(prv.get_epsilon(1e-5) / float(band.upper) - 1) < 0.05
    # the state dict moves between Opacus's format and ours
    state = rdp.state_dict()
    state["mechanism"] = "certdp"
    fresh = CertifiedAccountant(h=Fraction(1, 256))
    fresh.load_state_dict(state)
    assert fresh.get_epsilon_interval(1e-5) == band


def test_opacus_get_noise_multiplier_runs_on_the_certified_accountant():
    acc_mod, utils, _, _ = opacus_accountants()
    # Opacus's registry calls the registered factory with no arguments; the RDP variant keeps its
    # bisection (about ten certified evaluations) fast
    acc_mod.register_accountant("certdp-rdp", lambda: CertifiedAccountant(via="rdp"), force=True)
    sigma = utils.get_noise_multiplier(
        target_epsilon=2.0, target_delta=1e-5, sample_rate=0.5, steps=10, accountant="certdp-rdp", epsilon_tolerance=0.2
    )
    acc = CertifiedAccountant(via="rdp")
    acc.history = [(sigma, 0.5, 10)]
    assert 1.8 <= acc.get_epsilon(1e-5) <= 2.0


def test_constructing_the_accountant_registers_it_with_a_loaded_opacus(monkeypatch):
    """Issue 33: ``engine.accountant = CertifiedAccountant()`` then ``make_private_with_epsilon``
    failed inside Opacus with "Unexpected accounting mechanism: certdp" (it looks the accountant
    up by name). Opacus's own lookup, on a fresh registry, now finds it once one is built."""
    acc_mod, utils, _, _ = opacus_accountants()
    with pytest.raises(ValueError, match="Unexpected accounting mechanism: certdp"):
        acc_mod.create_accountant("certdp")  # the trap, before any accountant exists
    monkeypatch.setitem(sys.modules, "opacus.accountants", acc_mod)  # as after importing opacus
    engine_accountant = CertifiedAccountant(via="rdp")  # what the user assigns to engine.accountant
    built = acc_mod.create_accountant(engine_accountant.mechanism())
    assert isinstance(built, CertifiedAccountant) and isinstance(engine_accountant, acc_mod.IAccountant)
    # make_private_with_epsilon's call; the wide tolerance stops Opacus's bisection after its first
    # certified evaluation (sigma = 20), as each one costs about a second on the default lattice
    sigma = utils.get_noise_multiplier(
        target_epsilon=4.0,
        target_delta=1e-5,
        sample_rate=0.5,
        epochs=1,
        accountant=engine_accountant.mechanism(),
        epsilon_tolerance=4.0,
    )
    check = CertifiedAccountant()
    check.history = [(sigma, 0.5, 2)]
    assert sigma == 20 and check.get_epsilon(1e-5) <= 4.0
    # a name the user registered (register() or their own class) is not replaced
    acc_mod.register_accountant("certdp", lambda: "theirs", force=True)
    CertifiedAccountant()
    assert acc_mod.create_accountant("certdp") == "theirs"


def test_privacy_engine_make_private_with_epsilon_on_an_assigned_accountant():
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    engine = opacus.PrivacyEngine()
    engine.accountant = CertifiedAccountant(via="rdp")
    model = torch.nn.Linear(2, 1)
    data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.randn(8, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    _, optimizer, _ = engine.make_private_with_epsilon(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=loader,
        target_epsilon=4.0,
        target_delta=1e-5,
        epochs=1,
        max_grad_norm=1.0,
    )
    assert optimizer.noise_multiplier > 0


def test_privacy_engine_accepts_the_certified_accountant():
    pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")
    register()
    engine = opacus.PrivacyEngine(accountant="certdp")
    assert isinstance(engine.accountant, CertifiedAccountant)
    engine.accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    assert engine.get_epsilon(1e-5) > 0


def test_attack_findings_numpy_delta_rdp_lower_end_and_bad_options():
    np = pytest.importorskip("numpy")
    acc = CertifiedAccountant(h=Fraction(1, 256))
    acc.history = [(1.0, 0.5, 2)]
    assert acc.get_epsilon(np.float64(1e-5)) == acc.get_epsilon(1e-5)  # numpy 2's repr is not a decimal
    # the RDP route bounds epsilon from above only: its lower end is the best proved one, here the
    # exact Gaussian epsilon (sigma = 0.1, q = 1: about 91.8), and the exact value lies inside
    from tests.refs import contains, gaussian_eps

    wide = CertifiedAccountant(via="rdp")
    wide.history = [(0.1, 1.0, 1)]
    res = wide.certify(1e-5)
    assert res.via == "rdp" and res.enclosure.upper > 91.8
    assert contains(res.enclosure, gaussian_eps(100, "1e-5"))
    assert res.enclosure.lower > 91.8  # the closed form's lower end, not 0
    with pytest.raises(InvalidArgument, match=r"state_dict\['certdp'\]=rdp must be a dict"):
        CertifiedAccountant().load_state_dict({"history": [(1.0, 0.5, 1)], "mechanism": "certdp", "certdp": "rdp"})


def test_many_distinct_runs_fall_back_to_rdp_instead_of_hanging():
    acc = CertifiedAccountant()
    acc.history = [(1.0 + i / 100, 0.01, 1) for i in range(17)]  # a noise schedule: 17 distinct runs
    with pytest.warns(UserWarning, match="RDP answered, not PLD: the composition has 17 distinct parts"):
        res = acc.certify(1e-5)  # the switch is announced (issue 33), never silent
    assert res.via == "rdp" and "distinct parts" in res.fallback
