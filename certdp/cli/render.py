"""Human-readable output of the command records (--json prints the records themselves)."""

from __future__ import annotations


def render(rec: dict[str, object]) -> str:
    if rec["quantity"] in ("audit", "claims", "epsilon_curve", "rdp_curve", "sigma_table", "sweep", "sweep-plan"):
        return str(rec["text"])
    if rec["quantity"] == "claim":
        return str(rec["sentence"])
    if rec["quantity"] == "verify":
        checks = "\n  ".join(_verified_check(c) for c in rec["checks"])  # type: ignore[union-attr]
        who = f"signed by {rec['signed_by']}" if rec["signed_by"] else "unsigned"
        if not rec.get("signer_trusted"):
            who += " (signer NOT checked against a trusted key: pass --pubkey)"
        note = f"  note: {rec['not_rechecked_note']}\n" if rec.get("not_rechecked_note") else ""
        return f"{rec['certificate']}: valid, {who}\n  {checks}\n{note}  {rec['seconds']} s"
    if rec["quantity"] in ("keygen", "sign"):
        # a path with a control character ($'a\x01b') is echoed escaped, never raw to the terminal
        return "\n".join(f"{k}: {_visible(v)}" for k, v in rec.items() if k != "quantity")
    if rec["quantity"] == "calibration" and rec.get("via") == "pld":
        miss = rec["epsilon_lower_at_miss"]
        lines = [
            f"subsampled-gaussian q={rec['q']} steps={rec['steps']} direction={rec['direction']}: "
            f"target ({rec['epsilon']}, {rec['delta']}), PLD lattice bounds",
            f"  sigma = {rec['sigma']}: certified epsilon <= {rec['epsilon_upper']}",
            f"  sigma = {rec['sigma_miss']}: "
            + (
                f"certified epsilon >= {miss}: this sigma is proved NOT ({rec['epsilon']}, {rec['delta']})-DP"
                if miss
                else f"violation not proved ({rec['miss_reason']})"
            ),
        ]
        if rec.get("certificate"):
            lines.append(f"  certificate written to {rec['certificate']}")
        return "\n".join(lines)
    if rec["quantity"] == "calibration" and rec["mechanism"] == "subsampled-gaussian":
        miss = rec["rdp_bound_lower_at_miss"]
        lines = [
            f"subsampled-gaussian q={rec['q']} steps={rec['steps']} direction={rec['direction']}: "
            f"target ({rec['epsilon']}, {rec['delta']})",
            f"  sigma = {rec['sigma']}: certified epsilon <= {rec['epsilon_upper']} (RDP, {len(rec['orders'])} orders)",
            f"  sigma = {rec['sigma_miss']}: "
            + (
                f"the RDP bound is >= {miss}: RDP cannot certify the target here (not a proved violation)"
                if miss
                else f"miss not certified ({rec['miss_reason']})"
            ),
        ]
        lines += [f"  warning: {note}" for note in rec.get("warnings") or ()]  # type: ignore[union-attr]
        if rec.get("certificate"):
            lines.append(f"  certificate written to {rec['certificate']}")
        return "\n".join(lines)
    if rec["quantity"] == "calibration" and rec.get("target") == "eps-delta":
        from certdp.cli.run_allocation import render_calibration_eps_delta

        return render_calibration_eps_delta(rec)
    if "from" in rec or rec["quantity"] == "mu":
        return render_gdp(rec)
    if rec["quantity"] == "calibration":
        return render_calibration(rec)
    if rec["quantity"] in ("tv", "tv_upper", "tv_estimate"):
        return render_tv(rec)
    params = ", ".join(f"{k}={v}" for k, v in rec["params"].items())  # type: ignore[union-attr]
    head = f"{rec['quantity']} of {rec['mechanism']}({params})"
    if "event" in rec:
        # an event of thousands of parts spelled out its whole composition on one line (attack
        # review: 519,760 characters); the text keeps its start, --json keeps every parameter
        if len(params) > 300:
            params = f"{params[:240]} ... ({len(rec['params'])} parameters in all: --json lists them)"  # type: ignore[arg-type]
        head = f"{rec['quantity']} of the dp_accounting event {rec['event']}: {params}"
    if rec.get("mechanism") == "random-allocation":
        pass  # steps (M) and epochs (E) are parameters, shown above
    elif "epochs" in rec:
        # --epochs E: the steps it became are what was composed; never read as a one-step value
        head += f" composed {rec['steps']} times (epochs={rec['epochs']}, steps = {rec.get('steps_rule')})"
    elif rec.get("steps", 1) != 1:
        head += f" composed {rec['steps']} times"
    shown = {"epsilon": ("delta",), "delta": ("eps",)}.get(str(rec["quantity"]), ("order",))
    for key in shown:
        if rec.get(key) is not None:
            head += f", {key}={rec[key]}"
    lines = [
        head,
        f"  enclosure [{rec['lower']}, {rec['upper']}]",
        f"  width {rec['width']}  ({rec['prec_bits']} bits)",
    ]
    if rec["quantity"] in ("epsilon", "delta") and "lower_from" in rec:
        q = rec["quantity"]
        lines.append(f"  sound {q} = {rec[q]}  (via {rec['via']}: {rec['route']})")
        lines.append(f"  lower end: {rec['lower_from']}")
        lines.append(f"  upper end: {rec['upper_from']}")
        for key in ("rdp_bound", "zcdp_bound"):
            if rec.get(key):
                b = rec[key]
                lines.append(  # type: ignore[index]
                    f"  {key.split('_')[0]} conversion bound [{b['lower']}, {b['upper']}] at order {b['order']}"
                    f" (grid {b['grid']}): an upper bound on {q}, not its enclosure"
                )
                if b.get("signed_infimum"):  # type: ignore[union-attr]
                    inf = b["signed_infimum"]  # type: ignore[index]
                    lines.append(f"  signed infimum of the bound [{inf['lower']}, {inf['upper']}]")
    if rec.get("via_note"):
        lines.append(f"  note: {rec['via_note']}")
    for note in rec.get("warnings") or ():  # type: ignore[union-attr]
        lines.append(f"  warning: {note}")
    if rec["quantity"] == "rho":
        lines.append(
            f"  method {rec['method']}" + (f", sup approached at {rec['sup_at']}" if rec.get("sup_at") else "")
        )
    return "\n".join(lines)


