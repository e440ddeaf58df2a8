"""Claim files: validation with one-line errors, and what a printed number stands for."""

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from certdp.claims.model import parse_claims
from certdp.claims.rounding import printed_interval
from certdp.errors import InvalidArgument

HEADER = '[paper]\nid = "p"\ntitle = "t"\nauthors = "a"\nurl = "u"\n'
OK = (
    'id = "c"\nwhere = "w"\nprinted = "1.5"\nstatement = "s"\nkind = "value"\n'
    'quantity = "sigma_closed_form"\nparams = { steps = 100, epochs = 10, lam = "0.1" }\n'
)


def _parse(body: str):
    return parse_claims(HEADER + "[[claim]]\n" + body, "f.toml")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda b: b.replace('kind = "value"', 'kind = "guess"'), "kind=guess must be one of"),
        (
            lambda b: b.replace('quantity = "sigma_closed_form"', 'quantity = "os.system"'),
            "is not a registered quantity",
        ),
        (lambda b: b.replace("steps = 100, ", "steps = 100, bogus = 1, "), "has no parameter bogus"),
        (lambda b: b.replace("steps = 100, ", ""), "needs the parameter steps"),
        (lambda b: b + 'rounding = "sideways"\n', "rounding=sideways must be one of"),
        (lambda b: b + 'colour = "red"\n', "field colour does not apply to a value claim"),
        (lambda b: b + 'op = "<="\n', "field op does not apply to a value claim"),
        (lambda b: b + "value = 1.50\n", "must be written as a string"),
        (lambda b: b.replace('printed = "1.5"', 'printed = "1e-30000000"'), "must be a number between"),
        (lambda b: b.replace('printed = "1.5"', 'printed = "0,5"'), "is not a decimal number"),
        (lambda b: b.replace('printed = "1.5"', 'printed = "1..2..3"'), "exactly one separator"),
        (lambda b: b.replace('printed = "1.5"', 'printed = "14%–15"'), "percentage range"),
        (lambda b: b.replace('where = "w"', 'where = "w\\nTraceback"'), "control characters"),
        (lambda b: b.replace('printed = "1.5"', 'printed = "about one"'), "is not a decimal number"),
        (lambda b: b.replace("steps = 100", 'steps = "$m"'), "$m is not bound"),
        (lambda b: b + 'aggregate = "min"\n', "aggregate and over go together"),
        (lambda b: b + "one_sided = true\n", "field one_sided does not apply to a value claim"),
        (lambda b: b + 'quote = "unknown"\n', 'must read "unknown: <why'),
        (lambda b: b + 'quote = "Unknown: "\n', 'must read "unknown: <why'),
        (lambda b: b + 'quote = "unknown:"\n', 'must read "unknown: <why'),
    ],
)
def test_bad_claims_name_the_claim_and_field(edit, message):
    with pytest.raises(InvalidArgument) as exc:
        _parse(edit(OK))
    text = str(exc.value)
    assert message in text and "\n" not in text
    assert "p:c" in text or "f.toml" in text


def test_duplicate_ids_and_missing_paper():
    with pytest.raises(InvalidArgument, match="appears twice"):
        parse_claims(HEADER + "[[claim]]\n" + OK + "[[claim]]\n" + OK, "f.toml")
    with pytest.raises(InvalidArgument, match="needs a \\[paper\\] table"):
        parse_claims("[[claim]]\n" + OK, "f.toml")
    with pytest.raises(InvalidArgument, match="not valid TOML"):
        parse_claims(HEADER + "[[claim", "f.toml")


def test_over_binds_variables_at_every_depth():
    body = OK.replace(
        'params = { steps = 100, epochs = 10, lam = "0.1" }',
        'params = { steps = "$m", epochs = 10, lam = "0.1" }\naggregate = "max"\nover = [{ m = 100 }, { m = 250 }]',
    )
    c = _parse(body)[0]
    assert [r.get("steps") for r in c.over] == ["100", "250"]
    nested = OK.replace('kind = "value"', 'kind = "value"').replace(
        'quantity = "sigma_closed_form"\nparams = { steps = 100, epochs = 10, lam = "0.1" }',
        'quantity = "ra_chi2"\nparams = { steps = "$m", epochs = 10, sigma = { quantity = "sigma_closed_form", '
        'steps = "$m", epochs = 10, lam = "0.1" } }\naggregate = "min"\nover = [{ m = 100 }, { m = 500 }]',
    )
    c = _parse(nested)[0]
    assert [r.get("sigma").get("steps") for r in c.over] == ["100", "500"]  # type: ignore[union-attr]


@given(st.decimals(min_value=Decimal("-1e6"), max_value=Decimal("1e6"), places=6, allow_nan=False))
def test_nearest_interval_is_half_an_ulp_each_side(d):
    text = f"{d:f}"
    iv = printed_interval(text)
    v = Fraction(Decimal(text))
    exp = Decimal(text).as_tuple().exponent
    u = Fraction(10) ** exp
    assert iv.lower == v - u / 2 and iv.upper == v + u / 2 and not (iv.upper_open or iv.lower_open)


def test_other_roundings_percent_range_fraction():
    up = printed_interval("1.426215", "up", Fraction(1, 10**6))
    assert (up.lower, up.upper, up.lower_open) == (Fraction("1.426214"), Fraction("1.426215"), True)
    down = printed_interval("1.253314", "down")
    assert (down.lower, down.upper) == (Fraction("1.253314"), Fraction("1.253315"))
    pct = printed_interval("14.9%")
    assert (pct.lower, pct.upper) == (Fraction("0.1485"), Fraction("0.1495"))
    pct_step = printed_interval("14.9%", step=Fraction(1, 10))  # a step is in the printed unit (points)
    assert (pct_step.lower, pct_step.upper) == (Fraction("0.1485"), Fraction("0.1495"))
    neg = printed_interval("-1–2")
    assert (neg.lower, neg.upper) == (Fraction("-1.5"), Fraction("2.5"))
    rng = printed_interval("0.552–0.557")
    assert (rng.lower, rng.upper) == (Fraction("0.5515"), Fraction("0.5575"))
    prng = printed_interval("13.0%–20.2%")
    assert (prng.lower, prng.upper) == (Fraction("0.1295"), Fraction("0.2025"))
    frac = printed_interval("265/88", "exact")
    assert frac.lower == frac.upper == Fraction(265, 88)
    with pytest.raises(InvalidArgument):
        printed_interval("0.557–0.552")


def test_limits_on_work_a_file_may_ask_for(tmp_path):
    over = ", ".join(f"{{ m = {i} }}" for i in range(201))
    body = OK.replace("steps = 100", 'steps = "$m"') + f'aggregate = "max"\nover = [{over}]\n'
    with pytest.raises(InvalidArgument, match="at most 200 settings"):
        _parse(body)
    deep = '"1"'
    for _ in range(12):
        deep = f'{{ quantity = "ratio", num = {deep}, den = "1" }}'
    rel = 'id = "r"\nwhere = "w"\nprinted = "-"\nstatement = "s"\nkind = "relation"\nop = "<"\nright = "1"\n'
    with pytest.raises(InvalidArgument, match="nest deeper"):
        _parse(rel + f"left = {deep}\n")
    from certdp.claims.model import load_claims

    with pytest.raises(InvalidArgument, match="not a regular file"):
        load_claims("/dev/zero")
    with pytest.raises(InvalidArgument, match="not a regular file"):
        load_claims(tmp_path)
