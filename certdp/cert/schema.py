"""The published JSON Schema of certificate format v1 and its validation."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from certdp.errors import CertificateInvalid

FORMAT = "certdp-certificate/1"


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema (certdp/cert/certificate.schema.json).

    Contract: the schema file shipped with the package, parsed.
    """
    return json.loads(resources.files("certdp.cert").joinpath("certificate.schema.json").read_text())


def validate(doc: object) -> None:
    """Raise CertificateInvalid naming the first failing field when ``doc`` breaks the schema.

    Contract: returns only if ``doc`` satisfies the JSON Schema (draft 2020-12).
    """
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema()).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(document)"
        raise CertificateInvalid(f"field {where}: {first.message}")
