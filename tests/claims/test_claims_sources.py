"""Every claim's source is cited as the source itself prints it.

SOURCES was written from the sources' own text (the arXiv papers' title pages and abstracts, the
publishers' pages of the older papers). Where the text at hand does not name the authors (the
arXiv:2610.09651 and arXiv:2611.01218 texts), or the source is a code repository with no author
list, the field must say "unknown": never a guess.
"""

import re

from certdp.claims import shipped_claims

UNKNOWN = "unknown"
#: paper id -> (title, authors), copied from each source
SOURCES = {
    "2610.02414": (
        "Unifying Privacy Accounting: Information Equivalence and Information Loss",
        "Buxin Su, Qiaoshi Yang, Yiding Su, Chendi Wang",
    ),
    "2610.09651": (
        "Closed-Form Noise Calibration Against Membership Inference for Random-Allocation DP-SGD",
        UNKNOWN,  # the text names no authors (its acknowledgements name contributors, not the byline)
    ),
    "2611.01218": ("Optimal Conversion from Zero-Concentrated to Gaussian Differential Privacy", UNKNOWN),
    "abadi-2016": (
        "Deep Learning with Differential Privacy",
        "Martín Abadi, Andy Chu, Ian Goodfellow, H. Brendan McMahan, Ilya Mironov, Kunal Talwar, Li Zhang",
    ),
    "balle-wang-2018": (
        "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal Denoising",
        "Borja Balle, Yu-Xiang Wang",
    ),
    "bu-2019-gdp": ("Deep Learning with Gaussian Differential Privacy", "Zhiqi Bu, Jinshuo Dong, Qi Long, Weijie Su"),
    "dwork-roth-2014": ("The Algorithmic Foundations of Differential Privacy", "Cynthia Dwork, Aaron Roth"),
    # code repositories: the title is the repository's name; no author list is printed
    "autodp": ("yuxiangw/autodp", UNKNOWN),
    "opacus-mnist": ("pytorch/opacus", UNKNOWN),
    "tf-privacy": ("tensorflow/privacy", UNKNOWN),
}
#: the three papers whose full text the registry was written from: every claim quotes it
FULL_TEXT = ("2610.02414", "2610.09651", "2611.01218")


def test_every_claim_cites_its_source_as_printed():
    claims = shipped_claims()
    assert {c.paper.id for c in claims} == set(SOURCES)
    for c in claims:
        title, authors = SOURCES[c.paper.id]
        assert c.paper.title == title, c.uid
        assert c.paper.authors == authors, c.uid
        assert "et al" not in c.paper.authors and "(" not in c.paper.authors, c.uid  # no guessed or placeholder lists


def test_claims_of_the_full_text_papers_quote_the_page():
    """A claim that names a sentence or a table cell carries it verbatim; a printed decimal must appear in
    its quote (so a quote attached to the wrong sentence fails)."""
    missing = []
    for c in shipped_claims():
        if c.paper.id not in FULL_TEXT or c.kind == "identity":
            continue
        if not c.quote:
            missing.append(c.uid)
            continue
        first = re.split(r"[–\s]", c.printed.strip())[0].rstrip("%")
        if c.kind == "value" and re.fullmatch(r"\d+\.\d+", first) and c.category != "derived":
            assert first in c.quote, (c.uid, c.printed, c.quote)
    assert not missing, missing


def test_labels_name_what_the_paper_numbers():
    """arXiv:2610.09651 has no Proposition 3.2 (its 3.2 is a Remark): no claim may cite it."""
    for c in shipped_claims("2610.09651"):
        assert "Proposition 3.2" not in c.where, c.uid
