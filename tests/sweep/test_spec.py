"""Sweep specs: grids expand to exactly their Cartesian products, ranges are exact, file names are
unique, and every malformed spec is refused with one line naming the key."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.errors import InvalidArgument, LimitExceeded
from certdp.sweep.spec import parse_spec

JOBS = ("calibrate", "eps", "delta", "verify", "audit", "claims")


def spec(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return p


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q", "sigma", "steps", "delta", "epsilon"]),
            st.lists(st.integers(1, 99), min_size=1, max_size=4, unique=True),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda kv: kv[0],
    )
)
def test_a_block_expands_to_its_cartesian_product(tmp_path_factory, keyvals):
    tmp = tmp_path_factory.mktemp("spec")
    lines = ['job = "eps"', "[grid]", 'mechanism = "gaussian"'] + [f"{k} = {v}" for k, v in keyvals]
    s = parse_spec(spec(tmp, "\n".join(lines)), JOBS)
    want = {
        tuple([("mechanism", "gaussian")] + [(k, str(x)) for (k, _), x in zip(keyvals, combo, strict=True)])
        for combo in itertools.product(*(v for _, v in keyvals))
    }
    assert {c.params for c in s.cells} == want and len(s.cells) == len(want)
    assert len({c.name for c in s.cells}) == len(s.cells)


def test_ranges_are_exact_decimals(tmp_path):
    s = parse_spec(
        spec(
            tmp_path,
            'job = "eps"\n[grid]\nq = {from = 0.1, to = 0.3, step = 0.1}\nsteps = {from = 10, to = 20, num = 3}\n'
            'delta = 1e-5\nmechanism = "subsampled-gaussian"\nsigma = "1"',
        ),
        JOBS,
    )
    qs = sorted({c.get("q") for c in s.cells})
    steps = sorted({c.get("steps") for c in s.cells}, key=Fraction)
    # 0.1 + 0.1 + 0.1 in binary floats is 0.30000000000000004; the range is exact
    assert qs == ["0.1", "0.2", "0.3"] and steps == ["10", "15", "20"]
    assert {c.get("delta") for c in s.cells} == {"1e-05"}  # a float reads back as its shortest decimal
    assert s.cells[0].name.startswith("eps_subsampled-gaussian_q0.1_steps10")


def test_globs_and_names_of_files(tmp_path):
    (tmp_path / "certs").mkdir()
    for n in ("b", "a"):
        (tmp_path / "certs" / f"{n}.json").write_text("{}")
    s = parse_spec(
        spec(tmp_path, 'job = "verify"\nname = "check_{certificate}"\n[grid]\ncertificate = {glob = "certs/*.json"}'),
        JOBS,
        frozenset({"certificate"}),
    )
    assert [c.get("certificate") for c in s.cells] == ["certs/a.json", "certs/b.json"]
    assert [c.name for c in s.cells] == ["check_a", "check_b"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("job = [", "spec="),
        ('job = "eps"', "grid is missing"),
        ('job = "plot"\n[grid]\nq = 1', "job=plot must be one of calibrate"),
        ('job = "eps"\ncolour = 1\n[grid]\nq = 1', "spec key colour is unknown"),
        ('job = "eps"\n[grid]\nq = []', "grid[0].q=[] must not be an empty list"),
        ('job = "eps"\n[grid]\nq = nan', "grid[0].q=nan must be a finite number"),
        ('job = "eps"\n[grid]\nq = {from = 1, to = 0, step = 1}', "grid[0].q.to=0 must be >= from=1"),
        ('job = "eps"\n[grid]\nq = {from = 0, to = 1, step = 0}', "grid[0].q.step=0 must be > 0"),
        ('job = "eps"\n[grid]\nq = {from = 0, to = 1, num = 4}', "1/3, which is not a decimal number"),
        ('job = "eps"\n[grid]\nq = {start = 0}', "must be a list, one value"),
        ('job = "eps"\n[grid]\nq = [[1]]', "grid[0].q[0]=[1] must be a string"),
        ('job = "verify"\n[grid]\ncertificate = {glob = "nope/*.json"}', "matches no file"),
        ('job = "eps"\nname = "x_{sigma}"\n[grid]\nq = 1', "uses {sigma}, which is not a key of grid[0]"),
        ('job = "eps"\nname = "same"\n[grid]\nq = [1, 2]', "gives the file name same.json"),
        ('job = "eps"\nname = "manifest"\n[grid]\nq = 1', "the manifest"),
        ('job = "eps"\n[grid]\nmax-seconds = 1\nmax_seconds = 2', "given twice"),
    ],
)
def test_malformed_specs_are_refused_naming_the_key(tmp_path, text, message):
    with pytest.raises(InvalidArgument) as err:
        parse_spec(spec(tmp_path, text), JOBS)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_limits(tmp_path):
    with pytest.raises(LimitExceeded, match="more than 1000"):
        parse_spec(spec(tmp_path, 'job = "eps"\n[grid]\nq = {from = 0, to = 1, step = 0.0001}'), JOBS)
    grid = "\n".join(f"k{i} = {list(range(10))}" for i in range(5))
    with pytest.raises(LimitExceeded, match="100000 cells"):
        parse_spec(spec(tmp_path, f'job = "eps"\n[grid]\n{grid}'), JOBS)