def render_calibration(rec: dict[str, object]) -> str:
    lines = [
        f"random-allocation M={rec['steps']} E={rec['epochs']}, target TV <= {rec['tv']} "
        f"(attack accuracy <= {0.5 + float(rec['tv']) / 2:g})",
        f"  sigma = {rec['sigma']}: certified TV <= {rec['tv_upper']}",
    ]
    if rec["tv_lower_at_miss"] is not None:
        lines.append(f"  sigma = {rec['sigma_miss']} misses: certified TV >= {rec['tv_lower_at_miss']}")
    else:
        lines.append(f"  sigma = {rec['sigma_miss']}: miss NOT certified ({rec['miss_reason']})")
    lines.append(f"  numeric exact sigma {rec['exact_sigma']}, closed-form sigma {rec['closed_form_sigma']}")
    lines.append(f"  {rec['seconds']} s")
    if rec.get("certificate"):
        lines.append(f"  certificate written to {rec['certificate']}")
    return "\n".join(lines)


def _visible(value: object) -> str:
    text = str(value)
    return text if text.isprintable() else repr(text)


def _chi2_text(rec: dict[str, object]) -> str:
    if rec.get("chi2_upper") is None:  # past the enclosure range: its log instead
        return f"exp({rec['log1p_chi2_upper']})"
    return str(rec["chi2_upper"])


def render_tv(rec: dict[str, object]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in rec["params"].items())  # type: ignore[union-attr]
    head = f"total variation of random-allocation({params}), method {rec['method']}"
    if rec.get("certified") and rec["quantity"] == "tv":
        return "\n".join([head, f"  certified {rec['tv_lower']} <= TV <= {rec['tv_upper']}  ({rec['seconds']} s)"])
    if rec.get("certified"):
        return "\n".join(
            [
                head,
                f"  certified TV upper bound U(c_E) = {rec['tv_upper']}  (enclosure [{rec['lower']}, {rec['upper']}])",
                f"  membership-attack accuracy <= {rec['accuracy_upper']}, chi^2 c_E <= {_chi2_text(rec)}",
            ]
        )
    extra = f"error estimate {rec['error_estimate']}" if "error_estimate" in rec else f"standard error {rec['stderr']}"
    return "\n".join([head, f"  NOT certified: TV ~ {rec['value']}  ({extra})"])


def render_gdp(rec: dict[str, object]) -> str:
    if "from" in rec:
        given = "rho" if rec["from"] == "zcdp" else "mu"
        head = f"{rec['from']} {given}={rec[given]} -> {rec['to']}"
        for key in ("delta", "eps"):
            if key in rec and rec["quantity"] != key:
                head += f", {key}={rec[key]}"
    else:
        head = f"zCDP rho={rec['rho']} -> GDP"
    lines = [head, f"  {rec['quantity']} in [{rec['lower']}, {rec['upper']}]  ({rec['prec_bits']} bits)"]
    if rec.get("lower_from"):
        lines += [f"  lower end: {rec['lower_from']}", f"  upper end: {rec['upper_from']}"]
    if "sqrt_pi_rho" in rec:
        lo, hi = rec["sqrt_pi_rho"], rec["sqrt_8_rho"]
        lines.append(f"  t_rho in [{rec['t_rho']['lower']}, {rec['t_rho']['upper']}]")  # type: ignore[index]
        lines.append(f"  sqrt(pi rho) <= {lo['upper']}, sqrt(8 rho) >= {hi['lower']}")  # type: ignore[index]
    if "classic_epsilon" in rec:
        lines.append(f"  classic rho + 2 sqrt(rho log(1/delta)) = {rec['classic_epsilon']['upper']}")  # type: ignore[index]
    if "accuracy_upper" in rec:
        lines.append(f"  membership-attack accuracy <= {rec['accuracy_upper']}")
    return "\n".join(lines)


def _verified_check(c: dict[str, object]) -> str:
    """One check of a verify report: what it proves, the recorded number it rechecked (and how),
    and the recorded numbers it did not recheck."""
    ((side, value),) = c["recorded"].items()  # type: ignore[attr-defined]
    lines = [
        f"{c['check']}: {c['quantity']} {c['relation']} {c['threshold']} of {c['of']}",
        f"    rechecked: recorded {side} {value} ({c['recomputed']})",
    ]
    if c.get("not_rechecked"):
        shown = ", ".join(c["not_rechecked"])  # type: ignore[arg-type]
        lines.append(f"    NOT rechecked (informative only, may be false in a valid certificate): {shown}")
    if c.get("means"):
        lines.append(f"    {c['means']}")
    return "\n".join(lines)
