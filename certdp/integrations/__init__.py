"""Integrations with practitioners' pipelines.

- :mod:`certdp.integrations.opacus`: ``CertifiedAccountant``, an Opacus-compatible accountant whose
  epsilon is certified (PLD lattice bounds, RDP when the lattice accountant cannot take the history).
- :mod:`certdp.integrations.dp_accounting`: ``from_event`` / ``to_event``, Google dp_accounting
  ``DpEvent`` descriptions to certdp pairs and compositions and back, and their JSON form.
- :mod:`certdp.integrations.curves` and :mod:`certdp.integrations.tables`: certified epsilon-vs-steps
  and RDP curves, and tables of certified noise multipliers (CSV, Markdown, PNG with matplotlib).

Layer: these modules sit beside calibration, certificates and the audit adapters; they import the
core, pairs, notions and calibration, never the CLI. No peer package is imported by
``import certdp``: each is imported when the function that needs it is called.
"""
