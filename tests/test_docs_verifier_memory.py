"""What the docs say about the verifier's memory and a slow PLD example matches the code
(issue 39, attacker finding 5): docs/certificates.md promised "under 2 GiB" within the limits
(crafted files reached 2.26 GB), and docs/cli.md's σ = 0.05 example had become a PLD answer.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from certdp.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS, parse_memory
from certdp.enclose.work import metered
from certdp.notions.cost import pld_cost, pld_cost_refusal
from certdp.notions.pld_lattice import MAX_CELLS
from certdp.pairs import SubsampledGaussian, compose

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _flat(name: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / name).read_text())


def test_certificates_md_bounds_verify_memory_by_the_default_budget() -> None:
    text = _flat("certificates.md")
    assert "under 2 GiB" not in text
    found = re.search(r"`--max-memory` \(default (\d+) GiB\) and `--max-seconds` \(default (\d+)\)", text)
    assert found is not None
    assert parse_memory(found.group(1) + "GiB") == parse_memory(DEFAULT_MAX_MEMORY)
    assert int(found.group(2)) == DEFAULT_MAX_SECONDS
    peak = re.search(r"reached a peak of (\d+\.\d+) GB", text)
    # the measured peak is above the old promise and within the default budget
    assert peak is not None and 2 * 2**30 < float(peak.group(1)) * 1e9 < parse_memory(DEFAULT_MAX_MEMORY)


def test_cli_md_slow_pld_example_is_within_the_cell_limit() -> None:
    text = _flat("cli.md")
    example = "certdp eps subsampled-gaussian --q 0.01 --sigma 0.05 --steps 100 --delta 1e-5"
    assert example in text and "answers by PLD" in text.split(example, 1)[1][:120]
    assert f"2^{MAX_CELLS.bit_length() - 1}-cell limit" in text
    pair = compose(SubsampledGaussian("0.01", "0.05", "both"), 100)
    cost = pld_cost(pair, Fraction(1, 10**5))
    assert cost is not None and cost.cells <= MAX_CELLS  # within the lattice's limit: not refused
    assert cost.memory < parse_memory(DEFAULT_MAX_MEMORY)  # nor by the default memory budget
    with metered(limit=100_000):  # a small work budget refuses it after the probes, as the text says
        refusal = pld_cost_refusal(pair, Fraction(1, 10**5))
    assert refusal is not None and refusal[1]
