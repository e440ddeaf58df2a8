"""The one file reader of certdp: capped, regular files only.

Every file certdp reads (certificates, keys, events, case and claim files, sweep specs, sweep
manifests and outputs) goes through :func:`read_capped`. It opens without blocking (a FIFO with
no writer does not hang), refuses anything that is not a regular file (a directory, /dev/zero, a
FIFO, a socket) and kernel pseudo-files (/proc, /sys: they report size 0 and never end or change
under the reader), refuses a file whose size is above the cap before reading it, and never reads
more than the cap plus one byte. Every refusal is one line naming the flag and the path, an
InvalidArgument (exit 2; LimitExceeded for a file over the cap).

It imports nothing of certdp but the error tree: the certificate verifier uses it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from certdp.errors import InvalidArgument, LimitExceeded, fmt_value

#: roots of kernel pseudo-file systems: their "regular" files report size 0 and are generated on read
PSEUDO_ROOTS = ("/proc/", "/sys/")


def _pseudo(path: str | Path) -> bool:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return any(real.startswith(root) for root in PSEUDO_ROOTS)


def read_capped(path: str | Path, what: str, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Contract: returns the whole file when it is a regular file (not under /proc or /sys)
    of at most ``limit`` bytes; otherwise raises, before reading more than ``limit`` + 1 bytes,
    LimitExceeded (``what=path is larger than LIMIT bytes``) or InvalidArgument (``what=path is
    a directory`` / ``is not a regular file`` / ``cannot be read (...)``): one line, never a
    block on a FIFO, never an unbounded read. With ``follow_links=False`` a symbolic link is
    refused too (InvalidArgument: cannot be read).
    """
    name = f"{what}={fmt_value(str(path))}"
    if isinstance(path, str) and not path.strip():
        raise InvalidArgument(f"{what}='' must be a file path")
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags if follow_links else flags | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc.__class__.__name__
        raise InvalidArgument(f"{name} cannot be read ({reason})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InvalidArgument(f"{name} is a directory, not a regular file")
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgument(f"{name} is not a regular file (a device, FIFO or socket is never read)")
        if _pseudo(path):
            raise InvalidArgument(f"{name} is a kernel pseudo-file (/proc, /sys), not a regular file")
        if st.st_size > limit:
            raise LimitExceeded(f"{name} is larger than the limit of {limit} bytes")
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(limit + 1 - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise InvalidArgument(f"{name} cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise LimitExceeded(f"{name} is larger than the limit of {limit} bytes")
    return data


def read_text(path: str | Path, what: str, limit: int) -> str:
    """Contract: read_capped(path, what, limit) decoded as UTF-8; InvalidArgument ``what=path is
    not UTF-8 text`` otherwise."""
    data = read_capped(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgument(f"{what}={fmt_value(str(path))} is not UTF-8 text") from None
