"""pytest runs the symbolic checks of proofs_checks/ (python -m proofs_checks prints the table).

Each check runs once, in its own test (not at collection time, where every xdist worker would
run all of them); the entry-point test runs the module on a few ids."""

from __future__ import annotations

import subprocess
import sys

import pytest

from proofs_checks import CHECKS, run_one


def test_ids_are_unique_and_statements_present() -> None:
    ids = [c.id for c in CHECKS]
    assert len(ids) == len(set(ids)) and all(c.statement for c in CHECKS)
    assert all(c.method in ("symbolic", "numeric fallback", "symbolic derivative + certified root") for c in CHECKS)
    assert len(CHECKS) >= 35
    assert all(c.where.startswith("docs/math.md §") for c in CHECKS), [c.id for c in CHECKS if not c.where]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_check_passes(check) -> None:
    outcome = run_one(check)
    assert outcome.passed, outcome.error or check.statement


def _module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proofs_checks", *args], capture_output=True, text=True, check=False)


def test_module_entry_point_prints_the_table() -> None:
    ids = ["ct_max", "log_ct_convex"]
    done = _module(*ids)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "2 passed, 0 failed"
    rows = [ln.split()[:2] for ln in lines if ln.split() and ln.split()[0] in ids]
    assert rows == [[i, "PASS"] for i in ids]
    listed = _module("--list")
    assert listed.returncode == 0 and [ln.split()[0] for ln in listed.stdout.splitlines()] == [c.id for c in CHECKS]
    for bad, says in (
        (["no_such_id"], "id=no_such_id is not a registered check"),
        (["--all"], "--all is not an option"),
    ):
        done = _module(*bad)
        assert done.returncode == 2 and says in done.stderr and done.stdout == ""


def test_wrong_variants_fail() -> None:
    """Three identities with a deliberately wrong claimed value: each check must say False."""
    import sympy as sp

    from proofs_checks import information_gap as ig

    t = ig.t
    assert ig.example23_holds() and not ig.example23_holds(d2_a=sp.Rational(265, 87))
    assert ig.ggauss_chi_holds() and not ig.ggauss_chi_holds(chi1=sp.Rational(1, 6))
    assert ig.thm31_holds() and not ig.thm31_holds(c3=-(t**2) * (t - 1) / 6)


def test_cited_ids_exist_and_closed_forms_cite_one() -> None:
    """Every ``proofs_checks ``id`` `` citation in certdp names a registered check, and every
    closed form listed here cites at least one."""
    import importlib
    import inspect
    import pathlib
    import re

    ids = {c.id for c in CHECKS}
    root = pathlib.Path(__file__).resolve().parents[1] / "certdp"
    cited: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text()
        for block in re.findall(r"proofs_checks((?:[\s,;]*``[a-z0-9_]+``)+)", text):
            cited.update(re.findall(r"``([a-z0-9_]+)``", block))
    assert cited and cited <= ids, sorted(cited - ids)
    closed_forms = [
        ("certdp.pairs.additive", "Gaussian.cgf_ball"),
        ("certdp.pairs.additive", "Gaussian.rho_closed_form"),
        ("certdp.pairs.additive", "Laplace.cgf_ball"),
        ("certdp.pairs.additive", "Laplace.kl_ball"),
        ("certdp.pairs.discrete", "DiscreteLaplace.cgf_ball"),
        ("certdp.pairs.discrete", "DiscreteGaussian.cgf_ball"),
        ("certdp.pairs.subsampled", "SubsampledGaussian.rho_closed_form"),
        ("certdp.pairs.random_allocation", "RandomAllocation.chi2_one_epoch"),
        ("certdp.notions.tv_closed_form", "u_of_c"),
        ("certdp.notions.tv_closed_form", "chi2_epochs"),
        ("certdp.notions.tv_closed_form", "sigma_closed_form"),
        ("certdp.notions.tv_closed_form", "gdp_limit_mu"),
        ("certdp.notions.tv_closed_form", "tpr_upper"),
        ("certdp.notions.tv_closed_form", "tv_upper_closed_form"),
        ("certdp.notions.tv_closed_form", "epochs_closed_form"),
        ("certdp.notions.tv_closed_form", "pinsker_d2_tv_upper"),
        ("certdp.pairs.mixture", "GaussianMixture.rho_closed_form"),
        ("certdp.notions.expansion", "student_t_quartic"),
        ("certdp.notions.expansion", "ggauss_chi"),
        ("certdp.notions.zcdp_gdp", "zcdp_tv_upper"),
        ("certdp.notions.eps_delta", "epsilon"),
        ("certdp.notions.zcdp_gdp", "mu_from_rho"),
        ("certdp.notions.zcdp_gdp", "rho_from_mu"),
        ("certdp.notions.gdp", "gdp_delta"),
        ("certdp.enclose.special", "mills_ratio"),
    ]
    for module, qualname in closed_forms:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        doc = inspect.getdoc(obj) or ""
        assert re.search(r"proofs_checks[\s,;]*``[a-z0-9_]+``", doc), f"{module}.{qualname} cites no check id"
