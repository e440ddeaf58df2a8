"""Canonical bytes (RFC 8785 JCS), SHA-256 digests and Ed25519 signatures of certificate bodies."""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from certdp.cert.ed25519_points import public_key_problem
from certdp.cert.strict_json import read_capped
from certdp.errors import CertificateInvalid, CertificateMalformed, InvalidArgument, fmt_value
from certdp.fileio import write_atomic


def canonical_bytes(body: dict[str, Any]) -> bytes:
    """RFC 8785 canonical JSON of the body: what the digest and the signature cover.

    Contract: RFC 8785 (JCS) bytes: equal bodies give equal bytes; a body JCS cannot represent (a
    lone surrogate such as "\\ud800", an integer beyond 2^53) raises CertificateMalformed (one line).
    """
    try:
        return rfc8785.dumps(body)
    except (ValueError, TypeError) as exc:  # rfc8785.CanonicalizationError is a ValueError
        raise CertificateMalformed(f"field body: cannot be canonicalized ({exc.__class__.__name__})") from None


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

    Both files are created exclusively (a complete temporary file is hard-linked to its final name,
    which fails if the name exists), so of several concurrent runs on one ``out`` exactly one
    succeeds and the others raise InvalidArgument; the surviving key and .pub always match.

    Contract: never overwrites ``out`` or ``out``.pub; on success both are complete and match
    (the key mode 600 from creation); on failure no file of this run is left behind.
    """
    pub = out.with_name(out.name + ".pub")
    # Early refusals, before a key is generated; the exclusive creation below is what makes them sound.
    # .pub is looked at first: a concurrent run creates out before out.pub, so a run that finds
    # out.pub there also finds out and reports the usual "out exists" (not a confusing .pub message).
    pub_taken = os.path.lexists(pub)
    if os.path.lexists(out):
        raise InvalidArgument(f"out={fmt_value(str(out))} already exists: refusing to overwrite a key")
    if pub_taken:
        raise InvalidArgument(
            f"out={fmt_value(str(out))} has an existing public key {fmt_value(str(pub))}: refusing to overwrite a key"
        )
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    try:
        placed = _create_exclusive(out, pem, 0o600)
        if placed is None:
            raise InvalidArgument(f"out={fmt_value(str(out))} already exists: refusing to overwrite a key")
        try:
            if _create_exclusive(pub, (public_key_b64(key.public_key()) + "\n").encode(), 0o644) is None:
                raise InvalidArgument(
                    f"out={fmt_value(str(out))} has an existing public key {fmt_value(str(pub))}: "
                    "refusing to overwrite a key"
                )
        except BaseException:
            # Remove the key only if the name still holds the file this run created.
            with contextlib.suppress(OSError):
                if os.path.samestat(os.lstat(out), placed):
                    os.unlink(out)
            raise
    except InvalidArgument:
        raise
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte or a lone surrogate in the name
        raise InvalidArgument(f"out={fmt_value(str(out))} cannot be written ({exc.__class__.__name__})") from None
    return out, pub


#: bytes read from a key file: an Ed25519 PEM key is ~120 bytes, a .pub file 45
MAX_KEY_FILE_BYTES = 1 << 16


def _read_key_file(path: Path, name: str) -> bytes:
    return read_capped(path, name, MAX_KEY_FILE_BYTES)


def load_private_key(path: Path, name: str = "key") -> Ed25519PrivateKey:
    """Contract: returns an Ed25519 key or raises InvalidArgument naming the file (unreadable,
    binary, encrypted or another algorithm: always one line, never a traceback)."""
    data = _read_key_file(path, name)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:  # the cryptography package's signal for "this key is encrypted"
        raise InvalidArgument(
            f"{name}={fmt_value(str(path))} is encrypted: certdp needs an unencrypted Ed25519 key"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise InvalidArgument(
            f"{name}={fmt_value(str(path))} is not a readable Ed25519 private key ({exc.__class__.__name__})"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidArgument(f"{name}={fmt_value(str(path))} is not an Ed25519 private key")
    return key


def load_public_key_b64(path: Path) -> str:
    """Base64 raw public key from a .pub file written by :func:`keygen` (or a private key file).

    Contract: returns a valid base64 Ed25519 public key (canonical, not of small order) or raises
    InvalidArgument naming ``pubkey=path`` (unreadable, binary, malformed, small-order or encrypted: one line).
    """
    data = _read_key_file(path, "pubkey")
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise InvalidArgument(f"pubkey={fmt_value(str(path))} is not a text key file (binary content)") from None
    if text.startswith("-----BEGIN"):
        return public_key_b64(load_private_key(path, "pubkey").public_key())
    try:
        raw = base64.b64decode(text, validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise InvalidArgument(f"pubkey={fmt_value(str(path))} is not a base64 Ed25519 public key") from None
    problem = public_key_problem(raw)
    if problem is not None:
        raise InvalidArgument(
            f"pubkey={fmt_value(str(path))} holds the Ed25519 public key {fmt_value(text)}, {problem}: refused"
        )
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

    Contract: returns only if the public key is a canonical encoding of a point not of small order
    (certdp/cert/ed25519_points.py), the signature value is canonical base64 and it verifies over
    canonical_bytes(body).
    """
    try:
        raw = base64.b64decode(signature["public_key"])
        key = Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise CertificateInvalid("field signature/value: the signature does not match the body") from None
    # A small-order key verifies forged signatures of any body (RFC 8032 does not exclude it).
    problem = public_key_problem(raw)
    if problem is not None:
        key_text = fmt_value(signature["public_key"])
        raise CertificateInvalid(f"field signature/public_key: {key_text} is {problem}: the signature proves nothing")
    try:
        sig = base64.b64decode(signature["value"], validate=True)
        # one file per signature: padding bits that decode to the same bytes are refused (attack review)
        if base64.b64encode(sig).decode() != signature["value"]:
            raise ValueError("non-canonical base64")
        key.verify(sig, canonical_bytes(body))
    except (InvalidSignature, ValueError):
        raise CertificateInvalid("field signature/value: the signature does not match the body") from None


