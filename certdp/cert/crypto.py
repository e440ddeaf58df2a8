"""Canonical bytes (RFC 8785 JCS), SHA-256 digests and Ed25519 signatures of certificate bodies."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from certdp.errors import CertificateInvalid, InvalidArgument


def canonical_bytes(body: dict[str, Any]) -> bytes:
    """RFC 8785 canonical JSON of the body: what the digest and the signature cover.

    Contract: RFC 8785 (JCS) bytes: equal bodies give equal bytes.
    """
    return rfc8785.dumps(body)


def digest_hex(body: dict[str, Any]) -> str:
    """Contract: SHA-256 of canonical_bytes(body), lower-case hex."""
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def public_key_b64(key: Ed25519PublicKey) -> str:
    """Contract: base64 of the 32 raw public-key bytes."""
    return _b64(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def keygen(out: Path) -> tuple[Path, Path]:
    """Write a new Ed25519 private key (PEM, mode 600) to ``out`` and its public half (base64) to ``out``.pub.

    Both files are written atomically; an existing private key is never overwritten.

    Contract: the private key file has mode 600 and is never overwritten.
    """
    if out.exists():
        raise InvalidArgument(f"out={out} already exists: refusing to overwrite a key")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    pub = out.with_name(out.name + ".pub")
    atomic_write(out, pem, mode=0o600)
    atomic_write(pub, (public_key_b64(key.public_key()) + "\n").encode())
    return out, pub


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Contract: returns an Ed25519 key or raises InvalidArgument naming the file."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"key={path} is not a readable Ed25519 private key ({exc.__class__.__name__})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidArgument(f"key={path} is not an Ed25519 private key")
    return key


def load_public_key_b64(path: Path) -> str:
    """Base64 raw public key from a .pub file written by :func:`keygen` (or a private key file).

    Contract: returns a valid base64 Ed25519 public key or raises InvalidArgument.
    """
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise InvalidArgument(f"pubkey={path} cannot be read ({exc.__class__.__name__})") from None
    if text.startswith("-----BEGIN"):
        return public_key_b64(load_private_key(path).public_key())
    try:
        raw = base64.b64decode(text, validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise InvalidArgument(f"pubkey={path} is not a base64 Ed25519 public key") from None
    return text


def sign_body(body: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, str]:
    """Contract: an Ed25519 signature of canonical_bytes(body) with the signer's public key."""
    return {
        "alg": "ed25519",
        "public_key": public_key_b64(key.public_key()),
        "value": _b64(key.sign(canonical_bytes(body))),
    }


def check_signature(body: dict[str, Any], signature: dict[str, str]) -> None:
    """Raise CertificateInvalid unless ``signature`` is a valid Ed25519 signature of the body.

    Contract: returns only if the signature verifies over canonical_bytes(body).
    """
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(signature["public_key"]))
        key.verify(base64.b64decode(signature["value"]), canonical_bytes(body))
    except (InvalidSignature, ValueError):
        raise CertificateInvalid("field signature/value: the signature does not match the body") from None


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it: never half-written.

    Contract: ``path`` holds either its old content or all of ``data``, never a part.
    """
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
