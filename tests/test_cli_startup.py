"""``certdp --version`` and ``--help`` start without the heavy imports (issue 33): they took 0.6-5 s
when the CLI imported every runner (audit, claims, sweep, SciPy) up front.

Asserted on the modules a real start imports (``python -X importtime -m certdp ...``), never on wall
time: no test depends on the machine's speed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import certdp
from certdp.cli import dispatch, parser

#: Never imported by --version or --help: the runners' heavy dependencies and the peers, and
#: certdp's own computing layers (flint, through the pairs and enclosures, included).
HEAVY = (
    "scipy",
    "numpy",
    "mpmath",
    "flint",
    "rich",
    "dask",
    "distributed",
    "matplotlib",
    "dp_accounting",
    "certdp.audit",
    "certdp.claims",
    "certdp.sweep",
    "certdp.calibrate",
    "certdp.cert",
    "certdp.integrations",
    "certdp.notions",
    "certdp.pairs",
    "certdp.enclose",
    "certdp.cli.dispatch",
    "certdp.cli.render",
    "certdp.cli.run_notions",
    "certdp.cli.run_sweep",
)


def imported_by(*argv: str) -> set[str]:
    """The modules ``python -m certdp ARGV`` imports (from -X importtime's report on stderr)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "certdp", *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    mods = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "certdp.cli" in mods  # the report was read
    return mods


@pytest.mark.parametrize(
    "argv", [("--version",), ("--help",), ("eps", "--help"), ("calibrate", "subsampled-gaussian", "--help")]
)
def test_version_and_help_skip_the_heavy_imports(argv) -> None:
    mods = imported_by(*argv)
    loaded = sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert loaded == []


def test_a_command_still_imports_what_it_runs() -> None:
    code = (
        "import sys; from certdp.cli import main; main(['gdp', '--rho', '0.5', '--json'], out=lambda s: None); "
        "print('certdp.cli.run_gdp' in sys.modules, 'certdp.audit' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]  # its runner, and not another command's


def test_the_parsers_names_are_the_pairs() -> None:
    from certdp.pairs import DIRECTIONS, MECHANISMS

    assert parser.MECHANISM_NAMES == tuple(MECHANISMS)
    assert set(parser.DIRECTIONS) == set(DIRECTIONS)


def test_every_runner_resolves() -> None:
    for command in (*dispatch.RUNNERS, "eps"):
        assert callable(dispatch.runner_of(command))


def test_the_package_exports_load_on_first_use() -> None:
    code = "import sys, certdp; print(sorted(m for m in ('flint', 'numpy', 'certdp.pairs') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from certdp.notions import epsilon
    from certdp.pairs import Gaussian

    assert certdp.epsilon is epsilon and certdp.Gaussian is Gaussian
    namespace: dict[str, object] = {}
    exec("from certdp import *", namespace)
    assert set(certdp.__all__) <= set(namespace) and set(certdp.__all__) <= set(dir(certdp))
    assert certdp.pairs.Gaussian is Gaussian  # a subpackage, reached as an attribute
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        certdp.nope  # noqa: B018
    with pytest.raises(ImportError):
        from certdp import nope  # noqa: F401
