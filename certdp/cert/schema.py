"""The published JSON Schema of certificate format v1 and its validation."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from certdp.errors import CertificateMalformed

FORMAT = "certdp-certificate/2"
#: earlier formats, refused with a reason (v1 recorded both ends of every check, one unproved)
OLD_FORMATS = {
    "certdp-certificate/1": "format certdp-certificate/1 recorded both ends of each result, and certdp verify "
    "proved only one of them: it is no longer accepted; recompute the certificate with certdp calibrate --out "
    "(format certdp-certificate/2 records only proved ends)"
}


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema (certdp/cert/certificate.schema.json).

    Contract: the schema file shipped with the package, parsed.
    """
    return json.loads(resources.files("certdp.cert").joinpath("certificate.schema.json").read_text())


def validate(doc: object) -> None:
    """Raise CertificateMalformed naming the first failing field when ``doc`` breaks the schema.

    Contract: returns only if ``doc`` satisfies the JSON Schema (draft 2020-12).
    """
    from jsonschema import Draft202012Validator

    if isinstance(doc, dict) and doc.get("format") in OLD_FORMATS:
        raise CertificateMalformed(f"field format: {OLD_FORMATS[doc['format']]}")
    errors = sorted(Draft202012Validator(schema()).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(document)"
        # jsonschema's message may quote the offending value whole (up to the 1 MiB file): one short line
        message = first.message if len(first.message) <= 200 else first.message[:200] + "..."
        raise CertificateMalformed(f"field {where}: {message}")
