"""Audit of other DP accountants against certified enclosures (``certdp audit``; docs/audit.md).

Layers: ``cases`` (frozen, serializable questions), ``adapters`` (one per peer, imported lazily),
``reference`` (certified enclosures of the same quantities), ``verdict`` (exact, conservative,
UNSOUND, inconclusive), ``run`` (the audit loop), ``claim`` (one reported number), ``report``
(terminal summary and HTML). Nothing here imports a peer or matplotlib until it is used.
"""

from __future__ import annotations

from certdp.audit.cases import Case, case_from_dict, default_suite, load_cases, parse_cases
from certdp.audit.run import AuditResult, Row, run_audit
from certdp.audit.verdict import FLOAT_SLACK, VERDICTS, Judgement, judge

__all__ = [
    "FLOAT_SLACK",
    "VERDICTS",
    "AuditResult",
    "Case",
    "Judgement",
    "Row",
    "case_from_dict",
    "default_suite",
    "judge",
    "load_cases",
    "parse_cases",
    "run_audit",
]
