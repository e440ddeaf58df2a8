"""Certificates: format v1 (JSON Schema), canonical bytes, Ed25519 signatures, and the verifier."""