def _temp_beside(path: Path, mode: int) -> tuple[int, str]:
    """A new, uniquely named temporary file in path's directory, open for writing, already at ``mode``.

    mkstemp creates it with O_CREAT | O_EXCL and mode 600: a planted file or symlink is never
    opened, and no other user can read it before fchmod sets the final mode (still before any data).
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        else:  # Windows before Python 3.13
            os.chmod(tmp, mode)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``, fsync it and close it (closed on error too)."""
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(directory: Path) -> None:
    """Make a rename or link in ``directory`` durable (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _create_exclusive(path: Path, data: bytes, mode: int) -> os.stat_result | None:
    """Create ``path`` holding all of ``data`` at ``mode``; None (and no file left) if it exists.

    The data go to a temporary file that is then hard-linked to ``path``: link() fails if the name
    exists, so the creation is exclusive and atomic (never a partial file under ``path``). Where
    hard links are not supported, ``path`` is created directly with O_CREAT | O_EXCL instead.
    Returns the stat of the created file.
    """
    fd, tmp = _temp_beside(path, mode)
    try:
        _write_all(fd, data)
        st = os.stat(tmp)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV):
                raise
            return _create_exclusive_direct(path, data, mode)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(path.parent)
    return st


def _create_exclusive_direct(path: Path, data: bytes, mode: int) -> os.stat_result | None:
    """Fallback of _create_exclusive without hard links: exclusive, but a crash may leave a partial file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)  # O_CREAT's mode is filtered by the umask
            st = os.fstat(fh.fileno())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(path)
        raise
    _fsync_dir(path.parent)
    return st


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to a new temporary file beside ``path``, then rename it: never half-written
    (certdp.fileio.write_atomic, the one writer: a temporary file created exclusively with an
    unpredictable name, its mode set before any data, and the target checked right before the
    rename).

    Contract: ``path`` holds either its old content or all of one writer's ``data``, never a part
    or a mix; ``path`` ends with ``mode``; on error no temporary file is left behind, and an
    OSError becomes InvalidArgument ``out=path cannot be written (...)``. An existing ``path`` that
    is not a regular file (a device, a FIFO, a directory) is refused, never replaced.
    """
    write_atomic(path, data, what="out", mode=mode)
